// The labelled set of test/accuracy/labels.json, written out from the facts below: each CVE's affected versions as
// its record states them (read by hand from the fixture records, never computed by the matcher), the Debian fixed
// revisions from the packages' changelog.Debian.gz, and the banners real servers send. `npm run accuracy --
// --write-labels` writes the file; the file is what the gate reads, and a change to it shows in review.

export type Expected = 'open' | 'fixed_by_distribution' | 'not_affected' | 'potential'

export interface Label {
  id: string
  /** `lab`: a daemon of the detection lab (also scored by the pipeline); `matcher`: a banner given to the matcher. */
  kind: 'lab' | 'matcher'
  host: string
  /** Matcher labels: the port; lab labels: the index of the port among the daemon's ports (detect-lab.ts). */
  port: number
  product: string
  version: string | null
  revision: string | null
  /** What the wire showed: the matcher cases are built from it (ServiceInfo fields). */
  banner: { service: string, product: string, version?: string, banner?: string, extraInfo?: string, distro?: string, versionPrefix?: boolean }
  cve: string
  expected: Expected
  reason: string
  /** The lab daemon (detect-lab.ts name) the label is about, for lab labels. */
  daemon?: string
}

type Range = [string | null, string | null, 'excl' | 'incl']

/** Plain dotted numeric versions only (the labels' upstream builds): 7.0.15 < 7.0.16 < 7.2. */
function cmp (a: string, b: string): number {
  const x = a.split('.').map(Number)
  const y = b.split('.').map(Number)
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

function inRanges (v: string, ranges: Range[]): Range | null {
  for (const r of ranges) {
    const [lo, hi, end] = r
    if (lo !== null && cmp(v, lo) < 0) continue
    if (hi !== null && (end === 'excl' ? cmp(v, hi) >= 0 : cmp(v, hi) > 0)) continue
    return r
  }
  return null
}

function rangeText (r: Range): string {
  return `${r[0] !== null ? `>= ${r[0]}` : ''}${r[0] !== null && r[1] !== null ? ', ' : ''}${r[1] !== null ? `${r[2] === 'excl' ? '<' : '<='} ${r[1]}` : ''}`
}

interface RangeCve { cve: string, source: string, ranges: Range[], product: string }

let seq = 0
const TEST_NETS = ['192.0.2', '198.51.100', '203.0.113']
function host (): string {
  const n = seq++
  return `${TEST_NETS[n % 3]}.${1 + Math.floor(n / 3) % 254}`
}

function upstreamLabels (product: string, port: number, service: string, versions: string[], cves: RangeCve[],
  shipped: Record<string, Record<string, string>> = {}): Label[] {
  const out: Label[] = []
  for (const v of versions) {
    const h = host()
    for (const c of cves) {
      const r = inRanges(v, c.ranges)
      const fix = shipped[v]?.[c.cve]
      let expected: Expected
      let reason: string
      if (r === null) {
        expected = 'not_affected'
        reason = `${c.source} ranges of ${c.product} (${c.ranges.map(rangeText).join('; ')}) do not hold ${v}`
      } else if (fix !== undefined) {
        expected = 'potential'
        reason = `${v} is in ${c.source} range ${rangeText(r)}, but it is an upstream version Debian packages, fixed in ${fix}: with no distribution sign on the wire the revision is unknown, so the verdict is a lead`
      } else {
        expected = 'open'
        reason = `${c.source} range ${rangeText(r)} of ${c.product} holds ${v}; the banner shows no distribution, so the upstream version decides`
      }
      out.push({ id: `${product}-${v}-${c.cve}`, kind: 'matcher', host: h, port, product, version: v, revision: null, banner: { service, product, version: v }, cve: c.cve, expected, reason })
    }
  }
  return out
}

// OpenSSH. NVD (test/fixtures/nvd/cves): CVE-2023-51385 openbsd:openssh < 9.6; CVE-2024-6387 < 4.4, 4.4:-, 8.5:p1,
// >= 8.6 < 9.8, 9.8:-; CVE-2023-51767 openssh:openssh <= 9.6; CVE-2016-6210 <= 7.2; CVE-2018-15473 <= 7.7. CNA
// (cvelistV5): CVE-2025-61985 OpenBSD/OpenSSH "0" < 10.1, NVD without configurations. A bound without a patch level
// names the release with its patch levels (9.6 holds 9.6p1, before 9.8 excludes 9.8p1).
const OPENSSH_CVES = ['CVE-2023-51385', 'CVE-2024-6387', 'CVE-2023-51767', 'CVE-2016-6210', 'CVE-2018-15473', 'CVE-2025-61985'] as const
const OPENSSH_UPSTREAM: Record<string, Partial<Record<typeof OPENSSH_CVES[number], string>>> = {
  // version: CVE → why it is open (absent: not affected)
  '4.3p2': { 'CVE-2023-51385': '< 9.6', 'CVE-2024-6387': '< 4.4', 'CVE-2023-51767': '<= 9.6', 'CVE-2016-6210': '<= 7.2', 'CVE-2018-15473': '<= 7.7', 'CVE-2025-61985': '< 10.1' },
  '4.4p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2023-51767': '<= 9.6', 'CVE-2016-6210': '<= 7.2', 'CVE-2018-15473': '<= 7.7', 'CVE-2025-61985': '< 10.1' },
  '7.2p2': { 'CVE-2023-51385': '< 9.6', 'CVE-2023-51767': '<= 9.6', 'CVE-2016-6210': '<= 7.2 (7.2 holds 7.2p2)', 'CVE-2018-15473': '<= 7.7', 'CVE-2025-61985': '< 10.1' },
  '7.3p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2023-51767': '<= 9.6', 'CVE-2018-15473': '<= 7.7', 'CVE-2025-61985': '< 10.1' },
  '7.7p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2023-51767': '<= 9.6', 'CVE-2018-15473': '<= 7.7 (7.7 holds 7.7p1)', 'CVE-2025-61985': '< 10.1' },
  '7.8p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2023-51767': '<= 9.6', 'CVE-2025-61985': '< 10.1' },
  '8.4p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2023-51767': '<= 9.6', 'CVE-2025-61985': '< 10.1' },
  '8.5p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2024-6387': '= 8.5p1', 'CVE-2023-51767': '<= 9.6', 'CVE-2025-61985': '< 10.1' },
  '8.6p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2024-6387': '>= 8.6, < 9.8', 'CVE-2023-51767': '<= 9.6', 'CVE-2025-61985': '< 10.1' },
  '9.3p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2024-6387': '>= 8.6, < 9.8', 'CVE-2023-51767': '<= 9.6', 'CVE-2025-61985': '< 10.1' },
  '9.5p1': { 'CVE-2023-51385': '< 9.6', 'CVE-2024-6387': '>= 8.6, < 9.8', 'CVE-2023-51767': '<= 9.6', 'CVE-2025-61985': '< 10.1' },
  '9.6p1': { 'CVE-2024-6387': '>= 8.6, < 9.8', 'CVE-2023-51767': '<= 9.6 (9.6 holds 9.6p1)', 'CVE-2025-61985': '< 10.1' },
  '9.7p1': { 'CVE-2024-6387': '>= 8.6, < 9.8', 'CVE-2025-61985': '< 10.1' },
  '9.8p1': { 'CVE-2025-61985': '< 10.1' },
  '9.9p1': { 'CVE-2025-61985': '< 10.1' },
  '10.0p1': { 'CVE-2025-61985': '< 10.1' },
  '10.1p1': {},
  '10.2p1': {}
}
const OPENSSH_SOURCE: Record<string, string> = {
  'CVE-2025-61985': 'the CNA record (cvelistV5; the NVD has no configuration)',
  'CVE-2023-51767': 'the NVD configuration (openssh:openssh)'
}
/** openssh 1:9.2p1-2+deb12uN: the revision that fixed each CVE (changelog.Debian.gz; CVE-2024-6387 from DSA-5724-1). */
const OPENSSH_DEBIAN_FIX: Record<string, number | 'open'> = {
  'CVE-2023-51385': 2, 'CVE-2024-6387': 3, 'CVE-2023-51767': 'open', 'CVE-2025-61985': 8
}

