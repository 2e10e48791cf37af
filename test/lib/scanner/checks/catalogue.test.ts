// The catalogue, the checks that report its entries and the README's table say the same; and a check's finding
// is shaped as the results store and the API expect.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'tap'
import { CHECKS, checkById } from '../../../../lib/scanner/checks/catalogue'
import { checksFor, PORT_CHECKS } from '../../../../lib/scanner/checks/index'
import { exposureVerdict } from '../../../../lib/match/exposures'
import { FINDING_SOURCES } from '../../../../lib/vocabulary'

test('every catalogue entry has a check that reports it, and every check reports catalogue entries only', async (t) => {
  const reported = new Set(PORT_CHECKS.flatMap((c) => c.ids))
  for (const c of CHECKS) {
    t.ok(reported.has(c.id), `${c.id} has a check`)
    t.match(c.id, /^VULNSCAN(-[A-Z0-9]+)+$/)
    t.ok(c.remediation.length > 0 && c.severityReason.length > 0 && c.evidence.length > 0, `${c.id} says why, what and how to fix`)
  }
  for (const id of reported) t.doesNotThrow(() => checkById(id), `${id} is in the catalogue`)
  t.equal(new Set(CHECKS.map((c) => c.id)).size, CHECKS.length, 'ids are unique')
  t.throws(() => checkById('VULNSCAN-NOPE'))
})

test('docs/checks.md lists every check with its severity', async (t) => {
  const readme = readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'checks.md'), 'utf8')
  for (const c of CHECKS) t.match(readme, new RegExp(`\\| \`${c.id}\` [^|]+ \\| ${c.severity} \\|`), `${c.id} is in the table of docs/checks.md`)
})

test('which checks apply: by service, by product for HTTP APIs, TLS ones where TLS came first or STARTTLS can upgrade', async (t) => {
  const ids = (svc: Parameters<typeof checksFor>[0]): string[] => checksFor(svc).flatMap((c) => c.ids)
  t.same(ids({ service: 'redis', cpe: [] }), ['VULNSCAN-REDIS-NOAUTH'])
  t.same(ids({ service: 'http', cpe: [] }), [], 'plain HTTP of no known API: nothing')
  t.same(ids({ service: 'http', product: 'etcd', cpe: [] }), ['VULNSCAN-ETCD-NOAUTH'])
  t.ok(ids({ service: 'https', product: 'Docker', cpe: [], tls: {} }).includes('VULNSCAN-TLS-EXPIRED'))
  t.ok(ids({ service: 'https', product: 'Docker', cpe: [], tls: {} }).includes('VULNSCAN-DOCKER-API-NOAUTH'))
  const starttls = ids({ service: 'smtp', cpe: [], tls: {}, extraInfo: 'STARTTLS' })
  const tlsIds = CHECKS.filter((c) => c.services[0] === 'tls').map((c) => c.id)
  t.same(starttls.sort(), [...tlsIds, 'VULNSCAN-SMTP-PLAINTEXT-AUTH'].sort(), 'after STARTTLS: the plain-text check and the certificate ones')
  t.same(ids({ service: 'imap', cpe: [] }).sort(), [...tlsIds, 'VULNSCAN-IMAP-PLAINTEXT-AUTH'].sort(), 'IMAP not yet upgraded: the checks try STARTTLS themselves')
  t.same(ids({ service: 'ssh', cpe: [] }), ['VULNSCAN-SSH-TERRAPIN'], 'no STARTTLS in SSH: no certificate checks')
  t.same(ids({ service: 'smtp', cpe: [], tls: {} }), CHECKS.filter((c) => c.services[0] === 'tls').map((c) => c.id), 'SMTPS: the TLS checks only')
})

test('an exposure becomes a finding of source vulnscan with the check\'s severity, reason and remediation', async (t) => {
  t.ok((FINDING_SOURCES as readonly string[]).includes('vulnscan'))
  const v = exposureVerdict({ check: 'VULNSCAN-POSTGRESQL-TRUST', evidence: 'AuthenticationOk' },
    { service: 'postgresql', product: 'PostgreSQL', version: '15.14', cpe: ['cpe:2.3:a:postgresql:postgresql:15.14:*:*:*:*:*:*:*'] })
  t.match(v, {
    cveId: 'VULNSCAN-POSTGRESQL-TRUST',
    severity: 'critical',
    cvss: null,
    source: 'vulnscan',
    observed: 'open',
    confidence: 'high',
    product: 'PostgreSQL',
    version: '15.14',
    matchedCpe: 'cpe:2.3:a:postgresql:postgresql:15.14:*:*:*:*:*:*:*',
    evidence: 'AuthenticationOk',
    remediation: /scram-sha-256/,
    rule: /^vulnscan: VULNSCAN-POSTGRESQL-TRUST: /
  })
})
