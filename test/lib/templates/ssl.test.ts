// The ssl protocol against node:tls servers on loopback with certificates openssl makes for the test: versions and
// cipher suites are forced (a server that refuses them is a miss, not an error), the response carries tlsx's fields
// (expired, self_signed, mismatched, names, serial, fingerprints), the project's ssl templates hit what they are for,
// ssl templates bind to TLS ports only, and what the engine cannot do is refused when the template loads.
import { test, type Test } from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { X509Certificate } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import net from 'node:net'
import tls from 'node:tls'
import { loadTemplateSet } from '../../../lib/templates/index'
import { isRefusal, loadTemplate } from '../../../lib/templates/load'
import { runTemplates, templatesFor } from '../../../lib/templates/run'
import { sslExchange, type SslRequest } from '../../../lib/templates/ssl'
import { OPENSSL, ca, caFiles, csr, expired, sign, valid } from '../../support/test-certificates'
import { loopbackAddress, freePort } from '../../support/loopback'
import type { LoadedTemplate, Refusal } from '../../../lib/templates/types'

const run = promisify(execFile)
const SET = loadTemplateSet({ TEMPLATES_DIR: '', TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false }, path.join(__dirname, '..', '..', '..', 'templates'))
const byId = (id: string): LoadedTemplate => SET.templates.find((t) => t.id === id) as LoadedTemplate
const opts = { origin: 'user' as const, key: null, requireSigned: false }
const HEAD = 'id: t-ssl\ninfo:\n  name: S\n  severity: info\n  tags: ssl\n'

interface Pair { key: string, cert: string }
const made = new Map<string, Promise<Pair>>()

/** A key and certificate for `cn`, CA-signed or self-signed, valid or expired (made once per kind). */
async function certificate (cn: string, dates: readonly [string, string], self: boolean): Promise<Pair> {
  const kind = `${cn} ${dates.join('-')} ${String(self)}`
  let p = made.get(kind)
  if (p === undefined) {
    p = (async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-ssl-'))
      try {
        for (const [name, text] of Object.entries(caFiles())) fs.writeFileSync(path.join(dir, name), text)
        for (const [cmd, args] of [...(self ? [] : ca), ...csr(2048, cn), ...sign(...dates, self)]) await run(cmd, args, { cwd: dir })
        return { key: fs.readFileSync(path.join(dir, 'srv.key'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'srv.pem'), 'utf8') }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })()
    made.set(kind, p)
  }
  return await p
}

/** A TLS server that completes handshakes as `options` allow and then hangs up. */
async function server (t: Test, pair: Pair, options: tls.TlsOptions = {}): Promise<{ host: string, port: number }> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const srv = tls.createServer({ ...pair, ...options }, (s) => {
    s.on('error', () => {})
    s.end()
  })
  srv.on('tlsClientError', () => {})
  await new Promise<void>((resolve) => srv.listen(port, host, resolve))
  t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())))
  return { host, port }
}

function load (t: Test, body: string): LoadedTemplate {
  const r = loadTemplate(HEAD + body, 'x.yaml', opts)
  if (isRefusal(r)) t.fail(`refused: ${r.reason}`)
  return r as LoadedTemplate
}

function refused (body: string): string {
  const r = loadTemplate(HEAD + body, 'x.yaml', opts)
  return isRefusal(r) ? (r as Refusal).reason : 'LOADED'
}

/** The templates on a port that detection found inside TLS. */
async function scan (where: { host: string, port: number }, templates: LoadedTemplate[], service = 'https'): Promise<Awaited<ReturnType<typeof runTemplates>>> {
  return await runTemplates({ ...where, service, secure: true, intrusive: false, timeoutMs: 5000 }, templates)
}

/** The JSON response of one ssl request (undefined on a miss). */
async function response (where: { host: string, port: number }, req: SslRequest): Promise<Record<string, unknown> | undefined> {
  const ac = new AbortController()
  const got = await sslExchange({ ...where, signal: ac.signal, remaining: (cap) => Math.min(cap, 5000) }, req, {})
  if (got === null) throw new Error('no verdict')
  return got === 'miss' ? undefined : JSON.parse(got.data)
}