function openssh (labLines: Label[]): void {
  for (const [v, open] of Object.entries(OPENSSH_UPSTREAM)) {
    const h = host()
    for (const cve of OPENSSH_CVES) {
      const why = open[cve]
      const src = OPENSSH_SOURCE[cve] ?? 'the NVD configuration'
      labLines.push({
        id: `openssh-${v}-${cve}`, kind: 'matcher', host: h, port: 22, product: 'OpenSSH', version: v, revision: null,
        banner: { service: 'ssh', product: 'OpenSSH', version: v, banner: `SSH-2.0-OpenSSH_${v}\\r\\n`, extraInfo: 'protocol 2.0' },
        cve,
        expected: why !== undefined ? 'open' : 'not_affected',
        reason: why !== undefined ? `${src}: ${why} holds ${v}; no distribution on the wire` : `${src} does not hold ${v}`
      })
    }
  }
  // Debian bookworm revisions as the SSH banner shows them (changelog.Debian.gz of openssh-server).
  for (const u of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
    const h = host()
    const revision = `2+deb12u${u}`
    for (const cve of OPENSSH_CVES) {
      const fix = OPENSSH_DEBIAN_FIX[cve]
      let expected: Expected
      let reason: string
      if (fix === undefined) {
        expected = 'not_affected'
        reason = `${OPENSSH_SOURCE[cve] ?? 'the NVD configuration'} does not hold 9.2p1`
      } else if (fix === 'open') {
        expected = 'open'
        reason = 'Debian lists it <unfixed> (unimportant) for bookworm: still open, at the low severity Debian gives it'
      } else if (u >= fix) {
        expected = 'fixed_by_distribution'
        reason = `9.2p1 is affected upstream; Debian fixed it in 1:9.2p1-2+deb12u${fix} and the banner shows deb12u${u}`
      } else {
        expected = 'open'
        reason = `9.2p1 is affected upstream; Debian fixed it only in 1:9.2p1-2+deb12u${fix}, the banner shows deb12u${u}`
      }
      labLines.push({
        id: `openssh-deb12u${u}-${cve}`, kind: u === 10 ? 'lab' : 'matcher', host: u === 10 ? 'lab:OpenSSH' : h, port: 22, product: 'OpenSSH', version: '9.2p1', revision,
        banner: { service: 'ssh', product: 'OpenSSH', version: '9.2p1', banner: `SSH-2.0-OpenSSH_9.2p1 Debian-${revision}\\r\\n`, extraInfo: `Debian-${revision}; protocol 2.0`, distro: `deb12u${u}` },
        cve,
        expected,
        reason,
        ...(u === 10 ? { daemon: 'OpenSSH' } : {})
      })
    }
  }
  // The upstream version Debian bookworm ships, with no distribution sign: the fixes are in revisions the wire hides.
  const h = host()
  for (const cve of OPENSSH_CVES) {
    const fix = OPENSSH_DEBIAN_FIX[cve]
    labLines.push({
      id: `openssh-9.2p1-nodistro-${cve}`, kind: 'matcher', host: h, port: 22, product: 'OpenSSH', version: '9.2p1', revision: null,
      banner: { service: 'ssh', product: 'OpenSSH', version: '9.2p1', banner: 'SSH-2.0-OpenSSH_9.2p1\\r\\n', extraInfo: 'protocol 2.0' },
      cve,
      expected: fix === undefined ? 'not_affected' : fix === 'open' ? 'open' : 'potential',
      reason: fix === undefined
        ? 'the upstream ranges do not hold 9.2p1'
        : fix === 'open' ? 'affected upstream and unfixed in every Debian revision: open whichever build it is'
          : `affected upstream, fixed by Debian bookworm in 1:9.2p1-2+deb12u${fix}: the wire hides whether this is that package`
    })
  }
  // Releases no tracker covers any more: the upstream version decides, and the release is itself a finding.
  const eol: Array<{ id: string, v: string, revision: string, release: string, open: string[] }> = [
    { id: 'wheezy', v: '6.0p1', revision: '4+deb7u2', release: 'Debian 7 (wheezy), LTS ended 2018-05-31', open: ['CVE-2023-51385', 'CVE-2023-51767', 'CVE-2016-6210', 'CVE-2018-15473', 'CVE-2025-61985'] },
    { id: 'hardy', v: '4.7p1', revision: '8ubuntu1', release: 'Ubuntu 8.04 (hardy), support ended 2013-05-09', open: ['CVE-2023-51385', 'CVE-2023-51767', 'CVE-2016-6210', 'CVE-2018-15473', 'CVE-2025-61985'] }
  ]
  for (const e of eol) {
    const h = host()
    const banner = { service: 'ssh', product: 'OpenSSH', version: e.v, banner: `SSH-2.0-OpenSSH_${e.v} Debian-${e.revision}\\r\\n`, extraInfo: `Debian-${e.revision}; protocol 2.0` }
    for (const cve of OPENSSH_CVES) {
      const open = e.open.includes(cve)
      labLines.push({
        id: `openssh-eol-${e.id}-${cve}`, kind: 'matcher', host: h, port: 22, product: 'OpenSSH', version: e.v, revision: e.revision, banner, cve,
        expected: open ? 'open' : 'not_affected',
        reason: open
          ? `${e.release}: no tracker covers it, the release's last revision predates the CVE, and the upstream range holds ${e.v}`
          : `the upstream ranges do not hold ${e.v}`
      })
    }
    labLines.push({
      id: `openssh-eol-${e.id}-VULNSCAN-OS-EOL`, kind: 'matcher', host: h, port: 22, product: 'OpenSSH', version: e.v, revision: e.revision, banner,
      cve: 'VULNSCAN-OS-EOL', expected: 'open', reason: `the banner's revision ${e.revision} names ${e.release}`
    })
  }
}

