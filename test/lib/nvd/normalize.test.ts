import { test } from 'tap'
import { normalizeCve } from '../../../lib/nvd/normalize'
import { allRawFixtures, rawFixture } from '../../support/nvd-fixtures'

test('every real fixture record normalizes, whatever optional fields its snapshot has', async (t) => {
  const raws = allRawFixtures()
  t.equal(raws.length, 38)
  const statuses = new Set<string>()
  for (const raw of raws) {
    const r = normalizeCve(raw)
    t.equal(r.id, raw.id)
    t.equal(r.lastModified, raw.lastModified)
    t.equal(r.published, raw.published)
    statuses.add(r.vulnStatus)
    t.not(r.description, '', `${r.id} has an English description`)
    if (r.cvss !== null) t.ok(r.cvss > 0 || r.severity === 'none')
    t.equal(r.cvss === null, r.severity === null, `${r.id}: score and severity are missing together`)
  }
  t.same([...statuses].sort(),
    ['Analyzed', 'Awaiting Analysis', 'Deferred', 'Modified', 'Received', 'Rejected', 'Undergoing Analysis'].filter((s) => statuses.has(s)))
  t.ok(statuses.has('Rejected') && statuses.has('Deferred') && statuses.has('Awaiting Analysis'))
})

test('accepts the vulnerabilities[] wrapper and unknown fields, throws on a record without an id', async (t) => {
  const raw = rawFixture('CVE-2023-51385')
  t.equal(normalizeCve({ cve: raw }).id, 'CVE-2023-51385')
  t.equal(normalizeCve({ ...raw, someFutureField: { x: 1 } }).id, 'CVE-2023-51385')
  const { id: _id, ...noId } = raw
  t.throws(() => normalizeCve(noId), /without a valid CVE id/)
  t.throws(() => normalizeCve(null), /not an object/)
  t.throws(() => normalizeCve({ ...raw, id: 'not-a-cve' }), /without a valid CVE id/)
})

