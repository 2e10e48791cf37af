// Versions just inside and just outside every bound, on the real records of test/fixtures/cve5.
import { test } from 'tap'
import { decideVersion, parseRangeString } from '../../../lib/cve5/affected'
import type { Cve5Affected } from '../../../lib/cve5/record'
import { cve5Summary } from '../../support/cve5-fixtures'

function entry (id: string, index = 0, origin: 'cna' | 'adp' = 'cna'): Cve5Affected {
  return cve5Summary(id).affected.filter((a) => a.origin === origin)[index]
}

function statuses (e: Cve5Affected, versions: string[]): Record<string, string> {
  return Object.fromEntries(versions.map((v) => [v, decideVersion(e, v).status]))
}

test('GitHub-style range strings (Redis CVE-2024-31449)', async (t) => {
  const redis = entry('CVE-2024-31449')
  t.same(statuses(redis, ['2.5.9', '2.6', '6.2.15', '6.2.16', '6.9', '7.0.0', '7.2.5', '7.2.6', '7.3.0', '7.4.0', '7.4.1', '8.0.0']), {
    '2.5.9': 'unknown',
    '2.6': 'affected',
    '6.2.15': 'affected',
    '6.2.16': 'unknown',
    '6.9': 'unknown',
    '7.0.0': 'affected',
    '7.2.5': 'affected',
    '7.2.6': 'unknown',
    '7.3.0': 'affected',
    '7.4.0': 'affected',
    '7.4.1': 'unknown',
    '8.0.0': 'unknown'
  })
  const d = decideVersion(redis, '7.2.5')
  t.equal(d.rule, 'cna: redis/redis ">= 7.0.0, < 7.2.6" (semver)')
  t.equal(d.by, 'range')
  t.equal(decideVersion(redis, '7.2.6').by, 'default', 'past every range the (absent) defaultStatus decides')
})

test('the CISA ADP form of the same ranges: version + lessThan (custom)', async (t) => {
  const s = cve5Summary('CVE-2024-31449')
  t.equal(s.affected.length, 1)
})

test('"< x" strings and a detected version with a distribution suffix (RabbitMQ CVE-2023-46118)', async (t) => {
  const rabbit = entry('CVE-2023-46118')
  t.same(statuses(rabbit, ['3.10.8', '3.11.23', '3.11.24', '3.12.6', '3.12.7', '3.13.0']), {
    '3.10.8': 'affected',
    '3.11.23': 'affected',
    '3.11.24': 'affected',
    '3.12.6': 'affected',
    '3.12.7': 'unknown',
    '3.13.0': 'unknown'
  })
  t.equal(decideVersion(rabbit, '3.10.8').rule, 'cna: rabbitmq/rabbitmq-server "< 3.12.7" (semver)')
  t.equal(decideVersion(rabbit, '3.10.8-1+deb12u1').status, 'affected')
})

test('a pre-release lower bound in a GitHub string (NATS CVE-2025-30215)', async (t) => {
  const nats = entry('CVE-2025-30215')
  t.same(statuses(nats, ['2.1.9', '2.2.0', '2.10.26', '2.10.27', '2.11.0-RC.1', '2.11.0', '2.11.1']), {
    '2.1.9': 'unknown',
    '2.2.0': 'affected',
    '2.10.26': 'affected',
    '2.10.27': 'unknown',
    '2.11.0-RC.1': 'affected',
    '2.11.0': 'affected',
    '2.11.1': 'unknown'
  })
})

test('version "0" as the open lower bound, lessThan and defaultStatus unaffected (PostgreSQL CVE-2025-8714, rpm)', async (t) => {
  const pg = entry('CVE-2025-8714')
  t.same(statuses(pg, ['9.6.24', '13.21', '13.22', '14.0', '14.18', '14.19', '15.13', '15.14', '16.9', '16.10', '17.5', '17.6', '18.0']), {
    '9.6.24': 'affected',
    '13.21': 'affected',
    '13.22': 'unaffected',
    '14.0': 'affected',
    '14.18': 'affected',
    '14.19': 'unaffected',
    '15.13': 'affected',
    '15.14': 'unaffected',
    '16.9': 'affected',
    '16.10': 'unaffected',
    '17.5': 'affected',
    '17.6': 'unaffected',
    '18.0': 'unaffected'
  })
  t.equal(decideVersion(pg, '15.13').rule, 'cna: n/a/PostgreSQL ">= 15, < 15.14" (rpm)')
  t.equal(decideVersion(pg, '13.21').rule, 'cna: n/a/PostgreSQL "< 13.22" (rpm)')
  t.equal(decideVersion(pg, '18.0').by, 'default')
  t.match(decideVersion(pg, '18.0').rule, /defaultStatus unaffected/)
})

test('open lower bound "0" with a custom type, and OpenSSH p-releases (CVE-2025-61985)', async (t) => {
  const ssh = entry('CVE-2025-61985')
  t.same(statuses(ssh, ['9.2p1', '10.0p2', '10.0', '10.1', '10.1p1', '10.2']), {
    '9.2p1': 'affected',
    '10.0p2': 'affected',
    '10.0': 'affected',
    '10.1': 'unaffected',
    '10.1p1': 'unaffected',
    '10.2': 'unaffected'
  })
  t.equal(decideVersion(ssh, '9.2p1-2+deb12u3').status, 'affected', 'Debian revision is cut before comparing')
})

