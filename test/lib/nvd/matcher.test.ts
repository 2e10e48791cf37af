import { test } from 'tap'
import { compileCriterion, compileTarget, criterionUses, evaluate, matchRecord } from '../../../lib/nvd/matcher'
import { normalizeCve } from '../../../lib/nvd/normalize'
import type { CveMatch, CveRecord } from '../../../lib/nvd/types'
import { allRecords, rawFixture } from '../../support/nvd-fixtures'

const records = allRecords()

function cpe (part: string, vendor: string, product: string, version: string, update = '*', rest = '*:*:*:*:*:*'): string {
  return `cpe:2.3:${part}:${vendor}:${product}:${version}:${update}:${rest}`
}

function matchAll (name: string, recs: CveRecord[] = records): CveMatch[] {
  return recs.map((r) => matchRecord(name, r)).filter((m): m is CveMatch => m !== null)
}

function ids (name: string): string[] {
  return matchAll(name).map((m) => m.cve.id).sort()
}

test('OpenSSH: versionEndExcluding, versionEndIncluding with an update, exact versions with update', async (t) => {
  // CVE-2023-51385: versionEndExcluding 9.6. CVE-2024-6387: < 4.4, 8.6 to < 9.8, 4.4:-, 8.5:p1, 9.8:-.
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.5', 'p1')), ['CVE-2023-51385', 'CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.6')), ['CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.6', 'p1')), ['CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.2', 'p1')), ['CVE-2023-51385', 'CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.7', 'p1')), ['CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.8', 'p1')), [], '9.8p1 is past the 9.8 bound and not the 9.8:- exact entry')
  t.same(ids(cpe('a', 'openbsd', 'openssh', '9.8', '-')), ['CVE-2024-6387'], 'exact 9.8 with update NA')
  t.same(ids(cpe('a', 'openbsd', 'openssh', '8.6', 'p1')), ['CVE-2023-51385', 'CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '8.5', 'p1')), ['CVE-2023-51385', 'CVE-2024-6387'], 'exact 8.5:p1 entry')
  t.same(ids(cpe('a', 'openbsd', 'openssh', '8.5p1')), ['CVE-2023-51385', 'CVE-2024-6387'], 'patch level written into the version')
  t.same(ids(cpe('a', 'openbsd', 'openssh', '8.5', 'p2')), ['CVE-2023-51385'])
  // CVE-2018-15473: versionEndIncluding 7.7. CVE-2016-6210: `*:p2` versionEndIncluding 7.2, i.e. up to 7.2p2.
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.7', 'p1')), ['CVE-2018-15473', 'CVE-2023-51385'], '"through 7.7" includes 7.7p1')
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.7p1')), ['CVE-2018-15473', 'CVE-2023-51385'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.7')), ['CVE-2018-15473', 'CVE-2023-51385'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.8', 'p1')), ['CVE-2023-51385'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.2', 'p2')), ['CVE-2016-6210', 'CVE-2018-15473', 'CVE-2023-51385'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.2', 'p1')), ['CVE-2016-6210', 'CVE-2018-15473', 'CVE-2023-51385'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '7.3', 'p1')), ['CVE-2018-15473', 'CVE-2023-51385'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '4.3', 'p2')),
    ['CVE-2016-6210', 'CVE-2018-15473', 'CVE-2023-51385', 'CVE-2024-6387'])
  t.same(ids(cpe('a', 'openbsd', 'openssh', '4.4', 'p1')), ['CVE-2016-6210', 'CVE-2018-15473', 'CVE-2023-51385'],
    '4.4p1 is neither below 4.4 nor the 4.4:- entry')
})

