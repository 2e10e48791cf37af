// Running templates against small loopback servers that speak each protocol's bytes: the project's own templates
// match what they are for and not the safe answer, binding follows the service (not the port number), intrusive
// templates wait for options.intrusive, and a port that cannot be reached is no verdict.
import { test, type Test } from 'tap'
import net from 'node:net'
import path from 'node:path'
import { loadTemplateSet, templatePortRunner } from '../../../lib/templates/index'
import { runTemplates, templatesFor } from '../../../lib/templates/run'
import { runExtractor, jsonPath } from '../../../lib/templates/match'
import { loopbackAddress, freePort } from '../../support/loopback'
import type { LoadedTemplate } from '../../../lib/templates/types'

const SET = loadTemplateSet({ TEMPLATES_DIR: '', TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false }, path.join(__dirname, '..', '..', '..', 'templates'))
const byId = (id: string): LoadedTemplate => SET.templates.find((t) => t.id === id) as LoadedTemplate

/** A server that greets with `greeting` (when given) and answers each chunk with `answer(chunk)`. */
async function server (t: Test, greeting: Buffer | null, answer: (chunk: Buffer, sock: net.Socket) => Buffer | null): Promise<{ host: string, port: number }> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const srv = net.createServer((sock) => {
    sock.on('error', () => {})
    if (greeting !== null) sock.write(greeting)
    sock.on('data', (d) => {
      const out = answer(d, sock)
      if (out !== null) sock.write(out)
    })
  })
  await new Promise<void>((resolve) => srv.listen(port, host, resolve))
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())))
  return { host, port }
}

async function run (where: { host: string, port: number }, service: string, ids: string[], intrusive = false): Promise<Awaited<ReturnType<typeof runTemplates>>> {
  return await runTemplates({ ...where, service, secure: false, intrusive, timeoutMs: 5000 }, ids.map(byId))
}

test('the project\'s own templates all load', async (t) => {
  t.same(SET.refused, [])
  t.ok(SET.templates.length >= 6)
  for (const tp of SET.templates) t.equal(tp.origin, 'project')
})

test('nats-no-auth: an INFO without auth_required is a hit, with it none', async (t) => {
  const open = await server(t, Buffer.from('INFO {"server_id":"x","version":"2.10.7","auth_required":false}\r\n'), () => null)
  const r = await run(open, 'nats', ['nats-no-auth'])
  t.match(r, { concluded: true, ran: 1, hits: [{ id: 'nats-no-auth', severity: 'medium', extracted: ['2.10.7'] }] })
  const closed = await server(t, Buffer.from('INFO {"server_id":"x","version":"2.10.7","auth_required":true}\r\n'), () => null)
  t.match(await run(closed, 'nats', ['nats-no-auth']), { concluded: true, hits: [] })
})

test('epmd-names: a NAMES reply lists the nodes', async (t) => {
  const where = await server(t, null, (d) => d.equals(Buffer.from('00016e', 'hex')) ? Buffer.concat([Buffer.from([0, 0, 0x11, 0x11]), Buffer.from('name rabbit at port 25672\n')]) : null)
  t.match(await run(where, 'epmd', ['epmd-names']), { concluded: true, hits: [{ id: 'epmd-names', extracted: ['rabbit'] }] })
})

test('vnc-no-auth: security type None offered is a hit; VNC authentication only is none', async (t) => {
  const vnc = (types: number[]) => async () => await server(t, Buffer.from('RFB 003.008\n'), (d) => d.toString() === 'RFB 003.008\n' ? Buffer.from([types.length, ...types]) : null)
  t.match(await run(await vnc([2, 1])(), 'vnc', ['vnc-no-auth']), { hits: [{ id: 'vnc-no-auth', severity: 'critical', extracted: ['RFB 003.008'] }] })
  t.match(await run(await vnc([2])(), 'vnc', ['vnc-no-auth']), { concluded: true, hits: [] })
  // A count byte of 1 followed by type 2: the count byte itself is never read as a type.
  t.match(await run(await vnc([2, 16])(), 'vnc', ['vnc-no-auth']), { hits: [] })
})

