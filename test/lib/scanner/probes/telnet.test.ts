import { spawn } from 'node:child_process'
import net from 'node:net'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { parse } from '../../../../lib/scanner/probes/telnet'
import { daemonUnavailable } from '../../../support/debian-daemon'
import { loopbackAddress } from '../../../support/loopback'

test('option negotiation says telnet and names the options, never a product', async (t) => {
  t.same(parse(Buffer.from([0xff, 0xfd, 0x18, 0xff, 0xfd, 0x20, 0xff, 0xfb, 0x01])), { service: 'telnet', extraInfo: 'negotiates terminal-type, terminal-speed, echo' })
  t.same(parse(Buffer.from([0xff, 0xfb, 0x25])), { service: 'telnet' })
  t.equal(parse(Buffer.from([0xff, 0x00, 0x01])), null)
  t.equal(parse(Buffer.from('SSH-2.0-x\r\n')), null)
})

test('Debian\'s inetutils telnetd, run per connection as inetd would', { skip: daemonUnavailable('/usr/sbin/telnetd', 'inetutils-telnetd') }, async (t) => {
  const host = loopbackAddress()
  const children = new Set<ReturnType<typeof spawn>>()
  const server = net.createServer((s) => {
    s.on('error', () => {})
    const child = spawn('/usr/sbin/telnetd', [], { stdio: [s, s, 'ignore'] })
    children.add(child)
    child.on('exit', () => { children.delete(child); s.destroy() })
    s.on('close', () => child.kill())
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  t.teardown(() => { for (const c of children) c.kill(); server.close() })
  const r = await detectService({ host, port: (server.address() as net.AddressInfo).port, level: 'light' })
  t.match(r, { service: 'telnet', extraInfo: /terminal-type/ })
  t.equal(r.product, undefined)
})