test('Redis: several ranges in one node, each bound just inside and just outside', async (t) => {
  // CVE-2023-22458: 6.2.0 <= v < 6.2.9 and 7.0.0 <= v < 7.0.8.
  t.same(ids(cpe('a', 'redis', 'redis', '6.2.9')), ['CVE-2022-24834', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.2.8')), ['CVE-2022-24834', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.2.10')), ['CVE-2022-24834', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.8')), ['CVE-2022-24834', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.9')), ['CVE-2022-24834', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.7')), ['CVE-2022-24834', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.4')), ['CVE-2022-24834', 'CVE-2022-35951', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.5')), ['CVE-2022-24834', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.0')), ['CVE-2022-24834', 'CVE-2022-35951', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.2.0')), ['CVE-2021-32675', 'CVE-2022-24834', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.2.6')), ['CVE-2022-24834', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.0.18')), ['CVE-2022-24834', 'CVE-2023-28856'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.0.19')), ['CVE-2022-24834'])
  t.same(ids(cpe('a', 'redis', 'redis', '6.0.20')), [])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.15')), [], 'the Debian 12 redis is past every range')
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.12')), [])
  t.same(ids(cpe('a', 'redis', 'redis', '7.0.11')), ['CVE-2022-24834'])
})

test('a vulnerable `-` (NA) criterion AND-ed with OS platforms', async (t) => {
  // CVE-2022-0543: redis:- AND (ubuntu | debian), a packaging flaw not tied to an upstream version.
  for (const v of ['7.0.15', '6.0.16', '5.0.14']) {
    t.notOk(ids(cpe('a', 'redis', 'redis', v)).includes('CVE-2022-0543'), `never for a detected version (${v})`)
  }
  const m = matchAll(cpe('a', 'redis', 'redis', '-'))
  t.same(m.map((x) => x.cve.id), ['CVE-2022-0543'])
  t.equal(m[0].confidence, 'platform')
  t.equal(m[0].criterion.criteria, 'cpe:2.3:a:redis:redis:-:*:*:*:*:*:*:*')
  t.same(m[0].requiresPlatform, [
    'cpe:2.3:o:canonical:ubuntu_linux:20.04:*:*:*:lts:*:*:*',
    'cpe:2.3:o:canonical:ubuntu_linux:21.10:*:*:*:-:*:*:*',
    'cpe:2.3:o:debian:debian_linux:9.0:*:*:*:*:*:*:*',
    'cpe:2.3:o:debian:debian_linux:10.0:*:*:*:*:*:*:*',
    'cpe:2.3:o:debian:debian_linux:11.0:*:*:*:*:*:*:*'
  ])
  t.same(ids(cpe('o', 'debian', 'debian_linux', '10.0')).includes('CVE-2022-0543'), false,
    'the non-vulnerable platform itself is not reported as vulnerable')
})

test('AND configurations: reported with the platform they require, not dropped, not asserted', async (t) => {
  const iis = matchAll(cpe('a', 'microsoft', 'internet_information_services', '6.0'))
  t.same(iis.map((m) => m.cve.id), ['CVE-2017-7269'])
  t.equal(iis[0].confidence, 'platform')
  t.same(iis[0].requiresPlatform, ['cpe:2.3:o:microsoft:windows_server_2003:r2:*:*:*:*:*:*:*'])
  t.match(iis[0].reason, /6\.0/)
  t.same(ids(cpe('a', 'microsoft', 'internet_information_services', '7.0')), [])
  t.same(ids(cpe('o', 'microsoft', 'windows_server_2003', 'r2')), [])

  // CVE-2018-15473 mixes plain and AND configurations.
  const fw = matchAll(cpe('o', 'netapp', 'cn1610_firmware', '-'))
  t.same(fw.map((m) => [m.cve.id, m.confidence, m.requiresPlatform]),
    [['CVE-2018-15473', 'platform', ['cpe:2.3:h:netapp:cn1610:-:*:*:*:*:*:*:*']]])
  const siemens = matchAll(cpe('o', 'siemens', 'scalance_x204rna_firmware', '3.2.6'))
  t.same(siemens.map((m) => [m.cve.id, m.confidence]), [['CVE-2018-15473', 'platform']])
  t.match(siemens[0].reason, /3\.2\.6 < 3\.2\.7 \(versionEndExcluding\)/)
  t.same(ids(cpe('o', 'siemens', 'scalance_x204rna_firmware', '3.2.7')), [])
  t.same(matchAll(cpe('a', 'netapp', 'vasa_provider', '7.2')).map((m) => [m.cve.id, m.requiresPlatform]),
    [['CVE-2018-15473', ['cpe:2.3:o:netapp:clustered_data_ontap:-:*:*:*:*:*:*:*']]])
  t.same(ids(cpe('a', 'netapp', 'vasa_provider', '7.1')), [])
  // A plain (OR) configuration of the same record gives an exact match.
  const plain = matchAll(cpe('a', 'netapp', 'cloud_backup', '-'))
  t.same(plain.map((m) => [m.cve.id, m.confidence]).sort(), [['CVE-2018-15473', 'exact'], ['CVE-2021-41773', 'exact']])
  t.equal(plain[0].requiresPlatform, undefined)
})