function fixture (text: string): LoadedTemplate {
  const r = loadTemplate(text, 'fixture.yaml', opts)
  if (isRefusal(r)) throw new Error(`fixture refused: ${r.reason}`)
  return r
}

// Templates of the kinds the TLS transport checks already cover (a project template would report them twice).
const TLS10 = fixture(`id: t-tls10-accepted
info:
  name: TLS 1.0 accepted
  severity: low
  tags: ssl,tls
ssl:
  - address: "{{Host}}:{{Port}}"
    min_version: tls10
    max_version: tls10
    matchers:
      - type: dsl
        dsl: ['tls_version == "tls10"']
    extractors:
      - type: json
        json: ['.cipher']
`)
const CERT = fixture(`id: t-certificate-expired-or-self-signed
info:
  name: Expired or self-signed
  severity: info
  tags: ssl,tls
ssl:
  - matchers:
      - type: dsl
        name: expired
        dsl: ['expired == true']
      - type: dsl
        name: self-signed
        dsl: ['self_signed == true']
    extractors:
      - type: json
        json: ['.subject_cn', '.not_after']
`)

// OpenSSL 3 allows TLS 1.0 only at security level 0, on both sides (the client's default cipher list sets it).
const TLS10_ONLY: tls.TlsOptions = { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }

test('the project\'s ssl templates load and bind to TLS ports only', async (t) => {
  t.same(SET.refused, [])
  for (const id of ['ssl-null-or-anonymous-cipher-accepted', 'ssl-wildcard-certificate']) {
    const tp = byId(id)
    t.ok(tp, id)
    t.same(tp.requests, [])
    t.equal(tp.ssl?.length, 1)
    t.same(tp.services, [], 'an ssl template is for TLS, not for a service')
    t.ok(tp.tags.includes('ssl') && tp.tags.includes('tls'))
  }
  const tls10 = [TLS10]
  t.equal(templatesFor(tls10, 443, 'https', false, true).length, 1, 'https')
  t.equal(templatesFor(tls10, 6697, 'irc', false, true).length, 1, 'any service inside TLS')
  t.equal(templatesFor(tls10, 5061, 'tls', false, true).length, 1, 'TLS with an unknown service inside')
  t.equal(templatesFor(tls10, 25, 'smtp', false, false).length, 0, 'a STARTTLS or plain port')
  t.equal(templatesFor(tls10, 443, 'unknown', false, false).length, 0, 'a port detection found no TLS on')
})

test('versions are forced: a TLS 1.0 template hits a TLS 1.0 server and misses a TLS 1.2-only one', async (t) => {
  const pair = await certificate('old.vulnscan.test', valid, true)
  const old = await server(t, pair, TLS10_ONLY)
  const r = await scan(old, [TLS10])
  t.match(r, { concluded: true, ran: 1, hits: [{ id: 't-tls10-accepted', severity: 'low', matched: ['tls_version == "tls10"'] }] })
  t.match(r.hits[0].extracted[0], /^TLS_\w+_CBC_SHA$/, 'the IANA name of the suite it chose')
  t.match(r.hits[0].evidence, /"tls_version":"tls10"/)
  const modern = await server(t, pair, { minVersion: 'TLSv1.2' })
  t.match(await scan(modern, [TLS10]), { concluded: true, ran: 1, hits: [] }, 'the refused handshake is an answer, not an error')
  // The versions are forced on the wire, not only tested by the matcher: a template that would match any handshake.
  const any = (versions: string): SslRequest => (load(t, `ssl:\n  - address: "{{Host}}:{{Port}}"\n${versions}    matchers:\n      - type: word\n        words: ['"probe_status":true']\n`).ssl as SslRequest[])[0]
  t.equal(await response(modern, any('    max_version: tls11\n')), undefined, 'TLS 1.1 at most to a TLS 1.2 server: a miss')
  t.match(await response(modern, any('    max_version: tls12\n')), { tls_version: 'tls12' }, 'TLS 1.2 at most: TLS 1.2, though the server speaks 1.3')
  t.match(await response(modern, any('')), { tls_version: 'tls13' })
  t.match(await response(old, any('    min_version: sslv3\n')), { tls_version: 'tls10' }, 'from SSLv3 up reaches a TLS 1.0 server')
})