test('smtp-vrfy-enabled: a 252 answer to VRFY is a hit, a 502 none', async (t) => {
  const smtp = (vrfy: string) => async () => await server(t, Buffer.from('220 mail.test ESMTP\r\n'), (d) => {
    const s = d.toString()
    if (s.startsWith('EHLO')) return Buffer.from('250-mail.test\r\n250 PIPELINING\r\n')
    if (s.startsWith('VRFY')) return Buffer.from(vrfy)
    if (s.startsWith('QUIT')) return Buffer.from('221 bye\r\n')
    return null
  })
  t.match(await run(await smtp('252 2.0.0 root\r\n')(), 'smtp', ['smtp-vrfy-enabled']), { hits: [{ id: 'smtp-vrfy-enabled', extracted: ['252 2.0.0 root'] }] })
  t.match(await run(await smtp('502 5.5.1 VRFY command is disabled\r\n')(), 'smtp', ['smtp-vrfy-enabled']), { concluded: true, hits: [] })
})

test('zookeeper-mntr-open: mntr answered is a hit, refused none', async (t) => {
  const zk = (reply: string) => async () => await server(t, null, (d, sock) => { if (d.toString() === 'mntr') sock.end(reply); return null })
  t.match(await run(await zk('zk_version\t3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12\nzk_avg_latency\t0\n')(), 'zookeeper', ['zookeeper-mntr-open']),
    { hits: [{ id: 'zookeeper-mntr-open', extracted: ['3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c'] }] })
  t.match(await run(await zk('mntr is not executed because it is not in the whitelist.\n')(), 'zookeeper', ['zookeeper-mntr-open']), { concluded: true, hits: [] })
})

test('redis-default-password is intrusive: it runs only when asked for', async (t) => {
  const where = await server(t, null, (d) => d.toString() === 'AUTH foobared\r\n' ? Buffer.from('+OK\r\n') : Buffer.from('-ERR unknown\r\n'))
  t.match(await run(where, 'redis', ['redis-default-password']), { ran: 0, hits: [] }, 'not without options.intrusive')
  t.match(await run(where, 'redis', ['redis-default-password'], true), { ran: 1, hits: [{ id: 'redis-default-password', severity: 'critical' }] })
})

test('binding: the service wherever it is; the declared port only when the service is unknown', async (t) => {
  const nats = [byId('nats-no-auth')]
  t.equal(templatesFor(nats, 14222, 'nats', false).length, 1, 'NATS on another port')
  t.equal(templatesFor(nats, 4222, 'http', false).length, 0, 'the declared port running something else')
  t.equal(templatesFor(nats, 4222, 'unknown', false).length, 1, 'the declared port, service unknown')
  t.equal(templatesFor(nats, 14222, 'unknown', false).length, 0, 'another port, service unknown')
})

test('a port that refuses the connection is no verdict; the engine hook maps hits to exposures', async (t) => {
  const host = loopbackAddress()
  const port = await freePort(host)
  t.match(await run({ host, port }, 'nats', ['nats-no-auth']), { concluded: false, hits: [] })
  const hook = templatePortRunner([byId('nats-no-auth')], { intrusive: false })
  t.ok(hook)
  const open = await server(t, Buffer.from('INFO {"version":"2.9.0"}\r\n'), () => null)
  const r = await hook!({ host: open.host, port: open.port, service: { service: 'nats', cpe: [] }, hostnames: [] })
  t.match(r, { concluded: true, exposures: [{ check: 'nats-no-auth', evidence: /template nats-no-auth; .*extracted: 2\.9\.0/, template: { id: 'nats-no-auth' } }] })
  t.equal(templatePortRunner([], { intrusive: false }), undefined, 'no templates, no hook')
})

test('extractors: json paths, kval, dsl', async (t) => {
  t.same(jsonPath({ a: { b: [{ c: 1 }, { c: 2 }] } }, '.a.b[].c'), [1, 2])
  t.same(jsonPath({ a: { b: [5, 6] } }, '.a.b[1]'), [6])
  const parts = { data: '{"version":"1.2","name":"x"}', request: '' }
  t.same(runExtractor({ type: 'json', part: 'data', internal: false, group: 0, values: ['.version'] }, parts, {}), ['1.2'])
  t.same(runExtractor({ type: 'kval', part: 'data', internal: false, group: 0, values: ['banner'] }, parts, { banner: 'hello' }), ['hello'])
  t.same(runExtractor({ type: 'dsl', part: 'data', internal: false, group: 0, values: ['to_upper(data)'] }, parts, { data: 'abc' }), ['ABC'])
})