test('distro-only configurations never match an application CPE', async (t) => {
  // CVE-2021-22116: vmware:rabbitmq < 3.8.16, plus a separate debian_linux 9.0 configuration.
  t.same(ids(cpe('a', 'vmware', 'rabbitmq', '3.8.15')), ['CVE-2021-22116', 'CVE-2022-31008'])
  t.same(ids(cpe('a', 'vmware', 'rabbitmq', '3.8.16')), ['CVE-2022-31008'])
  t.same(ids(cpe('a', 'vmware', 'rabbitmq', '3.8.32')), [])
  // CVE-2019-10149: exim 4.87 to 4.91 inclusive, plus Ubuntu/Debian entries.
  t.same(ids(cpe('a', 'exim', 'exim', '4.87')), ['CVE-2019-10149', 'CVE-2020-28017'])
  t.same(ids(cpe('a', 'exim', 'exim', '4.91')), ['CVE-2019-10149', 'CVE-2020-28017'])
  t.same(ids(cpe('a', 'exim', 'exim', '4.86')), ['CVE-2020-28017'])
  t.same(ids(cpe('a', 'exim', 'exim', '4.92')), ['CVE-2020-28017'])
  t.same(ids(cpe('a', 'exim', 'exim', '4.94')), ['CVE-2020-28017'])
  t.same(ids(cpe('a', 'exim', 'exim', '4.94.1')), [], 'the range says 4.94.1 even though the text says 4.94.2')
  t.same(ids(cpe('a', 'debian', 'debian_linux', '9.0')), [], 'part a never matches the o: distro criteria')
  t.same(ids(cpe('o', 'debian', 'debian_linux', '9.0')),
    ['CVE-2011-2523', 'CVE-2018-15473', 'CVE-2019-10149', 'CVE-2021-22116'], 'the OS itself does match its own criteria')
  t.same(ids(cpe('o', 'debian', 'debian_linux', '12.0')), ['CVE-2024-6387'])
})

test('exact-version lists, with their gaps', async (t) => {
  t.same(ids(cpe('a', 'vsftpd_project', 'vsftpd', '2.3.4')), ['CVE-2011-2523'])
  t.same(ids(cpe('a', 'vsftpd_project', 'vsftpd', '2.3.5')), [])
  t.same(ids(cpe('a', 'proftpd', 'proftpd', '1.3.5')), ['CVE-2015-3306'])
  t.same(ids(cpe('a', 'proftpd', 'proftpd', '1.3.5a')), [])
  t.same(ids(cpe('a', 'proftpd', 'proftpd', '1.3.5rc3')), [])
  t.same(ids(cpe('a', 'oracle', 'mysql', '5.1.52')), ['CVE-2012-2122'])
  t.same(ids(cpe('a', 'oracle', 'mysql', '5.1.52', 'sp1')), ['CVE-2012-2122'])
  t.same(ids(cpe('a', 'oracle', 'mysql', '5.1.50')), [])
  t.same(ids(cpe('a', 'oracle', 'mysql', '5.6.5')), ['CVE-2012-2122'])
  t.same(ids(cpe('a', 'oracle', 'mysql', '5.6.6')), [])
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '5.1.41')), ['CVE-2012-2122'])
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '5.1.43')), [])
  t.same(ids(cpe('a', 'apache', 'http_server', '2.4.49')), ['CVE-2021-41773', 'CVE-2023-25690'])
  t.same(ids(cpe('a', 'apache', 'http_server', '2.4.50')), ['CVE-2023-25690'])
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '16.0')), ['CVE-2023-5869'])
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '16')), ['CVE-2023-5869'], '16 equals 16.0')
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '16.1')), [])
})