export function buildLabels (): Label[] {
  seq = 0
  const out: Label[] = []
  openssh(out)
  // Redis (INFO server shows the version alone). NVD: CVE-2021-32675, CVE-2022-24834, CVE-2022-35951, CVE-2023-22458,
  // CVE-2023-28856; CVE-2022-0543 names only redis:- (Debian's packaging) with the OS as platform: no upstream build
  // is affected. CNA: CVE-2024-31449 (no NVD record in the set).
  out.push(...upstreamLabels('Redis', 6379, 'redis',
    ['5.0.13', '5.0.14', '6.0.15', '6.0.16', '6.0.18', '6.0.19', '6.0.20', '6.2.5', '6.2.6', '6.2.8', '6.2.9', '6.2.11', '6.2.12', '6.2.13', '6.2.16',
      '7.0.4', '7.0.5', '7.0.7', '7.0.8', '7.0.10', '7.0.11', '7.0.12', '7.0.15', '7.2.5', '7.2.6', '7.4.1'],
    [
      { cve: 'CVE-2021-32675', source: 'NVD', product: 'redis:redis', ranges: [['5.0.0', '5.0.14', 'excl'], ['6.0.0', '6.0.16', 'excl'], ['6.2.0', '6.2.6', 'excl']] },
      { cve: 'CVE-2022-24834', source: 'NVD', product: 'redis:redis', ranges: [['2.6.0', '6.0.20', 'excl'], ['6.2.0', '6.2.13', 'excl'], ['7.0.0', '7.0.12', 'excl']] },
      { cve: 'CVE-2022-35951', source: 'NVD', product: 'redis:redis', ranges: [['7.0.0', '7.0.5', 'excl']] },
      { cve: 'CVE-2023-22458', source: 'NVD', product: 'redis:redis', ranges: [['6.2.0', '6.2.9', 'excl'], ['7.0.0', '7.0.8', 'excl']] },
      { cve: 'CVE-2023-28856', source: 'NVD', product: 'redis:redis', ranges: [[null, '6.0.19', 'excl'], ['6.2.0', '6.2.12', 'excl'], ['7.0.0', '7.0.11', 'excl']] },
      { cve: 'CVE-2022-0543', source: 'NVD', product: 'redis:redis:- (Debian and Ubuntu packages only)', ranges: [] },
      { cve: 'CVE-2024-31449', source: 'CNA', product: 'redis/redis', ranges: [['2.6', '6.2.16', 'excl'], ['7.0.0', '7.2.6', 'excl'], ['7.3.0', '7.4.1', 'excl']] }
    ],
    { '7.0.15': { 'CVE-2024-31449': '5:7.0.15-1~deb12u2' } }))
  // Mosquitto (the $SYS version). NVD: CVE-2021-34432 <= 2.0.7, CVE-2023-28366 >= 1.3.2 < 2.0.16; CNA: CVE-2024-8376
  // lists 2.0.18 affected, 2.0.19 unaffected, defaultStatus unaffected.
  out.push(...upstreamLabels('Mosquitto', 1883, 'mqtt', ['1.3.1', '1.6.9', '2.0.7', '2.0.8', '2.0.10', '2.0.15', '2.0.16', '2.0.18', '2.0.19'], [
    { cve: 'CVE-2021-34432', source: 'NVD', product: 'eclipse:mosquitto', ranges: [[null, '2.0.7', 'incl']] },
    { cve: 'CVE-2023-28366', source: 'NVD', product: 'eclipse:mosquitto', ranges: [['1.3.2', '2.0.16', 'excl']] },
    { cve: 'CVE-2024-8376', source: 'CNA', product: 'Eclipse Foundation/Mosquitto', ranges: [['2.0.18', '2.0.18', 'incl']] }
  ]))
  // Exim (the SMTP greeting). NVD: CVE-2019-10149 >= 4.87 <= 4.91, CVE-2020-28017 < 4.94.1 (4.94.1 itself is left out:
  // the NVD's bound says 4.94.1, the CVE's text says "before 4.94.2").
  out.push(...upstreamLabels('Exim', 25, 'smtp', ['4.86', '4.87', '4.89', '4.91', '4.92', '4.93', '4.94', '4.94.2', '4.97'], [
    { cve: 'CVE-2019-10149', source: 'NVD', product: 'exim:exim', ranges: [['4.87', '4.91', 'incl']] },
    { cve: 'CVE-2020-28017', source: 'NVD', product: 'exim:exim', ranges: [[null, '4.94.1', 'excl']] }
  ]))
  // nginx (the Server header). NVD: CVE-2021-23017 f5:nginx >= 0.6.18 < 1.20.1; CNA (F5, "NGINX Open Source"; the NVD
  // record has no configuration): CVE-2024-24990 >= 1.25.0 < 1.25.4, CVE-2025-53859 >= 0.7 < 1.29.1. The renamed
  // product: CVE-2024-7347, whose NVD configuration names only f5:nginx_open_source (>= 1.5.13 < 1.26.2, and 1.27.0),
  // decided through the rename the CPE dictionary import learns (f5:nginx → f5:nginx_open_source), as the CNA's
  // "NGINX Open Source" >= 1.5.13, unaffected from 1.26.2, would (1.27.0 left out: the two disagree on it).
  out.push(...upstreamLabels('nginx', 80, 'http', ['0.6.17', '1.5.12', '1.5.13', '1.18.0', '1.20.0', '1.20.1', '1.24.0', '1.25.3', '1.25.4', '1.26.1', '1.26.2'], [
    { cve: 'CVE-2021-23017', source: 'NVD', product: 'f5:nginx', ranges: [['0.6.18', '1.20.1', 'excl']] },
    { cve: 'CVE-2024-24990', source: 'CNA', product: 'F5/NGINX Open Source', ranges: [['1.25.0', '1.25.4', 'excl']] },
    { cve: 'CVE-2024-7347', source: 'NVD (through the f5:nginx_open_source rename)', product: 'f5:nginx_open_source', ranges: [['1.5.13', '1.26.2', 'excl']] },
    { cve: 'CVE-2025-53859', source: 'CNA', product: 'F5/NGINX Open Source', ranges: [['0.7', '1.29.1', 'excl']] }
  ], { '1.18.0': { 'CVE-2021-23017': '1.18.0-6.1 (the nginx changelog; Debian 11 ships 1.18.0)' } }))
  // HAProxy (the statistics page's version), NVD CVE-2023-40225: <= 2.0.32, >= 2.2.0 <= 2.2.30, >= 2.4.0 <= 2.4.23,
  // >= 2.5.0 < 2.6.15, >= 2.7.0 < 2.7.10, >= 2.8.0 < 2.8.2 (2.1 and 2.3 are left out: the text names them, the
  // configuration does not). Debian fixed it in 2.6.12-1+deb12u1.
  out.push(...upstreamLabels('HAProxy', 8404, 'http', ['2.0.32', '2.0.33', '2.2.30', '2.2.31', '2.4.23', '2.4.24', '2.5.0', '2.6.12', '2.6.14', '2.6.15', '2.7.9', '2.7.10', '2.8.1', '2.8.2'], [
    { cve: 'CVE-2023-40225', source: 'NVD', product: 'haproxy:haproxy', ranges: [[null, '2.0.32', 'incl'], ['2.2.0', '2.2.30', 'incl'], ['2.4.0', '2.4.23', 'incl'], ['2.5.0', '2.6.15', 'excl'], ['2.7.0', '2.7.10', 'excl'], ['2.8.0', '2.8.2', 'excl']] }
  ], { '2.6.12': { 'CVE-2023-40225': '2.6.12-1+deb12u1' } }))
  // Apache ZooKeeper (`srvr`), NVD CVE-2023-44981: < 3.7.2, >= 3.8.0 < 3.8.3, = 3.9.0. Debian fixed it in 3.8.0-11+deb12u1.
  out.push(...upstreamLabels('Apache ZooKeeper', 2181, 'zookeeper', ['3.6.4', '3.7.1', '3.7.2', '3.8.0', '3.8.2', '3.8.3', '3.9.0', '3.9.1'], [
    { cve: 'CVE-2023-44981', source: 'NVD', product: 'apache:zookeeper', ranges: [[null, '3.7.2', 'excl'], ['3.8.0', '3.8.3', 'excl'], ['3.9.0', '3.9.0', 'incl']] }
  ], { '3.8.0': { 'CVE-2023-44981': '3.8.0-11+deb12u1' } }))
  // memcached (`version`), NVD CVE-2023-46852 < 1.6.22 (test/fixtures/udp). Debian fixed it in 1.6.18-1+deb12u1.
  out.push(...upstreamLabels('memcached', 11211, 'memcached', ['1.6.17', '1.6.18', '1.6.21', '1.6.22', '1.6.23'], [
    { cve: 'CVE-2023-46852', source: 'NVD', product: 'memcached:memcached', ranges: [[null, '1.6.22', 'excl']] }
  ], { '1.6.18': { 'CVE-2023-46852': '1.6.18-1+deb12u1' } }))
  // PostgreSQL (server_version without a distribution). NVD: CVE-2023-39417 and CVE-2023-5869.
  out.push(...upstreamLabels('PostgreSQL', 5432, 'postgresql', ['11.20', '11.21', '12.15', '12.16', '13.11', '13.12', '13.22', '14.8', '14.9', '14.10', '14.19', '15.3', '15.4', '15.5', '15.14', '16.0', '16.1', '16.10', '17.5', '17.6'], [
    { cve: 'CVE-2023-39417', source: 'NVD', product: 'postgresql:postgresql', ranges: [['11.0', '11.21', 'excl'], ['12.0', '12.16', 'excl'], ['13.0', '13.12', 'excl'], ['14.0', '14.9', 'excl'], ['15.0', '15.4', 'excl']] },
    { cve: 'CVE-2023-5869', source: 'NVD', product: 'postgresql:postgresql', ranges: [['11.0', '11.22', 'excl'], ['12.0', '12.17', 'excl'], ['13.0', '13.13', 'excl'], ['14.0', '14.10', 'excl'], ['15.0', '15.5', 'excl'], ['16.0', '16.0', 'incl']] },
    // CNA (n/a / PostgreSQL, versionType rpm, defaultStatus unaffected); the NVD record is Deferred, without configurations.
    // The versions at and above each bound are decided by the record's defaultStatus (unaffected) alone.
    { cve: 'CVE-2025-8714', source: 'CNA', product: 'n/a/PostgreSQL', ranges: [['0', '13.22', 'excl'], ['14', '14.19', 'excl'], ['15', '15.14', 'excl'], ['16', '16.10', 'excl'], ['17', '17.6', 'excl']] }
  ]))
  // Lab daemons besides OpenSSH, as Debian bookworm runs them (their banners show no revision).
  const lab: Array<Omit<Label, 'kind' | 'host' | 'banner' | 'id'> & { daemon: string, service: string }> = [
    { daemon: 'nginx', service: 'http', port: 0, product: 'nginx', version: '1.22.1', revision: '9+deb12u11', cve: 'CVE-2021-23017', expected: 'not_affected', reason: 'NVD f5:nginx >= 0.6.18 < 1.20.1 does not hold 1.22.1' },
    { daemon: 'nginx', service: 'http', port: 0, product: 'nginx', version: '1.22.1', revision: '9+deb12u11', cve: 'CVE-2024-24990', expected: 'not_affected', reason: 'the CNA range >= 1.25.0 < 1.25.4 does not hold 1.22.1 (a near miss below it)' },
    { daemon: 'nginx', service: 'http', port: 0, product: 'nginx', version: '1.22.1', revision: '9+deb12u11', cve: 'CVE-2025-53859', expected: 'potential', reason: 'the CNA range >= 0.7 < 1.29.1 holds 1.22.1, Debian fixed it in 1.22.1-9+deb12u3 (changelog) and runs deb12u11, which the Server header hides' },
    { daemon: 'nginx', service: 'http', port: 0, product: 'nginx', version: '1.22.1', revision: '9+deb12u11', cve: 'CVE-2024-7347', expected: 'potential', reason: 'the range >= 1.5.13 < 1.26.2 (NVD under the renamed f5:nginx_open_source, and the CNA) holds 1.22.1; Debian fixed it in 1.22.1-9+deb12u2 (changelog) and runs deb12u11, which the Server header hides: a lead, never open' },
    { daemon: 'Mosquitto', service: 'mqtt', port: 0, product: 'Mosquitto', version: '2.0.11', revision: '1.2+deb12u2', cve: 'CVE-2021-34432', expected: 'not_affected', reason: 'NVD <= 2.0.7 does not hold 2.0.11' },
    { daemon: 'Mosquitto', service: 'mqtt', port: 0, product: 'Mosquitto', version: '2.0.11', revision: '1.2+deb12u2', cve: 'CVE-2023-28366', expected: 'potential', reason: 'NVD >= 1.3.2 < 2.0.16 holds 2.0.11; Debian fixed it in 2.0.11-1.2+deb12u1 (changelog) and runs deb12u2, which the $SYS version hides' },
    { daemon: 'Mosquitto', service: 'mqtt', port: 0, product: 'Mosquitto', version: '2.0.11', revision: '1.2+deb12u2', cve: 'CVE-2024-8376', expected: 'not_affected', reason: 'the CNA lists 2.0.18 only (defaultStatus unaffected); Debian backported the fix in deb12u2 anyway' },
    { daemon: 'Exim', service: 'smtp', port: 0, product: 'Exim', version: '4.96', revision: '15+deb12u11', cve: 'CVE-2019-10149', expected: 'not_affected', reason: 'NVD >= 4.87 <= 4.91 does not hold 4.96' },
    { daemon: 'Exim', service: 'smtp', port: 0, product: 'Exim', version: '4.96', revision: '15+deb12u11', cve: 'CVE-2020-28017', expected: 'not_affected', reason: 'NVD < 4.94.1 does not hold 4.96' },
    { daemon: 'HAProxy', service: 'http', port: 1, product: 'HAProxy', version: '2.6.12', revision: '1+deb12u4', cve: 'CVE-2023-40225', expected: 'potential', reason: 'NVD >= 2.5.0 < 2.6.15 holds 2.6.12; Debian fixed it in 2.6.12-1+deb12u1 (changelog) and runs deb12u4, which the statistics page hides' },
    { daemon: 'HAProxy', service: 'http', port: 0, product: 'HAProxy', version: null, revision: '1+deb12u4', cve: 'CVE-2023-40225', expected: 'potential', reason: 'the port without a backend names HAProxy but no version: every HAProxy CVE is a lead there' },
    { daemon: 'ZooKeeper', service: 'zookeeper', port: 0, product: 'Apache ZooKeeper', version: '3.8.0', revision: '11+deb12u2', cve: 'CVE-2023-44981', expected: 'potential', reason: 'NVD >= 3.8.0 < 3.8.3 holds 3.8.0; Debian fixed it in 3.8.0-11+deb12u1 (changelog, DSA-5544) and runs deb12u2, which `srvr` hides' },
    { daemon: 'ZooKeeper', service: 'zookeeper', port: 0, product: 'Apache ZooKeeper', version: '3.8.0', revision: '11+deb12u2', cve: 'VULNSCAN-ZOOKEEPER-NOAUTH', expected: 'open', reason: 'the lab\'s ZooKeeper has no authentication and no ACL on its znodes: anyone who reaches the port reads them' },
    { daemon: 'memcached', service: 'memcached', port: 0, product: 'memcached', version: '1.6.18', revision: '1+deb12u1', cve: 'CVE-2023-46852', expected: 'potential', reason: 'NVD < 1.6.22 holds 1.6.18; Debian fixed it in 1.6.18-1+deb12u1 (changelog), which `version` hides' },
    { daemon: 'memcached', service: 'memcached', port: 0, product: 'memcached', version: '1.6.18', revision: '1+deb12u1', cve: 'VULNSCAN-MEMCACHED-NOAUTH', expected: 'open', reason: 'the lab\'s memcached runs without SASL: `stats` is answered to anyone' },
    // Exposure checks: what the lab's configurations really expose (daemon-specs.ts).
    { daemon: 'Exim', service: 'smtp', port: 0, product: 'Exim', version: '4.96', revision: '15+deb12u11', cve: 'VULNSCAN-TLS-SELF-SIGNED', expected: 'open', reason: 'the lab gives exim4 a self-signed certificate (STARTTLS)' },
    { daemon: 'Exim', service: 'smtp', port: 0, product: 'Exim', version: '4.96', revision: '15+deb12u11', cve: 'VULNSCAN-TLS-LEGACY-PROTOCOL', expected: 'open', reason: 'Debian\'s exim4-daemon-light (GnuTLS, the lab sets no tls_require_ciphers) completes a TLS 1.0/1.1 handshake after STARTTLS' },
    { daemon: 'Mosquitto', service: 'mqtt', port: 0, product: 'Mosquitto', version: '2.0.11', revision: '1.2+deb12u2', cve: 'VULNSCAN-TLS-SELF-SIGNED', expected: 'open', reason: 'the lab gives mosquitto a self-signed certificate on its TLS listener' },
    { daemon: 'Mosquitto', service: 'mqtt', port: 0, product: 'Mosquitto', version: '2.0.11', revision: '1.2+deb12u2', cve: 'VULNSCAN-MQTT-ANONYMOUS', expected: 'open', reason: 'the lab\'s mosquitto listener sets allow_anonymous true' }
  ]
  for (const l of lab) {
    out.push({
      id: `lab-${l.daemon}-${l.port}-${l.cve}`, kind: 'lab', host: `lab:${l.daemon}`, port: l.port, product: l.product, version: l.version, revision: l.revision,
      banner: { service: l.service, product: l.product, ...(l.version !== null ? { version: l.version } : {}) }, cve: l.cve, expected: l.expected, reason: l.reason, daemon: l.daemon
    })
  }
  // Rejected CVEs are never reported, whatever product they once named.
  out.push({ id: 'rejected-CVE-2021-44457', kind: 'matcher', host: host(), port: 22, product: 'OpenSSH', version: '10.2p1', revision: null, banner: { service: 'ssh', product: 'OpenSSH', version: '10.2p1' }, cve: 'CVE-2021-44457', expected: 'not_affected', reason: 'the NVD record is Rejected ("This is unused")' })
  out.push({ id: 'rejected-CVE-2024-2370', kind: 'matcher', host: host(), port: 22, product: 'OpenSSH', version: '10.2p1', revision: null, banner: { service: 'ssh', product: 'OpenSSH', version: '10.2p1' }, cve: 'CVE-2024-2370', expected: 'not_affected', reason: 'the CVE record is REJECTED (a duplicate of CVE-2018-5341)' })
  return out
}
