// distccd's protocol against the answer recorded from Debian's distccd 3.4 (fixture's .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, jobRequest, parse, parseReply } from '../../../lib/scanner/probes/distcc'
import { cpesFor } from '../../../lib/cpe/aliases'

const reply = readFileSync(path.join(__dirname, '../../fixtures/banners/distccd-3.4-job.bin'))

t.test('the job: DIST 1, five arguments, the one-line source', async (t) => {
  const j = jobRequest().toString('latin1')
  t.equal(j, 'DIST00000001ARGC00000005ARGV00000002ccARGV00000002-cARGV0000000avulnscan.iARGV00000002-oARGV0000000avulnscan.o' +
    'DOTI00000014int vulnscan_probe;\n')
  t.notMatch(j, /;\s*(sh|bash|id|nc)\b|\|/, 'nothing but the compiler runs')
})

t.test('Debian distccd 3.4 answering the job', async (t) => {
  t.ok(complete(reply))
  t.notOk(complete(reply.subarray(0, 100)), 'the object file has not all arrived')
  t.match(parseReply(reply), { protocol: 1, status: 0, stderr: '', whole: true, compiler: 'GCC (Debian 12.2.0-14+deb12u1) 12.2.0' })
  t.ok(parseReply(reply)!.objectBytes > 500)
  t.same(parse(reply), { service: 'distccd', product: 'distccd', extraInfo: 'protocol 1; compiler GCC (Debian 12.2.0-14+deb12u1) 12.2.0' })
  t.same(cpesFor('distccd'), ['cpe:2.3:a:distcc:distcc:*:*:*:*:*:*:*:*'])
})

t.test('a failed compile still shows distccd; other bytes do not', async (t) => {
  const failed = Buffer.from('DONE00000001STAT00000100SERR00000005oops\nSOUT00000000DOTO00000000', 'latin1')
  t.ok(complete(failed))
  t.match(parse(failed), { product: 'distccd', extraInfo: 'protocol 1; compile status 256' })
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
  t.equal(parse(Buffer.from('DONE0000000z')), null)
  t.equal(parse(Buffer.from('DONE00000009')), null, 'no such protocol version')
})