test('ranges with start and end bounds across products', async (t) => {
  t.same(ids(cpe('a', 'apache', 'http_server', '2.4.55')), ['CVE-2023-25690'])
  t.same(ids(cpe('a', 'apache', 'http_server', '2.4.56')), [])
  t.same(ids(cpe('a', 'apache', 'http_server', '2.4.0')), ['CVE-2023-25690'])
  t.same(ids(cpe('a', 'apache', 'http_server', '2.2.34')), [])
  t.same(ids(cpe('a', 'f5', 'nginx', '1.20.0')), ['CVE-2021-23017'])
  t.same(ids(cpe('a', 'f5', 'nginx', '1.20.1')), [])
  t.same(ids(cpe('a', 'f5', 'nginx', '0.6.18')), ['CVE-2021-23017'])
  t.same(ids(cpe('a', 'f5', 'nginx', '0.6.17')), [])
  t.same(ids(cpe('a', 'f5', 'nginx', '1.22.1')), [], 'CVE-2024-7347 has no configurations yet')
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '15.3')), ['CVE-2023-39417', 'CVE-2023-5869'])
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '15.4')), ['CVE-2023-5869'])
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '15.5')), [])
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '15.0')), ['CVE-2023-39417', 'CVE-2023-5869'])
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '10.23')), [])
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '10.11.2')), ['CVE-2022-47015'])
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '10.11.3')), [])
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '10.11.6')), [])
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '10.7.1')), [], 'no 10.7 range in the record')
  t.same(ids(cpe('a', 'mariadb', 'mariadb', '10.10.3')), ['CVE-2022-47015'], '10.10 is above 10.9, not 10.1')
  t.same(ids(cpe('a', 'eclipse', 'mosquitto', '2.0.7')), ['CVE-2021-34432', 'CVE-2023-28366'])
  t.same(ids(cpe('a', 'eclipse', 'mosquitto', '2.0.8')), ['CVE-2023-28366'])
  t.same(ids(cpe('a', 'eclipse', 'mosquitto', '2.0.16')), [])
  t.same(ids(cpe('a', 'eclipse', 'mosquitto', '1.3.1')), ['CVE-2021-34432'])
  t.same(ids(cpe('a', 'linuxfoundation', 'nats-server', '2.7.1')), ['CVE-2022-24450'])
  t.same(ids(cpe('a', 'linuxfoundation', 'nats-server', '2.7.2')), [])
  t.same(ids(cpe('a', 'linuxfoundation', 'nats-server', '1.4.1')), [])
  t.same(ids(cpe('a', 'broadcom', 'rabbitmq_server', '3.9.17')), ['CVE-2022-31008'])
  t.same(ids(cpe('a', 'broadcom', 'rabbitmq_server', '3.9.18')), [])
  t.same(ids(cpe('a', 'broadcom', 'rabbitmq_server', '3.10.1')), ['CVE-2022-31008'])
  t.same(ids(cpe('a', 'broadcom', 'rabbitmq_server', '3.10.2')), [])
  t.same(ids(cpe('a', 'openssl', 'openssl', '3.0.6')), ['CVE-2022-3602'])
  t.same(ids(cpe('a', 'openssl', 'openssl', '3.0.7')), [])
  t.same(ids(cpe('a', 'openssl', 'openssl', '1.1.1w')), [])
  t.same(ids(cpe('a', 'samba', 'samba', '4.13.16')), ['CVE-2021-44142', 'CVE-2023-3961'])
  t.same(ids(cpe('a', 'samba', 'samba', '4.13.17')), ['CVE-2023-3961'])
  t.same(ids(cpe('a', 'samba', 'samba', '4.17.12')), [])
  t.same(ids(cpe('a', 'samba', 'samba', '4.19.0')), ['CVE-2023-3961'])
})