test('single versions with status and defaultStatus unaffected (Mosquitto CVE-2024-8376)', async (t) => {
  const m = entry('CVE-2024-8376')
  t.same(statuses(m, ['2.0.17', '2.0.18', '2.0.19', '2.0.20']), {
    '2.0.17': 'unaffected',
    '2.0.18': 'affected',
    '2.0.19': 'unaffected',
    '2.0.20': 'unaffected'
  })
  t.equal(decideVersion(m, '2.0.18').rule, 'cna: Eclipse Foundation/Mosquitto "= 2.0.18"')
  t.equal(decideVersion(m, '2.0.19').by, 'range')
  t.equal(decideVersion(m, '2.0.17').by, 'default')
})

test('lessThanOrEqual with a series bound, "*" upper bound and defaultStatus affected (Linux CVE-2024-26925)', async (t) => {
  const linux = entry('CVE-2024-26925', 1)
  t.same(statuses(linux, ['6.4.16', '6.5', '5.4.273', '5.4.274', '5.4.300', '6.1.85', '6.1.86', '6.6.25', '6.6.26', '6.8.4', '6.8.5', '6.8.12', '6.9', '6.12']), {
    '6.4.16': 'unaffected',
    '6.5': 'affected',
    '5.4.273': 'unaffected',
    '5.4.274': 'unaffected',
    '5.4.300': 'unaffected',
    '6.1.85': 'unaffected',
    '6.1.86': 'unaffected',
    '6.6.25': 'affected',
    '6.6.26': 'unaffected',
    '6.8.4': 'affected',
    '6.8.5': 'unaffected',
    '6.8.12': 'unaffected',
    '6.9': 'unaffected',
    '6.12': 'unaffected'
  })
  t.equal(decideVersion(linux, '6.8.4').by, 'default')
  t.equal(decideVersion(linux, '6.1.85').rule, 'cna: Linux/Linux "< 6.5" (custom)', 'the bug came in 6.5: older series are unaffected')
  t.equal(decideVersion(linux, '6.6.30').rule, 'cna: Linux/Linux ">= 6.6.26, <= 6.6.*" (custom)')
  t.equal(decideVersion(linux, '6.7').status, 'affected', 'a series without a fix falls to defaultStatus affected')
  t.equal(decideVersion(linux, '6.12').rule, 'cna: Linux/Linux ">= 6.9" (original_commit_for_fix)')
})

test('git commit ranges cannot be decided from a banner, whatever the defaultStatus', async (t) => {
  const git = entry('CVE-2024-26925', 0)
  t.equal(git.defaultStatus, 'unaffected')
  for (const v of ['5.4.273', '6.8.4', '7.0']) {
    const d = decideVersion(git, v)
    t.equal(d.status, 'unknown', v)
    t.equal(d.by, 'undecidable')
    t.match(d.rule, /\(git\) cannot be compared/)
  }
})

test('changes[] flip the status inside a range, and a non-version bound ending in * is open (Log4j CVE-2021-44228)', async (t) => {
  const log4j = entry('CVE-2021-44228')
  t.same(statuses(log4j, ['2.0-beta8', '2.0-beta9', '2.0', '2.3.0', '2.3.1', '2.3.2', '2.4', '2.12.1', '2.12.2', '2.12.4', '2.13.0', '2.14.1', '2.15.0', '2.17.1']), {
    '2.0-beta8': 'unknown',
    '2.0-beta9': 'affected',
    '2.0': 'affected',
    '2.3.0': 'affected',
    '2.3.1': 'unaffected',
    '2.3.2': 'unaffected',
    '2.4': 'affected',
    '2.12.1': 'affected',
    '2.12.2': 'unaffected',
    '2.12.4': 'unaffected',
    '2.13.0': 'affected',
    '2.14.1': 'affected',
    '2.15.0': 'unaffected',
    '2.17.1': 'unaffected'
  })
  t.equal(decideVersion(log4j, '2.14.1').rule, 'cna: Apache Software Foundation/Apache Log4j2 ">= 2.0-beta9" (custom), affected from 2.13.0')
  t.equal(decideVersion(log4j, '2.12.2').rule, 'cna: Apache Software Foundation/Apache Log4j2 ">= 2.0-beta9" (custom), unaffected from 2.12.2')
})

