// AJP13 CPING/CPONG against the CPONG recorded from Debian's Tomcat 10 (fixture's .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, cping, isCpong, parse } from '../../../lib/scanner/probes/ajp'

t.test('CPING and Tomcat 10\'s CPONG', async (t) => {
  t.equal(cping.toString('hex'), '123400010a')
  const cpong = readFileSync(path.join(__dirname, '../../fixtures/banners/tomcat10-ajp-cpong.bin'))
  t.ok(complete(cpong) && isCpong(cpong))
  t.same(parse(cpong), { service: 'ajp13', extraInfo: 'CPONG answered to CPING' })
  t.equal(parse(Buffer.from('AB\x00\x02\x04\x00')), null, 'another AJP packet is not a CPONG')
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
})
