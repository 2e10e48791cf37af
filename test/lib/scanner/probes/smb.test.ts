import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { SMB_PORT, smbd } from '../../../../bench/support/daemon-specs'
import { complete, describe, negotiateRequest, parseChallenge, parseNegotiate, sessionSetupRequest } from '../../../../lib/scanner/probes/smb'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

// Debian 12's Samba 4.17.12 (smbd, netbios name VULNSCANTEST, host name vm) answering negotiateRequest()
// and then sessionSetupRequest() over direct TCP.
const NEGOTIATE = Buffer.from('000000fefe534d42400000000000000000000100010000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000410001001103010076756c6e7363616e7465737400000000070000000000800000008000000080007002be92777cdd01000000000000000080004a00d0000000604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa32a3028a0261b246e6f745f646566696e65645f696e5f5246433431373840706c656173655f69676e6f726500000000000001002600000000000100200001002dfe11132a8b1651c532aef7c8e614d0778c4f5916f53e8c4241c4b8d596eac5', 'hex')
const CHALLENGE = Buffer.from('0000010bfe534d4240000000160000c00100010001000000000000000100000000000000000000000000000029f6dd920000000000000000000000000000000000000000090000004800c300a181c03081bda0030a0101a10c060a2b06010401823702020aa281a70481a44e544c4d5353500002000000180018003800000005828ae21cfc2147737be2b300000000000000005400540050000000060100000000000f560055004c004e005300430041004e00540045005300540002001800560055004c004e005300430041004e00540045005300540001001800560055004c004e005300430041004e005400450053005400040000000300040076006d00070008008c17bf92777cdd0100000000', 'hex')

test('requests: framed for direct TCP, SMB2 NEGOTIATE with every dialect to 3.1.1, NTLMSSP in SPNEGO', async (t) => {
  const n = negotiateRequest()
  t.equal(n.readUInt32BE(0), n.length - 4)
  t.equal(n.subarray(4, 8).toString('latin1'), '\xfeSMB')
  t.equal(n.readUInt16LE(4 + 12), 0, 'command NEGOTIATE')
  t.equal(n.readUInt16LE(4 + 64 + 2), 5, 'five dialects')
  t.equal(n.readUInt16LE(4 + 64 + 36 + 8), 0x0311)
  const s = sessionSetupRequest()
  t.equal(s.readUInt32BE(0), s.length - 4)
  t.equal(s.readUInt16LE(4 + 12), 1, 'command SESSION_SETUP')
  t.ok(s.includes('NTLMSSP\0', 0, 'latin1'))
})

test('Samba\'s replies: dialect, signing, names, and the NTLM version only Samba sends', async (t) => {
  t.ok(complete(NEGOTIATE) && complete(CHALLENGE))
  t.notOk(complete(NEGOTIATE.subarray(0, 100)))
  const n = parseNegotiate(NEGOTIATE)
  t.same(n, { dialect: '3.1.1', signingRequired: false, serverGuid: '6e6c7576-6373-6e61-7465-737400000000' })
  const ch = parseChallenge(CHALLENGE)
  t.same(ch, { os: { major: 6, minor: 1, build: 0 }, nbComputer: 'VULNSCANTEST', nbDomain: 'VULNSCANTEST', dnsComputer: 'vm' })
  t.same(describe(n!, ch), {
    service: 'smb',
    product: 'Samba',
    extraInfo: 'dialect 3.1.1; signing enabled, not required; name VULNSCANTEST; domain VULNSCANTEST; dns vm; NTLM OS version 6.1 build 0'
  })
  // A Windows server sends its real build: SMB is named, the product is not guessed.
  const windows = Buffer.from(CHALLENGE)
  const at = windows.indexOf('NTLMSSP\0', 0, 'latin1')
  windows[at + 48] = 10
  windows[at + 49] = 0
  windows.writeUInt16LE(20348, at + 50)
  const w = describe(n!, parseChallenge(windows))
  t.equal(w.product, undefined)
  t.match(w.extraInfo, /NTLM OS version 10\.0 build 20348/)
  t.equal(parseNegotiate(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parseChallenge(NEGOTIATE), null, 'a negotiate response is no challenge')
})

test('Debian\'s Samba: SMB named Samba with no version (SMB2 shows none)', { skip: daemonUnavailable('/usr/sbin/smbd', 'samba') }, async (t) => {
  const d = await startDaemon(smbd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: SMB_PORT, level: 'light' })
  t.match(r, { service: 'smb', product: 'Samba', extraInfo: /^dialect 3\.1\.1; signing enabled, not required; name VULNSCANTEST; domain VULNSCANTEST/ })
  t.equal(r.version, undefined)
  t.same(r.cpe, ['cpe:2.3:a:samba:samba:*:*:*:*:*:*:*:*'])
})