test('rejected and unanalysed records never match', async (t) => {
  const rejected = records.find((r) => r.id === 'CVE-2021-44457')
  t.ok(rejected?.rejected)
  // A rejected record that still carries configurations must not match either.
  const raw = rawFixture('CVE-2023-51385')
  const asRejected = normalizeCve({ ...raw, vulnStatus: 'Rejected' })
  t.equal(matchRecord(cpe('a', 'openbsd', 'openssh', '9.5', 'p1'), asRejected), null)
  t.not(matchRecord(cpe('a', 'openbsd', 'openssh', '9.5', 'p1'), normalizeCve(raw)), null)
  for (const id of ['CVE-2024-38474', 'CVE-2022-29946', 'CVE-2024-7347', 'CVE-2024-0985', 'CVE-2024-7348', 'CVE-2025-30219']) {
    const r = records.find((x) => x.id === id) as CveRecord
    t.same(r.configurations, [], `${id} has no configurations`)
  }
  t.same(ids(cpe('a', 'postgresql', 'postgresql', '16.1')), [])
  t.same(ids(cpe('a', 'apache', 'http_server', '2.4.59')), [])
  t.notOk(ids(cpe('a', 'linuxfoundation', 'nats-server', '2.2.0')).includes('CVE-2022-29946'))
})

