import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { xtigervnc } from '../../../../bench/support/daemon-specs'
import { parse } from '../../../../lib/scanner/probes/vnc'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('RFB ProtocolVersion: the protocol version only', async (t) => {
  t.same(parse(Buffer.from('RFB 003.008\n')), { service: 'vnc', extraInfo: 'protocol 3.8' })
  t.same(parse(Buffer.from('RFB 003.889\n')), { service: 'vnc', extraInfo: 'protocol 3.889' }, 'Apple Remote Desktop\'s')
  t.equal(parse(Buffer.from('RFB 3.8\n')), null)
  t.equal(parse(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
})

test('TigerVNC from Debian: VNC and its protocol version, no product or version (RFB names neither)', { skip: daemonUnavailable('/usr/bin/Xtigervnc', 'tigervnc-standalone-server') }, async (t) => {
  const d = await startDaemon(xtigervnc())
  t.teardown(d.stop)
  // Not one of VNC's usual ports either: the banner alone names it.
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.same(r, { service: 'vnc', extraInfo: 'protocol 3.8', cpe: [], banner: 'RFB 003.008\\n' })
})