test('expired and self_signed: each reason is named; a valid CA-signed certificate is none', async (t) => {
  const tp = [CERT]
  const self = await scan(await server(t, await certificate('self.vulnscan.test', valid, true)), tp)
  t.match(self, { concluded: true, hits: [{ matched: ['self-signed'], extracted: ['self.vulnscan.test'] }] })
  t.match(self.hits[0].extracted[1], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'not_after as RFC 3339')
  const late = await scan(await server(t, await certificate('late.vulnscan.test', expired, false)), tp)
  t.match(late, { concluded: true, hits: [{ matched: ['expired'], extracted: ['late.vulnscan.test'] }] })
  const both = await scan(await server(t, await certificate('both.vulnscan.test', expired, true)), tp)
  t.match(both, { hits: [{ matched: ['expired', 'self-signed'] }] })
  t.match(await scan(await server(t, await certificate('good.vulnscan.test', valid, false)), tp), { concluded: true, hits: [] })
})

test('ssl-null-or-anonymous-cipher-accepted: anonymous and NULL suites are hits, a default server is none', async (t) => {
  const tp = [byId('ssl-null-or-anonymous-cipher-accepted')]
  const pair = await certificate('good.vulnscan.test', valid, false)
  const anon = await server(t, pair, { maxVersion: 'TLSv1.2', ciphers: 'AECDH-AES128-SHA:ADH-AES256-SHA:@SECLEVEL=0' })
  t.match(await scan(anon, tp), { concluded: true, hits: [{ severity: 'medium', extracted: [/^TLS_E?CDH_anon_WITH_AES_\d+_CBC_SHA$|^TLS_DH_anon_/] }] })
  const clear = await server(t, pair, { maxVersion: 'TLSv1.2', ciphers: 'NULL-SHA256:@SECLEVEL=0' })
  t.match(await scan(clear, tp), { concluded: true, hits: [{ extracted: ['TLS_RSA_WITH_NULL_SHA256'] }] })
  t.match(await scan(await server(t, pair), tp), { concluded: true, hits: [] }, 'node\'s defaults offer neither')
  t.match(await scan(await server(t, pair, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA:NULL-SHA256:@SECLEVEL=0' }), tp), { concluded: true, hits: [{ extracted: ['TLS_RSA_WITH_NULL_SHA256'] }] }, 'beside strong suites too')
})

test('ssl-wildcard-certificate: a wildcard name is a hit, a host name none', async (t) => {
  const tp = [byId('ssl-wildcard-certificate')]
  t.match(await scan(await server(t, await certificate('*.wild.vulnscan.test', valid, false)), tp), { concluded: true, hits: [{ severity: 'info', extracted: ['*.wild.vulnscan.test'] }] })
  t.match(await scan(await server(t, await certificate('good.vulnscan.test', valid, false)), tp), { concluded: true, hits: [] })
})

test('the response carries tlsx\'s fields', async (t) => {
  const pair = await certificate('good.vulnscan.test', valid, false)
  const where = await server(t, pair, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })
  const req = (extra = ''): SslRequest => (load(t, `ssl:\n  - address: "{{Host}}:{{Port}}"\n${extra}    matchers:\n      - type: word\n        words: ['"probe_status":true']\n`).ssl as SslRequest[])[0]
  const x509 = new X509Certificate(pair.cert)
  const r = await response(where, req('    server_name: good.vulnscan.test\n'))
  t.match(r, {
    host: where.host,
    port: String(where.port),
    ip: where.host,
    probe_status: true,
    tls_version: 'tls12',
    cipher: /^TLS_ECDHE_RSA_WITH_AES_\d+_GCM_SHA\d+$/,
    sni: 'good.vulnscan.test',
    expired: false,
    self_signed: false,
    mismatched: false,
    untrusted: true,
    subject_cn: 'good.vulnscan.test',
    subject_dn: 'CN=good.vulnscan.test',
    subject_an: ['good.vulnscan.test'],
    issuer_cn: 'vulnscan test CA',
    issuer_dn: 'CN=vulnscan test CA',
    fingerprint_hash: {
      sha1: x509.fingerprint.replace(/:/g, '').toLowerCase(),
      sha256: x509.fingerprint256.replace(/:/g, '').toLowerCase()
    }
  })
  t.equal((r?.serial as string).replace(/:/g, '').replace(/^0+/, ''), x509.serialNumber.replace(/^0+/, ''))
  t.match(r?.serial, /^[0-9A-F]{2}(:[0-9A-F]{2})*$/)
  t.equal(r?.not_after, new Date(x509.validTo).toISOString().replace(/\.\d{3}Z$/, 'Z'))
  t.match(await response(where, req('    server_name: other.vulnscan.test\n')), { mismatched: true, sni: 'other.vulnscan.test' })
  t.match(await response(where, req()), { mismatched: true }, 'without server_name: compared with the host, here an IP address')
  t.notOk('sni' in (await response(where, req()) ?? {}), 'SNI never carries an IP address')
})

test('matchers, DSL variables and extractors see the response', async (t) => {
  const where = await server(t, await certificate('self.vulnscan.test', valid, true), { minVersion: 'TLSv1.3' })
  const tp = load(t, `ssl:
  - address: "{{Host}}:{{Port}}"
    server_name: self.vulnscan.test
    matchers-condition: and
    matchers:
      - type: word
        part: response
        words: ['"tls_version":"tls13"']
      - type: dsl
        dsl: ['self_signed && !expired && !mismatched && len(subject_an) == 1 && contains(issuer_dn, "self.vulnscan")']
      - type: regex
        part: subject_cn
        regex: ['^self\\.']
    extractors:
      - type: json
        json: ['.fingerprint_hash.sha256', '.subject_an[]']
      - type: kval
        kval: [tls_version]
`)
  const r = await scan(where, [tp])
  t.match(r, { concluded: true, hits: [{ extracted: [/^[0-9a-f]{64}$/, 'self.vulnscan.test', 'tls13'] }] })
})

test('cipher_suites restricts what is offered, by OpenSSL or IANA name', async (t) => {
  const where = await server(t, await certificate('good.vulnscan.test', valid, false), { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })
  const tp = (names: string, extra = ''): LoadedTemplate => load(t, `ssl:
  - address: "{{Host}}:{{Port}}"
${extra}    cipher_suites: [${names}]
    extractors:
      - type: json
        json: ['.cipher']
`)
  t.match(await scan(where, [tp('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256')]), { hits: [{ extracted: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'] }] }, 'IANA name')
  t.match(await scan(where, [tp('ECDHE-RSA-AES128-GCM-SHA256')]), { hits: [{ extracted: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'] }] }, 'OpenSSL name')
  t.match(await scan(where, [tp('TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, AES128-SHA')]), { concluded: true, hits: [] }, 'suites the server lacks: a miss')
  t.match(await scan(where, [tp('TLS_AES_128_GCM_SHA256', '    min_version: tls13\n')]), { concluded: true, hits: [] }, 'TLS 1.3 to a TLS 1.2 server: a miss')
  const v13 = await server(t, await certificate('good.vulnscan.test', valid, false), { minVersion: 'TLSv1.3' })
  t.match(await scan(v13, [tp('TLS_CHACHA20_POLY1305_SHA256')]), { hits: [{ extracted: ['TLS_CHACHA20_POLY1305_SHA256'] }] }, 'a TLS 1.3 suite')
})

test('tls_version_enum lists the versions the server accepts, one handshake each', async (t) => {
  const where = await server(t, await certificate('good.vulnscan.test', valid, false), { minVersion: 'TLSv1.2' })
  const tp = load(t, 'ssl:\n  - address: "{{Host}}:{{Port}}"\n    tls_version_enum: true\n    extractors:\n      - type: json\n        json: [".version_enum"]\n')
  t.match(await scan(where, [tp]), { hits: [{ extracted: ['["tls12","tls13"]'] }] })
})

test('a port that cannot be reached, or never answers the handshake, is no verdict', async (t) => {
  const host = loopbackAddress()
  const r = await scan({ host, port: await freePort(host) }, [TLS10])
  t.match(r, { concluded: false, ran: 1, hits: [] })
  const open = new Set<net.Socket>()
  const silent = net.createServer((s) => {
    open.add(s)
    // Reading what arrives (the ClientHello) lets the client's hang-up be seen.
    s.resume()
    s.on('error', () => {})
    s.on('close', () => open.delete(s))
  })
  const port = await freePort(host)
  await new Promise<void>((resolve) => silent.listen(port, host, resolve))
  t.teardown(() => new Promise<void>((resolve) => silent.close(() => resolve())))
  const quiet = await runTemplates({ host, port, service: 'https', secure: true, intrusive: false, timeoutMs: 800 }, [TLS10])
  t.match(quiet, { concluded: false, ran: 1, hits: [] })
  for (let i = 0; i < 50 && open.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(open.size, 0, 'the abandoned handshake\'s connection is closed')
})

test('what the engine cannot do is refused when the template loads', async (t) => {
  const ssl = (extra: string, address = '"{{Host}}:{{Port}}"'): string => `ssl:\n  - address: ${address}\n${extra}    matchers:\n      - type: dsl\n        dsl: ["expired"]\n`
  t.equal(refused(ssl('')), 'LOADED')
  t.equal(refused(ssl('    scan_mode: auto\n')), 'LOADED')
  t.equal(refused(ssl('    scan_mode: ctls\n', '"{{Hostname}}"')), 'LOADED')
  t.equal(refused(ssl('    min_version: sslv3\n')), 'LOADED', 'from SSLv3 up: from TLS 1.0 up')
  t.match(refused(ssl('    scan_mode: ztls\n')), /scan_mode "ztls" is not supported/)
  t.match(refused(ssl('    scan_mode: openssl\n')), /scan_mode "openssl" is not supported/)
  t.match(refused(ssl('    tls_cipher_enum: true\n')), /tls_cipher_enum is not supported/)
  t.match(refused(ssl('    tls_cipher_types: [weak]\n')), /tls_cipher_types is not supported/)
  t.match(refused(ssl('    max_version: sslv3\n')), /max_version sslv3 cannot be offered/)
  t.match(refused(ssl('    min_version: tls15\n')), /min_version "tls15" is not one of/)
  t.match(refused(ssl('    min_version: tls13\n    max_version: tls12\n')), /min_version is above max_version/)
  t.match(refused(ssl('    cipher_suites: [TLS_FAKE_WITH_NOTHING]\n')), /cipher suite "TLS_FAKE_WITH_NOTHING" is unknown/)
  t.match(refused(ssl('    max_version: tls12\n    cipher_suites: [TLS_AES_128_GCM_SHA256]\n')), /only TLS 1.3 suites but max_version is below tls13/)
  t.match(refused(ssl('    min_version: tls13\n    cipher_suites: [AES128-SHA]\n')), /no TLS 1.3 suite but min_version is tls13/)
  t.match(refused(ssl('', '"{{Host}}:443"')), /may only talk to the port it is run on/)
  t.match(refused(ssl('', '"example.com:443"')), /may only talk to the port it is run on/)
  t.match(refused(ssl('    server_name: "{{exec(1)}}"\n')), /unsupported DSL function/)
  t.match(refused('ssl:\n  - address: "{{Host}}:{{Port}}"\n'), /no matchers and no extractors/)
  t.match(refused('ssl:\n  - matchers:\n      - type: word\n        part: header\n        words: [x]\n'), /part "header" does not exist in an ssl response/)
  t.match(refused('ssl: []\n'), /ssl must be a non-empty list/)
  t.match(refused(ssl('') + 'tcp:\n  - host: ["{{Hostname}}"]\n    matchers:\n      - type: word\n        words: [x]\n'), /ssl and tcp requests in one template/)
})
