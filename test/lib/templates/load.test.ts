// Loading templates: what loads and how it is read, and every refusal with its reason (a protocol or feature not
// run here, an unknown DSL function, a non-RE2 regex, matchers that match an empty reply, a bad signature).
import { test, type Test } from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { isRefusal, loadTemplate } from '../../../lib/templates/load'
import { signTemplate } from '../../../lib/templates/signing'
import type { LoadedTemplate, Refusal } from '../../../lib/templates/types'

const opts = { origin: 'user' as const, key: null, requireSigned: false }

function tpl (body: string, head = 'id: t-one\ninfo:\n  name: One\n  severity: high\n  tags: redis,network\n'): string {
  return head + body
}

const TCP = (matchers: string, extra = ''): string => `tcp:
  - host:
      - "{{Hostname}}"
    port: 6379
    inputs:
      - data: "PING\\r\\n"
${extra}    matchers:
${matchers}`

function loaded (t: Test, text: string): LoadedTemplate {
  const r = loadTemplate(text, 'x.yaml', opts)
  if (isRefusal(r)) t.fail(`refused: ${r.reason}`)
  return r as LoadedTemplate
}

function refused (text: string): string {
  const r = loadTemplate(text, 'x.yaml', opts)
  return isRefusal(r) ? (r as Refusal).reason : 'LOADED'
}

test('a network template loads with its info, binding and request', async (t) => {
  const text = tpl(TCP('      - type: word\n        words: ["+PONG"]\n'), 'id: redis-ping\ninfo:\n  name: Ping\n  severity: Medium\n  tags: redis, network\n  classification:\n    cve-id: cve-2022-0543\n    cwe-id: CWE-94\n')
  const t1 = loaded(t, text)
  t.match(t1, { id: 'redis-ping', severity: 'medium', tags: ['redis', 'network'], cveIds: ['CVE-2022-0543'], cweIds: ['CWE-94'], services: ['redis'], ports: [6379], intrusive: false, signature: 'unsigned', origin: 'user' })
  t.match(t1.requests[0], { tls: false, readSize: 1024, inputs: [{ data: 'PING\r\n', hex: false }], matchers: [{ type: 'word', part: 'data', condition: 'or', values: ['+PONG'] }] })
  const tls = loaded(t, tpl(TCP('      - type: word\n        words: ["+PONG"]\n').replace('"{{Hostname}}"', '"tls://{{Hostname}}"')))
  t.equal(tls.requests[0].tls, true)
  const intrusive = loaded(t, tpl(TCP('      - type: word\n        words: ["+OK"]\n'), 'id: t-two\ninfo:\n  name: Two\n  severity: critical\n  tags: redis,default-login\n'))
  t.equal(intrusive.intrusive, true, 'default-login makes a template intrusive')
  const byPort = loaded(t, tpl(TCP('      - type: word\n        words: ["x"]\n').replace('port: 6379', 'port: 11211'), 'id: something\ninfo:\n  name: S\n  severity: low\n'))
  t.same(byPort.services, ['memcached'], 'the declared port\'s well-known service binds it')
})

test('unsupported protocols and features are refused with a reason', async (t) => {
  const head = 'id: t-x\ninfo:\n  name: X\n  severity: low\n'
  t.match(refused(head + 'code:\n  - engine: [sh]\n'), /code protocol is not supported/)
  t.match(refused(head + 'http:\n  - method: GET\n'), /http protocol is not supported/)
  t.match(refused(head + 'headless:\n  - steps: []\n'), /headless/)
  t.match(refused(head + 'javascript:\n  - code: x\n'), /javascript/)
  t.match(refused(head + 'ssl:\n  - address: x\n'), /address "x": an ssl template may only talk to the port it is run on/, 'ssl loads (ssl.test.ts) but only on its own port')
  t.match(refused(head + 'dns:\n  - name: x\n'), /dns request 1: no matchers and no extractors/)
  t.match(refused(tpl(TCP('      - type: word\n        words: [x]\n', '    attack: clusterbomb\n'))), /attack is not supported/)
  t.match(refused(tpl(TCP('      - type: xpath\n        xpath: [x]\n'))), /matcher type "xpath" is not supported/)
  t.match(refused(tpl(TCP('      - type: dsl\n        dsl: ["exec(data)"]\n'))), /unsupported DSL function\(s\): exec/)
  t.match(refused(tpl(TCP('      - type: regex\n        regex: ["(a)\\\\1"]\n'))), /not valid RE2/)
  t.match(refused(tpl(TCP('      - type: word\n        words: [x]\n        part: header\n'))), /part "header" does not exist/)
  t.match(refused(tpl(TCP('      - type: word\n        words: [x]\n').replace('"{{Hostname}}"', '"10.0.0.1"'))), /may only talk to the port it is run on/)
  t.match(refused('id: bad id\ninfo:\n  name: X\n  severity: low\n'), /id "bad id"/)
  t.match(refused('id: t\ninfo:\n  name: X\n  severity: severe\n'), /info.severity/)
  t.match(refused('id: t\ninfo:\n  name: X\n  severity: low\n'), /no tcp \(network\), ssl or dns requests/)
  t.match(refused(': : :'), /not valid YAML|not a template/)
})

test('matchers that would match an empty or absent reply are refused at load', async (t) => {
  t.match(refused(tpl(TCP('      - type: word\n        words: ["-ERR"]\n        negative: true\n'))), /match an empty or absent reply/)
  t.match(refused(tpl(TCP('      - type: size\n        size: [0]\n'))), /match an empty or absent reply/)
  t.match(refused(tpl(TCP('      - type: dsl\n        dsl: ["len(data) == 0"]\n'))), /match an empty or absent reply/)
  t.match(refused(tpl(TCP('      - type: dsl\n        dsl: ["!contains(data, \\"NOAUTH\\")"]\n'))), /match an empty or absent reply/)
  t.match(refused(tpl(TCP('      - type: regex\n        regex: [".*"]\n'))), /match an empty or absent reply/)
  // A negative matcher beside a positive one under `and` is fine: the positive one needs a reply.
  loaded(t, tpl(TCP('      - type: word\n        words: ["redis_version"]\n      - type: word\n        words: ["NOAUTH"]\n        negative: true\n', '    matchers-condition: and\n')))
})

test('signatures: signed, unsigned, invalid, and required', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const text = tpl(TCP('      - type: word\n        words: ["+PONG"]\n'))
  const signed = signTemplate(text, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)
  t.match(signed, /\n# digest: [0-9a-f]+\n$/)
  const withKey = { ...opts, key: publicKey }
  t.equal((loadTemplate(signed, 'x', withKey) as LoadedTemplate).signature, 'signed')
  t.equal((loadTemplate(text, 'x', withKey) as LoadedTemplate).signature, 'unsigned')
  t.equal((loadTemplate(signed, 'x', opts) as LoadedTemplate).signature, 'unsigned', 'no key configured: nothing is verified')
  t.match((loadTemplate(signed.replace('+PONG', '+PANG'), 'x', withKey) as Refusal).reason, /does not verify/)
  t.match((loadTemplate(text, 'x', { ...withKey, requireSigned: true }) as Refusal).reason, /TEMPLATES_REQUIRE_SIGNED/)
  t.equal((loadTemplate(signed, 'x', { ...withKey, requireSigned: true }) as LoadedTemplate).signature, 'signed')
  t.equal((loadTemplate(text, 'x', { ...withKey, requireSigned: true, origin: 'project' }) as LoadedTemplate).signature, 'unsigned', 'the project\'s own set is trusted')
})
