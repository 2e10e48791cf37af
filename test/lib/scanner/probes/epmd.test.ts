import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { parse } from '../../../../lib/scanner/probes/epmd'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

test('NAMES reply from the local epmd (captured)', async (t) => {
  t.same(parse(fixture('epmd-names.bin')), { service: 'epmd', product: 'Erlang Port Mapper Daemon', extraInfo: 'nodes rabbit:25672' })
})

test('garbage is not epmd', async (t) => {
  t.equal(parse(Buffer.from('HTTP/1.1 200 OK\r\n')), null)
  t.equal(parse(Buffer.from([0, 0, 0x11])), null)
  t.equal(parse(Buffer.from([0, 0, 0x1f, 0x90])), null, 'four bytes alone only on the well-known port')
})