test('chosen severity: NVD Primary first, newest CVSS version first', async (t) => {
  const exim = normalizeCve(rawFixture('CVE-2019-10149'))
  t.equal(exim.metrics.length, 3)
  t.same([exim.cvss, exim.cvssVersion, exim.severity], [9.8, '3.1', 'critical'])
  t.equal(exim.cvssVector, 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H')
  const v30 = exim.metrics.find((m) => m.version === '3.0')
  t.same(v30, { version: '3.0', score: 9, severity: 'critical', vector: 'CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:H/A:H', source: 'secalert@redhat.com', type: 'Secondary' })

  // Redis CVE-2022-35951: the CNA's Secondary 3.1 is listed first; NVD's Primary one is chosen.
  const redis = normalizeCve(rawFixture('CVE-2022-35951'))
  t.same([redis.cvss, redis.severity, redis.metrics.length], [9.8, 'critical', 2])
  t.equal(redis.metrics.filter((m) => m.type === 'Secondary')[0].score, 7)
})

test('CVSS v2 takes the severity from outside cvssData', async (t) => {
  const mysql = normalizeCve(rawFixture('CVE-2012-2122'))
  t.same(mysql.metrics, [{ version: '2.0', score: 5.1, severity: 'medium', vector: 'AV:N/AC:H/Au:N/C:P/I:P/A:P', source: 'nvd@nist.gov', type: 'Primary' }])
  t.same([mysql.cvss, mysql.cvssVersion, mysql.severity], [5.1, '2.0', 'medium'])
  const httpd = normalizeCve(rawFixture('CVE-2021-41773'))
  t.equal(httpd.metrics.find((m) => m.version === '2.0')?.severity, 'medium')
  t.equal(httpd.cvssVersion, '3.1')
})

test('CVSS v4.0 without exploitability, Secondary only', async (t) => {
  const nginx = normalizeCve(rawFixture('CVE-2024-7347'))
  t.same([nginx.cvss, nginx.cvssVersion, nginx.severity], [5.7, '4.0', 'medium'])
  t.match(nginx.cvssVector, /^CVSS:4\.0\/AV:L/)
  t.same(nginx.metrics.map((m) => [m.version, m.type, m.source]), [['4.0', 'Secondary', 'f5sirt@f5.com'], ['3.1', 'Secondary', 'f5sirt@f5.com']])
  t.same(nginx.configurations, [])
})

test('missing metrics give null, never 0', async (t) => {
  for (const id of ['CVE-2024-38474', 'CVE-2022-29946', 'CVE-2021-44457']) {
    const r = normalizeCve(rawFixture(id))
    t.same([r.cvss, r.cvssVersion, r.cvssVector, r.severity, r.metrics], [null, null, null, null, []], id)
  }
})

test('rejected record', async (t) => {
  const r = normalizeCve(rawFixture('CVE-2021-44457'))
  t.equal(r.rejected, true)
  t.equal(r.vulnStatus, 'Rejected')
  t.match(r.description, /^Rejected reason:/)
  t.same(r.references, [])
  t.same(r.configurations, [])
  t.equal(normalizeCve(rawFixture('CVE-2023-51385')).rejected, false)
})

test('KEV fields wherever they sit in the object', async (t) => {
  // CVE-2021-41773 has them before descriptions, CVE-2019-10149 after metrics.
  t.same(normalizeCve(rawFixture('CVE-2021-41773')).kev, {
    dateAdded: '2021-11-03',
    dueDate: '2021-11-17',
    requiredAction: 'Apply updates per vendor instructions.',
    name: 'Apache HTTP Server Path Traversal Vulnerability'
  })
  t.same(normalizeCve(rawFixture('CVE-2019-10149')).kev?.name, 'Exim Mail Transfer Agent (MTA) Improper Input Validation')
  for (const id of ['CVE-2017-7269', 'CVE-2022-0543', 'CVE-2015-3306']) t.ok(normalizeCve(rawFixture(id)).kev?.dateAdded, id)
  t.equal(normalizeCve(rawFixture('CVE-2023-51385')).kev, null)
})

test('CWE ids, without NVD placeholders, deduplicated', async (t) => {
  t.same(normalizeCve(rawFixture('CVE-2019-10149')).cwes, ['CWE-78'])
  t.same(normalizeCve(rawFixture('CVE-2021-34432')).cwes, ['CWE-20'], 'NVD-CWE-noinfo is left out')
  t.same(normalizeCve(rawFixture('CVE-2024-7347')).cwes, ['CWE-126'])
})

test('references, descriptions with escapes and other languages', async (t) => {
  const exim = normalizeCve(rawFixture('CVE-2019-10149'))
  t.equal(exim.references.length, 40)
  t.same(exim.references[0], {
    url: 'http://lists.opensuse.org/opensuse-security-announce/2019-06/msg00020.html',
    source: 'secalert@redhat.com',
    tags: ['Mailing List', 'Third Party Advisory']
  })
  const nginx = normalizeCve(rawFixture('CVE-2024-7347'))
  t.same(nginx.references[0], { url: 'https://my.f5.com/manage/s/article/K000140529', source: 'f5sirt@f5.com' })
  const httpd = normalizeCve(rawFixture('CVE-2024-38474'))
  t.match(httpd.description, /^Substitution encoding issue in mod_rewrite/)
  t.ok(httpd.description.includes('\n'), 'embedded newline kept')
  t.ok(httpd.description.includes('\u00a0'), '\\u escapes decoded')
})

test('configurations: AND operator, platform entries, ranges, negate', async (t) => {
  const iis = normalizeCve(rawFixture('CVE-2017-7269'))
  t.equal(iis.configurations.length, 1)
  t.equal(iis.configurations[0].operator, 'AND')
  t.same(iis.configurations[0].nodes.map((n) => [n.operator, n.negate, n.cpeMatch.map((c) => c.vulnerable)]),
    [['OR', false, [true]], ['OR', false, [false]]])
  const ssh = normalizeCve(rawFixture('CVE-2016-6210'))
  t.match(ssh.configurations[0].nodes[0].cpeMatch[0], {
    criteria: 'cpe:2.3:a:openbsd:openssh:*:p2:*:*:*:*:*:*',
    vulnerable: true,
    versionEndIncluding: '7.2'
  })
  t.equal(normalizeCve(rawFixture('CVE-2012-2122')).configurations.length, 7)
  t.same(normalizeCve(rawFixture('CVE-2024-0985')).configurations, [], 'no configurations key')
})
