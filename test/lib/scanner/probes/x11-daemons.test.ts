// Debian's Xvfb with TCP on. Xvfb listens on every address of its network namespace (no option binds one), so each
// run gets a namespace of its own (test/support/netns.ts) and is detected there on a random 127.x address: with
// `-ac` the server accepts anyone (X11 open), with `-auth` a client without the cookie is refused (nothing reported).
import { randomBytes, randomInt } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'tap'
import { detectInNamespace, namespaceUnavailable } from '../../../support/netns'

const XVFB = '/usr/bin/Xvfb'
const skip = namespaceUnavailable() || (!existsSync(XVFB) && process.env.CI !== 'true' ? 'Xvfb is not installed (Debian package xvfb)' : false)

/** An MIT-MAGIC-COOKIE-1 entry in the Xauthority format (family local). */
function authFile (t: { teardown: (fn: () => void) => void }, display: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-xvfb-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const field = (b: Buffer): Buffer => { const l = Buffer.alloc(2); l.writeUInt16BE(b.length); return Buffer.concat([l, b]) }
  const file = path.join(dir, 'Xauthority')
  writeFileSync(file, Buffer.concat([Buffer.from([1, 0]), field(Buffer.from('vulnscan')), field(Buffer.from(String(display))),
    field(Buffer.from('MIT-MAGIC-COOKIE-1')), field(randomBytes(16))]))
  return file
}

async function run (t: { teardown: (fn: () => void) => void }, open: boolean): ReturnType<typeof detectInNamespace> {
  const display = randomInt(1, 10)
  const access = open ? ['-ac'] : ['-auth', authFile(t, display)]
  return await detectInNamespace(t, [XVFB, `:${display}`, '-listen', 'tcp', '-nolisten', 'unix', ...access], 6000 + display)
}

test('Xvfb -ac: X.Org named with its version, X11 open to anyone', { skip }, async (t) => {
  const r = await run(t, true)
  t.match(r.service, { service: 'x11', product: 'X.Org X server', version: /^\d+\.\d+\.\d+$/, extraInfo: /^X11 11\.0; access granted without authorization; 1 screen/ })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-X11-OPEN'])
  t.match(r.exposures[0].evidence, /vendor The X\.Org Foundation release \d+/)
})

test('Xvfb -auth: refused without the cookie, no finding', { skip }, async (t) => {
  const r = await run(t, false)
  t.match(r.service, { service: 'x11', extraInfo: /access refused; "Authorization required/ })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
