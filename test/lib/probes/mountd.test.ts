// MOUNT v3 over rpcbind against replies recorded from rpcbind and nfs-ganesha (fixtures' .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, exportCall, getportCall, openExports, parseExports, parseGetport } from '../../../lib/scanner/probes/mountd'

const fixture = (name: string): Buffer => readFileSync(path.join(__dirname, '../../fixtures/banners', name))

t.test('calls: GETPORT for mountd v3 TCP, EXPORT', async (t) => {
  const g = getportCall()
  t.equal(g.readUInt32BE(0), 0x80000000 + g.length - 4)
  t.same([g.readUInt32BE(16), g.readUInt32BE(24)], [100000, 3], 'portmapper, GETPORT')
  t.same([g.readUInt32BE(44), g.readUInt32BE(48), g.readUInt32BE(52)], [100005, 3, 6])
  const e = exportCall()
  t.same([e.readUInt32BE(16), e.readUInt32BE(20), e.readUInt32BE(24)], [100005, 3, 5])
})

t.test('rpcbind names mountd\'s port; ganesha exports to *', async (t) => {
  const g = fixture('rpcbind-getport-mountd.bin')
  t.ok(complete(g))
  t.equal(parseGetport(g), 42287)
  const e = fixture('ganesha-4.3-mount-export.bin')
  t.ok(complete(e))
  const list = parseExports(e)
  t.same(list, [{ dir: '/tmp/oldsvc/nfs/export', groups: ['*'] }])
  t.same(openExports(list!), list)
})

t.test('restricted exports and bad replies', async (t) => {
  t.same(openExports([{ dir: '/srv', groups: ['10.0.0.0/24'] }, { dir: '/pub', groups: [] }]), [{ dir: '/pub', groups: [] }])
  t.equal(parseExports(fixture('ganesha-4.3-mount-export.bin').subarray(0, 40)), null)
  t.equal(parseGetport(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
})