test('a series lower bound "8.1.*" with lessThan, and defaultStatus affected outside every range (PHP CVE-2024-4577)', async (t) => {
  const php = entry('CVE-2024-4577')
  t.same(statuses(php, ['8.0.30', '8.1.0', '8.1.28', '8.1.29', '8.2.19', '8.2.20', '8.3.7', '8.3.8', '8.4.0']), {
    '8.0.30': 'affected',
    '8.1.0': 'affected',
    '8.1.28': 'affected',
    '8.1.29': 'affected',
    '8.2.19': 'affected',
    '8.2.20': 'affected',
    '8.3.7': 'affected',
    '8.3.8': 'affected',
    '8.4.0': 'affected'
  }, 'ranges overlap and the default is affected: the CNA says every version is')
  t.equal(decideVersion(php, '8.1.28').by, 'range')
  t.equal(decideVersion(php, '8.1.29').by, 'default', 'past its range, only the defaultStatus calls 8.1.29 affected')
  t.equal(decideVersion(php, '8.2.19').rule, 'cna: PHP Group/PHP ">= 8.2.*, < 8.2.20" (semver)')
  const adp = entry('CVE-2024-4577', 0, 'adp')
  t.same(statuses(adp, ['8.0.30', '8.1.0', '8.1.28', '8.1.29']), {
    '8.0.30': 'affected',
    '8.1.0': 'affected',
    '8.1.28': 'affected',
    '8.1.29': 'affected'
  })
  t.equal(decideVersion(adp, '8.1.29').by, 'default')
  t.equal(decideVersion(adp, '8.1.28').rule, 'adp: php_group/php ">= 8.1.0, < 8.1.29" (custom)')
})

test('vendor release names and "*" upper bounds that cannot be compared stay unknown (NGINX Plus, CVE-2025-53859)', async (t) => {
  const plus = entry('CVE-2025-53859', 0)
  t.equal(plus.product, 'NGINX Plus')
  t.equal(decideVersion(plus, '1.25.3').status, 'unknown')
  const oss = entry('CVE-2025-53859', 1)
  t.same(statuses(oss, ['0.6.39', '0.7', '1.24.0', '1.29.0', '1.29.1', '1.29.2']), {
    '0.6.39': 'unknown',
    '0.7': 'affected',
    '1.24.0': 'affected',
    '1.29.0': 'affected',
    '1.29.1': 'unknown',
    '1.29.2': 'unknown'
  })
})

test('n/a entries never match', async (t) => {
  const na = entry('CVE-2022-29946')
  for (const v of ['2.8.1', '2.8.2', '0.24.5']) {
    const d = decideVersion(na, v)
    t.equal(d.status, 'unknown', v)
    t.match(d.rule, /n\/a never matches/)
  }
  const versionNa: Cve5Affected = { origin: 'cna', vendor: 'nats-io', product: 'nats-server', versions: [{ version: 'n/a', status: 'affected' }], defaultStatus: 'affected' }
  t.equal(decideVersion(versionNa, '2.8.1').status, 'unknown', 'an n/a version is not a version, even with defaultStatus affected')
})

test('lessThan "*" as no upper bound, and ranges written in words', async (t) => {
  const e: Cve5Affected = { origin: 'cna', vendor: 'x', product: 'y', versions: [{ version: '2.0', lessThan: '*', status: 'affected', versionType: 'semver' }] }
  t.same(statuses(e, ['1.9.9', '2.0', '99.1']), { '1.9.9': 'unknown', '2.0': 'affected', '99.1': 'affected' })
  t.same(parseRangeString('<= 2.0'), [{ op: '<=', v: '2.0' }])
  t.same(parseRangeString('= 1.4.0'), [{ op: '=', v: '1.4.0' }])
  t.same(parseRangeString('before 1.2.3'), [{ op: '<', v: '1.2.3' }])
  t.same(parseRangeString('1.2.3 and earlier'), [{ op: '<=', v: '1.2.3' }])
  t.equal(parseRangeString('R34 P2'), null)
  t.equal(parseRangeString('>= 1.0, < banana'), null)
  const le: Cve5Affected = { origin: 'cna', vendor: 'x', product: 'y', versions: [{ version: '<= 2.0', status: 'affected' }] }
  t.same(statuses(le, ['1.9', '2.0', '2.0.1']), { '1.9': 'affected', '2.0': 'affected', '2.0.1': 'unknown' })
  const eq: Cve5Affected = { origin: 'cna', vendor: 'x', product: 'y', versions: [{ version: '= 1.4.0', status: 'affected' }] }
  t.same(statuses(eq, ['1.3.9', '1.4', '1.4.0', '1.4.1']), { '1.3.9': 'unknown', '1.4': 'affected', '1.4.0': 'affected', '1.4.1': 'unknown' })
})

test('suffixes sort as the project comparator says (rc before release, p1 after)', async (t) => {
  const e: Cve5Affected = { origin: 'cna', vendor: 'proftpd', product: 'proftpd', versions: [{ version: '1.3.5rc1', lessThan: '1.3.5p1', status: 'affected', versionType: 'custom' }] }
  t.same(statuses(e, ['1.3.4', '1.3.5rc1', '1.3.5', '1.3.5p1', '1.3.6']), {
    '1.3.4': 'unknown', '1.3.5rc1': 'affected', '1.3.5': 'affected', '1.3.5p1': 'unknown', '1.3.6': 'unknown'
  })
})

test('no version detected decides nothing', async (t) => {
  const d = decideVersion(entry('CVE-2024-31449'), '')
  t.equal(d.status, 'unknown')
  t.equal(d.by, 'undecidable')
})
