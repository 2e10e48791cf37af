import { test } from 'tap'
import { cpePairKey, entryProductKeys, lookupKeys, normalizeName, recordProductKeys, tableTargets } from '../../../lib/cve5/naming'
import { cpesFor } from '../../../lib/cpe/aliases'
import { cve5Summary } from '../../support/cve5-fixtures'

/** The vendor:product pairs the scanner's alias table gives for a detected product. */
function detected (product: string): string[] {
  return cpesFor(product, '1.0').map((c) => c.split(':').slice(3, 5).join(':'))
}

test('CNA strings map onto the pairs the scanner produces', async (t) => {
  const cases: Array<[string | undefined, string, string]> = [
    ['redis', 'redis', 'redis'],
    ['PostgreSQL Global Development Group', 'PostgreSQL', 'postgresql'],
    ['n/a', 'PostgreSQL', 'postgresql'],
    ['OpenBSD', 'OpenSSH', 'openssh'],
    ['F5', 'NGINX Open Source', 'nginx'],
    ['MariaDB', 'MariaDB Server', 'mariadb'],
    ['Eclipse Foundation', 'Eclipse Mosquitto', 'mosquitto'],
    ['Eclipse Foundation', 'Mosquitto', 'mosquitto'],
    ['VMware', 'RabbitMQ', 'rabbitmq'],
    ['rabbitmq', 'rabbitmq-server', 'rabbitmq'],
    ['Apache Software Foundation', 'Apache HTTP Server', 'apache httpd'],
    ['nats-io', 'nats-server', 'nats-server'],
    ['Exim', 'Exim', 'exim'],
    ['ProFTPD Project', 'ProFTPD', 'proftpd'],
    ['Open-Xchange', 'Dovecot', 'dovecot'],
    ['memcached', 'memcached', 'memcached'],
    ['MongoDB Inc.', 'MongoDB Server', 'mongodb'],
    ['Elastic', 'Elasticsearch', 'elasticsearch']
  ]
  for (const [vendor, product, scannerName] of cases) {
    const targets = tableTargets(vendor, product)
    const want = detected(scannerName)
    t.ok(want.length > 0, `the scanner knows ${scannerName}`)
    t.ok(want.some((p) => targets.includes(p)), `${vendor}/${product} → ${targets.join(',')} meets ${want.join(',')}`)
  }
  t.same(tableTargets('ISC', 'BIND 9'), ['isc:bind'])
  t.same(tableTargets('Internet Systems Consortium (ISC)', 'BIND 9'), ['isc:bind'])
})

test('products with another version line or a generic name are not folded in', async (t) => {
  t.same(tableTargets('F5', 'NGINX Plus'), [])
  t.same(tableTargets('VMware', 'Tanzu RabbitMQ'), [])
  t.same(tableTargets('Acme', 'bind'), [], 'a "bind" from anyone but ISC is not BIND')
  t.same(tableTargets('Acme', 'HTTP Server'), [])
})

test('names are normalized for case, punctuation and corporate suffixes', async (t) => {
  t.equal(normalizeName('  NGINX   Open-Source '), 'nginx open source')
  t.equal(normalizeName('Redis Ltd.', true), 'redis')
  t.equal(normalizeName('MongoDB, Inc.', true), 'mongodb')
})

test('CPE names in cpes[] give keys directly, 2.3 and 2.2', async (t) => {
  t.equal(cpePairKey('cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*'), 'redis:redis')
  t.equal(cpePairKey('cpe:/a:isc:bind:9.18.0'), 'isc:bind')
  t.equal(cpePairKey('cpe:2.3:a:linuxfoundation:nats-server:2.10.0:*:*:*:*:*:*:*'), 'linuxfoundation:nats-server')
  t.equal(cpePairKey('cpe:2.3:a:*:*:*:*:*:*:*:*:*:*'), null)
  t.equal(cpePairKey('not a cpe'), null)
})

test('record keys on real records', async (t) => {
  t.same(recordProductKeys(cve5Summary('CVE-2024-31449')), ['redis:redis'])
  const rabbit = recordProductKeys(cve5Summary('CVE-2023-46118'))
  for (const k of ['vmware:rabbitmq', 'broadcom:rabbitmq_server', 'pivotal_software:rabbitmq']) t.ok(rabbit.includes(k), k)
  const nginx = recordProductKeys(cve5Summary('CVE-2025-53859'))
  t.ok(nginx.includes('f5:nginx'))
  t.ok(nginx.includes('nginx:nginx'))
  t.ok(nginx.includes('f5:nginx_plus'), 'NGINX Plus is indexed under its own CPE-style name')
  const pg = recordProductKeys(cve5Summary('CVE-2025-8714'))
  t.ok(pg.includes('postgresql:postgresql'))
  t.ok(pg.includes('*:postgresql'), 'no vendor: indexed by product alone')
  const php = recordProductKeys(cve5Summary('CVE-2024-4577'))
  t.ok(php.includes('php_group:php'), 'the ADP CPE entries give the NVD pair')
  t.same(recordProductKeys(cve5Summary('CVE-2022-29946')), [], 'n/a gives no key')
  t.same(recordProductKeys(cve5Summary('CVE-2024-2370')), [], 'rejected gives no key')
  t.ok(recordProductKeys(cve5Summary('CVE-2025-30215')).includes('linuxfoundation:nats-server'))
  t.ok(recordProductKeys(cve5Summary('CVE-2025-61985')).includes('openbsd:openssh'))
  t.ok(recordProductKeys(cve5Summary('CVE-2024-8376')).includes('eclipse:mosquitto'))
})

test('lookup keys for a detected pair find both vendor-qualified and product-only entries', async (t) => {
  t.same(lookupKeys({ vendor: 'postgresql', product: 'postgresql' }), ['postgresql:postgresql', '*:postgresql'])
  const entry = cve5Summary('CVE-2025-8714').affected[0]
  const keys = entryProductKeys(entry)
  t.ok(lookupKeys({ vendor: 'postgresql', product: 'postgresql' }).some((k) => keys.includes(k)))
})
