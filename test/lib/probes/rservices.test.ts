// The r-services' answers: rsh-redone's rshd and rlogind recorded (fixtures' .source.txt); rexec's `\1` answer
// is written from the protocol (rexecd(8): a byte 1 and the reason), as no Debian 12 package ships an rexecd.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, parse, parseAnswer, request } from '../../../lib/scanner/probes/rservices'

const fixture = (name: string): Buffer => readFileSync(path.join(__dirname, '../../fixtures/banners', name))

t.test('requests: NUL-terminated fields per service', async (t) => {
  t.equal(request(514).toString('latin1'), '0\0vulnscan\0vulnscan\0id\0')
  t.equal(request(513).toString('latin1'), '\0vulnscan\0vulnscan\0vt100/9600\0')
  t.equal(request(512).toString('latin1'), '0\0vulnscan\0\0id\0')
})

t.test('rsh-redone: rshd and rlogind from a privileged port', async (t) => {
  const rsh = fixture('rsh-redone-rshd-auth-failure.bin')
  t.ok(complete(rsh))
  t.same(parseAnswer(rsh), { ok: true, message: 'Authentication failure' })
  t.same(parse(rsh, 514, true), { service: 'rsh', extraInfo: '"Authentication failure"' })
  const rlogin = fixture('rsh-redone-rlogind-password.bin')
  t.ok(complete(rlogin))
  t.same(parse(rlogin, 513, true), { service: 'rlogin', extraInfo: '"Password: "' })
})

t.test('rexec and classic refusals', async (t) => {
  t.same(parse(Buffer.from('\x01Login incorrect.\n'), 512, false), { service: 'rexec', extraInfo: '"Login incorrect."; from an unprivileged port' })
  t.same(parseAnswer(Buffer.from('\x01Permission denied.\n')), { ok: false, message: 'Permission denied.' })
  t.equal(parseAnswer(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parseAnswer(Buffer.from([1, 0xff, 0xfe])), null, 'binary after the byte: not a message')
  t.equal(parseAnswer(Buffer.alloc(0)), null)
})
