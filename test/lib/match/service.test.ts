// The matcher over every source, on real records: NVD configurations, CNA and CISA ADP affected data,
// the Debian tracker's fixed versions, KEV and EPSS.
import { test } from 'tap'
import { matchService, type Verdict } from '../../../lib/match/service'
import { parse as parseSsh } from '../../../lib/scanner/probes/ssh'
import { cpesFor } from '../../../lib/cpe/aliases'
import type { ServiceInfo } from '../../../lib/domain/services'
import { loadSources as setup } from '../../support/sources'

/** What the SSH probe makes of an identification string, with the CPE names detection adds. */
function ssh (ident: string): ServiceInfo {
  const m = parseSsh(Buffer.from(ident + '\r\n'))!
  return { ...m, banner: ident, cpe: cpesFor(m.product!, m.version) }
}

function service (product: string, version?: string, extra: Partial<ServiceInfo> = {}): ServiceInfo {
  return { service: product.toLowerCase(), product, ...(version !== undefined ? { version } : {}), cpe: cpesFor(product, version), ...extra }
}

function byId (vs: Verdict[]): Record<string, Verdict> {
  return Object.fromEntries(vs.map((v) => [v.cveId, v]))
}

test('a patched Debian sshd: backported fixes decided by the tracker, an open entry stays open', async (t) => {
  const deps = await setup()
  const m = await matchService(ssh('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10'), deps)
  t.match(m.distroPackage, { family: 'debian', release: 'bookworm', source: 'openssh', version: '1:9.2p1-2+deb12u10' })
  const v = byId(m.verdicts)
  t.match(v['CVE-2023-51385'], {
    observed: 'fixed_by_distribution',
    source: 'distribution',
    rule: 'debian bookworm openssh 1:9.2p1-2+deb12u10 >= 1:9.2p1-2+deb12u2 (Debian security tracker, resolved)',
    distribution: { fixedVersion: '1:9.2p1-2+deb12u2', trackerStatus: 'resolved', packageVersion: '1:9.2p1-2+deb12u10' }
  })
  t.match(v['CVE-2024-6387'], { observed: 'fixed_by_distribution', distribution: { fixedVersion: '1:9.2p1-2+deb12u3' } })
  t.match(v['CVE-2023-51767'], { observed: 'open', source: 'distribution', confidence: 'high', severity: 'low', cvss: 7 },
    'open in the tracker: open, rated as Debian rates it')
  t.match(v['CVE-2023-51767'].confidenceNote, /Debian rates it unimportant for bookworm \(upstream: high, CVSS 7/)
  t.match(v['CVE-2025-61985'], { observed: 'open', source: 'cna', confidence: 'medium', rule: /cna: .*10\.1/ },
    'the NVD has not analysed it: the CNA range decides, at medium confidence')
  t.notOk(v['CVE-2016-6210'] ?? v['CVE-2018-15473'], 'older CVEs outside the range do not match')
})

test('an older Debian revision: the same CVEs are open, decided both ways by one table', async (t) => {
  const deps = await setup()
  const v = byId((await matchService(ssh('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u2'), deps)).verdicts)
  t.match(v['CVE-2023-51385'], { observed: 'fixed_by_distribution' }, 'fixed exactly at deb12u2')
  t.match(v['CVE-2024-6387'], {
    observed: 'open', source: 'distribution', confidence: 'high', severity: 'high',
    rule: /; debian bookworm openssh 1:9\.2p1-2\+deb12u2 < 1:9\.2p1-2\+deb12u3 /
  })
})

test('a banner with the family only keeps the upstream verdict at medium confidence', async (t) => {
  const deps = await setup()
  const v = byId((await matchService(ssh('SSH-2.0-OpenSSH_9.2p1 Debian'), deps)).verdicts)
  t.match(v['CVE-2024-6387'], { observed: 'open', source: 'nvd', confidence: 'medium', distribution: { family: 'debian', packageVersion: null } })
  t.match(v['CVE-2024-6387'].confidenceNote, /may have backported the fix/)
})

test('CNA-only data: Redis 7.0.14 is reported for CVE-2024-31449, 7.2.6 is not', async (t) => {
  const deps = await setup()
  const v = byId((await matchService(service('Redis', '7.0.14'), deps)).verdicts)
  t.match(v['CVE-2024-31449'], { observed: 'open', source: /^(cna|adp)$/, confidence: 'medium', rule: /7\.2\.6/ })
  t.ok(v['CVE-2024-31449'].confidenceScore === 70 || v['CVE-2024-31449'].confidenceScore === 75, 'a CNA range (70) or CISA ADP CPE range (75)')
  t.notOk(byId((await matchService(service('Redis', '7.2.6'), deps)).verdicts)['CVE-2024-31449'], 'just outside the bound')
  t.ok(byId((await matchService(service('Redis', '7.2.5'), deps)).verdicts)['CVE-2024-31449'], 'just inside it')
})

test('an upstream version a tracked release packaged and patched by revision is a lead, not an open finding', async (t) => {
  const deps = await setup()
  // Debian bookworm ships redis 5:7.0.15-1~deb12u… and fixed CVE-2024-31449 in 5:7.0.15-1~deb12u2: a banner with
  // no distribution sign showing 7.0.15 is most likely that package, whose revision the banner hides.
  const v = byId((await matchService(service('Redis', '7.0.15'), deps, { now: new Date('2026-01-01T00:00:00Z') })).verdicts)
  t.match(v['CVE-2024-31449'], { observed: 'potential', source: 'distribution', confidence: 'low', confidenceScore: 40, distribution: { release: 'bookworm', fixedVersion: '5:7.0.15-1~deb12u2', packageVersion: null } })
  t.match(v['CVE-2024-31449'].confidenceNote, /revision the banner hides/)
})

test('an alias the NVD cannot supply hides nothing the others match', async (t) => {
  const deps = await setup()
  const rabbit = service('RabbitMQ', '3.10.8')
  const m = await matchService(rabbit, { nvd: deps.nvd, sources: null }, { unavailable: new Set(['pivotal_software:rabbitmq', 'broadcom:rabbitmq_server']) })
  t.match(byId(m.verdicts)['CVE-2023-46118'], { observed: 'open', source: 'nvd', confidence: 'high', matchedCpe: /vmware:rabbitmq/ })
  const withSources = byId((await matchService(rabbit, deps, { unavailable: new Set(['vmware:rabbitmq', 'pivotal_software:rabbitmq', 'broadcom:rabbitmq_server']) })).verdicts)
  t.notOk(withSources['CVE-2023-46118'], 'with every alias unavailable the NVD\'s configured CVE is not decided by the CNA instead')
  t.match(withSources['CVE-2025-30219'], { source: 'cna' }, 'while CVEs the NVD has not analysed still come from the CNA')
})

test('a product without a version gives potential findings only; KEV from the catalog', async (t) => {
  const deps = await setup()
  const v = (await matchService(service('ProFTPD'), deps)).verdicts
  t.ok(v.length > 0)
  t.ok(v.every((x) => x.observed === 'potential' && x.confidence === 'low'), 'never open')
  const exim = byId((await matchService(service('Exim', '4.91'), deps)).verdicts)
  t.match(exim['CVE-2019-10149'], { observed: 'open', kev: { dateAdded: '2022-01-10', ransomware: false, requiredAction: String, name: /Exim/ } })
})

test('a version the wire shows only in part: a bound inside it gives a potential finding, bounds beyond it still decide', async (t) => {
  const deps = await setup()
  // CVE-2024-6387: OpenSSH >= 8.5p1, < 9.8p1 in the NVD.
  const guess = byId((await matchService(service('OpenSSH', '9'), deps)).verdicts)
  t.match(guess['CVE-2024-6387'], { observed: 'open' }, 'read as a whole version, "9" would be an open finding')
  const major = byId((await matchService(service('OpenSSH', '9', { versionPrefix: true }), deps)).verdicts)
  t.match(major['CVE-2024-6387'], { observed: 'potential', confidence: 'low', source: 'nvd' }, '9.x may be 9.8p1 or later: a lead, not a finding')
  t.match(major['CVE-2024-6387'].confidenceNote, /shows only 9 of the version/)
  const minor = byId((await matchService(service('OpenSSH', '9.2', { versionPrefix: true }), deps)).verdicts)
  t.match(minor['CVE-2024-6387'], { observed: 'open', confidence: 'high' }, 'every 9.2.x release lies inside 8.5p1 – 9.8p1')
  // CVE-2024-31449 is known from the CNA's ranges only: with a partial version they cannot be read either.
  const redis = byId((await matchService(service('Redis', '7.0', { versionPrefix: true }), deps)).verdicts)
  t.match(redis['CVE-2024-31449'], { observed: 'potential', confidence: 'low' })
})
