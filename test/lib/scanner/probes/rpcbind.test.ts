import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { RPCBIND_PORT, rpcbind } from '../../../../bench/support/daemon-specs'
import { complete, describe, dumpCall, parse, parseDump } from '../../../../lib/scanner/probes/rpcbind'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

// Debian 12's rpcbind 1.2.6 answering dumpCall() over TCP: itself, versions 2 to 4, on TCP and UDP 111.
const DUMP = Buffer.from('80000094766e5331000000010000000000000000000000000000000000000001000186a000000004000000060000006f00000001000186a00000000300000006' +
  '0000006f00000001000186a000000002000000060000006f00000001000186a000000004000000110000006f00000001000186a000000003000000110000006f00000001000186a0' +
  '00000002000000110000006f00000000', 'hex')

test('the DUMP call: one last fragment, PMAPPROC_DUMP of program 100000 version 2', async (t) => {
  const c = dumpCall()
  t.equal(c.readUInt32BE(0), 0x80000000 + c.length - 4)
  t.same([c.readUInt32BE(16), c.readUInt32BE(20), c.readUInt32BE(24)], [100000, 2, 4])
})

test('DUMP replies: the program list; fragments; anything else is not rpcbind', async (t) => {
  t.ok(complete(DUMP))
  t.notOk(complete(DUMP.subarray(0, 40)))
  t.equal(parseDump(DUMP)?.length, 6)
  t.same(parse(DUMP), { service: 'rpcbind', extraInfo: 'programs: portmapper v2-4 tcp/111 udp/111' })
  // The same record split into two fragments, with NFS v3 and v4 and mountd registered.
  const body = DUMP.subarray(4, DUMP.length - 4)
  const more = Buffer.concat([...[[100003, 3, 6, 2049], [100003, 4, 6, 2049], [100005, 3, 17, 20048]].map((m) => {
    const b = Buffer.alloc(20)
    b.writeUInt32BE(1, 0)
    m.forEach((v, i) => b.writeUInt32BE(v, 4 + i * 4))
    return b
  }), Buffer.alloc(4)])
  const frag = (b: Buffer, last: boolean): Buffer => {
    const h = Buffer.alloc(4)
    h.writeUInt32BE((last ? 0x80000000 : 0) + b.length)
    return Buffer.concat([h, b])
  }
  const split = Buffer.concat([frag(body, false), frag(more, true)])
  t.ok(complete(split))
  t.notOk(complete(split.subarray(0, body.length + 4)), 'not complete before the last fragment')
  t.equal(parse(split)?.extraInfo, 'programs: portmapper v2-4 tcp/111 udp/111, nfs v3-4 tcp/2049, mountd v3 udp/20048')
  t.equal(describe([{ program: 100024, version: 1, protocol: 'udp', port: 900 }, { program: 400000, version: 7, protocol: 'tcp', port: 5 }]),
    'status v1 udp/900, program 400000 v7 tcp/5')
  const denied = Buffer.from(DUMP.subarray(0, 32))
  denied.writeUInt32BE(0x80000000 + 28, 0)
  denied.writeUInt32BE(1, 12) // MSG_DENIED
  t.equal(parse(denied), null)
  t.equal(parse(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
})

test('Debian\'s rpcbind on 111: the port mapper and its program list, no product (the wire names none)', { skip: daemonUnavailable('/usr/sbin/rpcbind', 'rpcbind') }, async (t) => {
  const d = await startDaemon(rpcbind())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: RPCBIND_PORT, level: 'light' })
  t.match(r, { service: 'rpcbind', extraInfo: /^programs: portmapper v2-4 tcp\/111/ })
  t.equal(r.product, undefined)
  t.same(r.cpe, [])
})
