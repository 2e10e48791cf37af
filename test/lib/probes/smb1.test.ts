// SMB1 (NT LM 0.12) parsing against bytes recorded from Debian's smbd speaking NT1 only (fixtures' .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, ntlmNegotiateToken, parseNtlmChallenge } from '../../../lib/scanner/probes/smb'
import { describe1, negotiateRequest, parseNegotiate, parseSessionSetup, sessionSetupRequest } from '../../../lib/scanner/probes/smb1'
import { cpesFor } from '../../../lib/cpe/aliases'

const fixture = (name: string): Buffer => readFileSync(path.join(__dirname, '../../fixtures/banners', name))

t.test('requests: SMB1 header, NT LM 0.12 only, session setup with and without extended security', async (t) => {
  const n = negotiateRequest()
  t.equal(n.readUInt32BE(0), n.length - 4)
  t.equal(n.subarray(4, 8).toString('latin1'), '\xffSMB')
  t.equal(n[8], 0x72)
  t.ok(n.includes('\x02NT LM 0.12\0', 0, 'latin1'))
  const ext = sessionSetupRequest(ntlmNegotiateToken())
  t.equal(ext[4 + 32], 12, 'twelve words: a security blob')
  t.ok(ext.includes('NTLMSSP\0', 0, 'latin1'))
  const nul = sessionSetupRequest(null)
  t.equal(nul[4 + 32], 13, 'thirteen words: a null session')
  t.equal(nul.readUInt16LE(4 + 33 + 14), 0, 'no password')
})

t.test('Samba 4.17 speaking NT1 only: named with its version from NativeLanMan', async (t) => {
  const neg = fixture('samba-4.17-nt1-negotiate.bin')
  const setup = fixture('samba-4.17-nt1-session-setup.bin')
  t.ok(complete(neg) && complete(setup))
  const n = parseNegotiate(neg)
  t.same(n, { extendedSecurity: true, signingRequired: false, unicode: true })
  const s = parseSessionSetup(setup)
  t.match(s, { nativeOs: 'Windows 6.1', nativeLanMan: 'Samba 4.17.12-Debian', primaryDomain: 'VULNSCAN' })
  const ch = parseNtlmChallenge(s!.blob!)
  t.match(ch, { os: { major: 6, minor: 1, build: 0 }, nbComputer: 'VULNSCANTEST' })
  const m = describe1(n!, s, 'NTLM OS version 6.1 build 0')
  t.same(m, {
    service: 'smb',
    product: 'Samba',
    version: '4.17.12',
    distro: 'Debian',
    extraInfo: 'SMB1 (NT LM 0.12); Debian; signing enabled, not required; NativeOS Windows 6.1; domain VULNSCAN; NTLM OS version 6.1 build 0'
  })
  t.same(cpesFor(m.product!, m.version), ['cpe:2.3:a:samba:samba:4.17.12:*:*:*:*:*:*:*'])
  t.match(parseSessionSetup(fixture('samba-4.17-nt1-null-session.bin')), { nativeLanMan: 'Samba 4.17.12-Debian' }, 'the null session shows the same')
})

t.test('Samba 3.0 strings: NativeOS Unix, a letter in the version', async (t) => {
  const m = describe1({ extendedSecurity: false, signingRequired: false, unicode: true, domain: 'WORKGROUP', server: 'OLDBOX' },
    { nativeOs: 'Unix', nativeLanMan: 'Samba 3.0.20a-Debian', primaryDomain: 'WORKGROUP' })
  t.match(m, { product: 'Samba', version: '3.0.20a', extraInfo: /NativeOS Unix; domain WORKGROUP; name OLDBOX/ })
  t.same(cpesFor('Samba', m.version), ['cpe:2.3:a:samba:samba:3.0.20a:*:*:*:*:*:*:*'])
  t.equal(describe1({ extendedSecurity: true, signingRequired: true, unicode: true }, { nativeOs: 'Windows 5.1', nativeLanMan: 'Windows 2000 LAN Manager' }).product, undefined, 'Windows is not guessed')
})

t.test('not SMB1', async (t) => {
  t.equal(parseNegotiate(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parseNegotiate(fixture('samba-4.17-nt1-session-setup.bin')), null, 'a session setup answer is no negotiate')
  const none = Buffer.from(fixture('samba-4.17-nt1-negotiate.bin'))
  none.writeUInt16LE(0xffff, 4 + 33)
  t.equal(parseNegotiate(none), null, 'dialect index 0xffff: none chosen')
  t.equal(parseSessionSetup(fixture('samba-4.17-nt1-negotiate.bin')), null)
})