test('a target without a version matches every criterion of its product, marked as such', async (t) => {
  const m = matchAll(cpe('a', 'redis', 'redis', '*'))
  t.same(m.map((x) => x.cve.id).sort(),
    ['CVE-2021-32675', 'CVE-2022-0543', 'CVE-2022-24834', 'CVE-2022-35951', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.ok(m.every((x) => x.productOnly === true))
  t.match(m[0].reason, /product only/)
  const versioned = matchAll(cpe('a', 'redis', 'redis', '7.0.7'))
  t.ok(versioned.every((x) => x.productOnly === undefined))
  t.same(ids(cpe('a', 'nobody', 'nothing', '*')), [])
})

test('all four range bounds and the update field, on constructed criteria', async (t) => {
  const crit = (criteria: string, bounds: Record<string, string> = {}): ReturnType<typeof compileCriterion> =>
    compileCriterion({ criteria, vulnerable: true, ...bounds })
  const target = (name: string): NonNullable<ReturnType<typeof compileTarget>> => {
    const tg = compileTarget(name)
    if (tg === null) throw new Error('bad target')
    return tg
  }
  const startExcl = crit('cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*', { versionStartExcluding: '2.0', versionEndIncluding: '3.0' })!
  t.equal(evaluate(startExcl, target(cpe('a', 'acme', 'widget', '2.0'))), null)
  t.equal(evaluate(startExcl, target(cpe('a', 'acme', 'widget', '2.0.1'))),
    '2.0.1 > 2.0 (versionStartExcluding) and 2.0.1 <= 3.0 (versionEndIncluding)')
  t.not(evaluate(startExcl, target(cpe('a', 'acme', 'widget', '3.0'))), null)
  t.equal(evaluate(startExcl, target(cpe('a', 'acme', 'widget', '3.0.1'))), null)
  t.equal(evaluate(startExcl, target(cpe('a', 'acme', 'widget', '3.0rc1'))) !== null, true, 'a pre-release of 3.0 is below 3.0')

  const exact = crit('cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*')!
  t.match(evaluate(exact, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p1'))), /9\.2p1/)
  t.match(evaluate(exact, target(cpe('a', 'openbsd', 'openssh', '9.2p1'))), /9\.2p1/)
  t.equal(evaluate(exact, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p2'))), null)
  t.equal(evaluate(exact, target(cpe('a', 'openbsd', 'openssh', '9.3', 'p1'))), null)
  const anyUpdate = crit('cpe:2.3:a:openbsd:openssh:9.2:*:*:*:*:*:*:*')!
  t.not(evaluate(anyUpdate, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p1'))), null)
  t.not(evaluate(anyUpdate, target(cpe('a', 'openbsd', 'openssh', '9.2p1'))), null, 'patch level written into the version')
  t.equal(evaluate(anyUpdate, target(cpe('a', 'openbsd', 'openssh', '9.3'))), null)
  const noUpdate = crit('cpe:2.3:a:openbsd:openssh:9.2:-:*:*:*:*:*:*')!
  t.not(evaluate(noUpdate, target(cpe('a', 'openbsd', 'openssh', '9.2'))), null)
  t.not(evaluate(noUpdate, target(cpe('a', 'openbsd', 'openssh', '9.2', '-'))), null)
  t.equal(evaluate(noUpdate, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p1'))), null)
  t.equal(evaluate(noUpdate, target(cpe('a', 'openbsd', 'openssh', '9.2p1'))), null)
  const range = crit('cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', { versionEndExcluding: '9.3' })!
  t.equal(evaluate(range, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p1'))), '9.2p1 < 9.3 (versionEndExcluding)')
  const after92 = crit('cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', { versionStartExcluding: '9.2' })!
  t.equal(evaluate(after92, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p1'))), null, '9.2p1 is the 9.2 release')
  t.not(evaluate(after92, target(cpe('a', 'openbsd', 'openssh', '9.3', 'p1'))), null)
  const throughL = crit('cpe:2.3:a:openssl:openssl:*:*:*:*:*:*:*:*', { versionEndIncluding: '1.0.1' })!
  t.equal(evaluate(throughL, target(cpe('a', 'openssl', 'openssl', '1.0.1g'))), null, 'letter releases are later releases')
  t.not(evaluate(throughL, target(cpe('a', 'openssl', 'openssl', '1.0.1'))), null)
  const afterP1 = crit('cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', { versionStartExcluding: '9.2p1' })!
  t.equal(evaluate(afterP1, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p1'))), null)
  t.not(evaluate(afterP1, target(cpe('a', 'openbsd', 'openssh', '9.2', 'p2'))), null)
  const na = crit('cpe:2.3:a:acme:widget:-:*:*:*:*:*:*:*')!
  t.equal(evaluate(na, target(cpe('a', 'acme', 'widget', '1.0'))), null, 'NA never matches a detected version')
  const any = crit('cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*')!
  t.equal(evaluate(any, target(cpe('a', 'acme', 'widget', '1.0'))), 'criterion covers every version (*)')
  const partO = crit('cpe:2.3:o:acme:widget:*:*:*:*:*:*:*:*')!
  t.equal(evaluate(partO, target(cpe('a', 'acme', 'widget', '1.0'))), null, 'the part must agree')
  const targetSw = crit('cpe:2.3:a:acme:widget:*:*:*:*:*:vsphere:*:*')!
  t.not(evaluate(targetSw, target(cpe('a', 'acme', 'widget', '1.0'))), null)
  t.equal(evaluate(targetSw, target(cpe('a', 'acme', 'widget', '1.0', '*', '*:*:*:windows:*:*'))), null)
})

test('criterionUses lists every vulnerable criterion with its platform', async (t) => {
  const rec = records.find((r) => r.id === 'CVE-2018-15473') as CveRecord
  const uses = criterionUses(rec.configurations)
  t.equal(uses.filter((u) => u.requiresPlatform !== undefined).length, 4)
  t.ok(uses.every((u) => u.criterion.vulnerable))
  t.ok(uses.some((u) => u.productKey === 'openbsd:openssh'))
  t.equal(compileTarget('cpe:2.3:a:broken'), null)
})
