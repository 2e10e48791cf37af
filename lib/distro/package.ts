// From what service detection saw on the wire to the distribution package behind it: family,
// release, source package and full package version. The tracker data is keyed by source package
// and compares whole package versions, so every piece must come from the banner or from a table
// here; anything the wire does not show stays null rather than guessed.

import type { ServiceInfo } from '../domain/services'
import type { DistroFamily } from './family'

export type { DistroFamily }

/** The families whose packaging a banner can show (Debian's and Ubuntu's revision tags). */
type BannerFamily = 'debian' | 'ubuntu'

export interface DistroPackage {
  family: DistroFamily
  /** Release codename (bookworm, jammy, …), or null when the banner does not tell it. */
  release: string | null
  /** Source package name, or null when the product has no entry in the table. */
  source: string | null
  /** Full package version with the source package's epoch, or null when the revision is not shown. */
  version: string | null
  /** What was read from where, for the finding's evidence. */
  evidence: string
}

/** Debian's `debNNuM` / `~debNN` tags by release number. */
export const DEBIAN_RELEASES: Record<string, string> = {
  6: 'squeeze', 7: 'wheezy', 8: 'jessie', 9: 'stretch', 10: 'buster', 11: 'bullseye', 12: 'bookworm', 13: 'trixie', 14: 'forky'
}

/** Ubuntu release numbers (as in `ubuntu0.22.04` and OSV ecosystems) by codename. */
export const UBUNTU_RELEASES: Record<string, string> = {
  '8.04': 'hardy',
  '10.04': 'lucid',
  '12.04': 'precise',
  '14.04': 'trusty',
  '16.04': 'xenial',
  '18.04': 'bionic',
  '20.04': 'focal',
  '22.04': 'jammy',
  '22.10': 'kinetic',
  '23.04': 'lunar',
  '23.10': 'mantic',
  '24.04': 'noble',
  '24.10': 'oracular',
  '25.04': 'plucky',
  '25.10': 'questing',
  '26.04': 'resolute'
}

/** Which release shipped an OpenSSH upstream version, for Ubuntu revisions that do not name one. */
const OPENSSH_RELEASE: Record<BannerFamily, Record<string, string>> = {
  debian: { '5.5p1': 'squeeze', '6.0p1': 'wheezy', '6.7p1': 'jessie', '7.4p1': 'stretch', '7.9p1': 'buster', '8.4p1': 'bullseye', '9.2p1': 'bookworm', '10.0p1': 'trixie' },
  ubuntu: {
    '4.7p1': 'hardy',
    '5.3p1': 'lucid',
    '5.9p1': 'precise',
    '6.6p1': 'trusty',
    '7.2p2': 'xenial',
    '7.6p1': 'bionic',
    '8.2p1': 'focal',
    '8.9p1': 'jammy',
    '9.0p1': 'kinetic',
    '9.3p1': 'mantic',
    '9.6p1': 'noble',
    '9.7p1': 'oracular',
    '9.9p1': 'plucky'
  }
}

interface SourceRule {
  /** Product names as the probes report them. */
  products: string[]
  /** Source package, given the upstream version and release when known. */
  source: (version: string | undefined, family: DistroFamily, release: string | null) => string | null
  /** Epoch both Debian and Ubuntu give the source package's versions. */
  epoch: number
}

const fixed = (name: string) => (): string => name

const majorMinor = (v: string | undefined): string | undefined => /^(\d+)\.(\d+)/.exec(v ?? '')?.slice(1, 3).join('.')

/**
 * Product → source package, with the epoch the archives use (checked against the Debian archive:
 * openssh 1:, redis 5:, mariadb 1:, bind9 1:, dovecot 1:; the others have none).
 */
export const SOURCE_PACKAGES: SourceRule[] = [
  { products: ['OpenSSH'], source: fixed('openssh'), epoch: 1 },
  {
    products: ['PostgreSQL'],
    // One source package per major version: postgresql-15, and postgresql-9.6 before 10.
    source: (v) => {
      const m = /^(\d+)(?:\.(\d+))?/.exec(v ?? '')
      if (!m) return null
      return Number(m[1]) >= 10 ? `postgresql-${m[1]}` : m[2] !== undefined ? `postgresql-${m[1]}.${m[2]}` : null
    },
    epoch: 0
  },
  {
    products: ['MariaDB'],
    // Releases that carried an older series next to the default keep it in a versioned package.
    source: (v) => {
      const mm = majorMinor(v)
      return mm === '10.3' || mm === '10.5' || mm === '10.6' ? `mariadb-${mm}` : 'mariadb'
    },
    epoch: 1
  },
  { products: ['MySQL'], source: (v) => (majorMinor(v) ? `mysql-${majorMinor(v)}` : null), epoch: 0 },
  { products: ['Apache httpd'], source: fixed('apache2'), epoch: 0 },
  { products: ['nginx'], source: fixed('nginx'), epoch: 0 },
  { products: ['Exim'], source: fixed('exim4'), epoch: 0 },
  { products: ['Postfix'], source: fixed('postfix'), epoch: 0 },
  { products: ['Redis'], source: fixed('redis'), epoch: 5 },
  { products: ['ISC BIND', 'BIND'], source: fixed('bind9'), epoch: 1 },
  { products: ['Dovecot'], source: fixed('dovecot'), epoch: 1 },
  { products: ['ProFTPD', 'ProFTPD mod_sftp'], source: fixed('proftpd-dfsg'), epoch: 0 },
  { products: ['vsftpd'], source: fixed('vsftpd'), epoch: 0 },
  { products: ['Pure-FTPd'], source: fixed('pure-ftpd'), epoch: 0 },
  { products: ['Mosquitto'], source: fixed('mosquitto'), epoch: 0 },
  { products: ['RabbitMQ'], source: fixed('rabbitmq-server'), epoch: 0 },
  { products: ['memcached'], source: fixed('memcached'), epoch: 0 },
  { products: ['lighttpd'], source: fixed('lighttpd'), epoch: 0 },
  { products: ['Squid http proxy'], source: fixed('squid'), epoch: 0 },
  // The detection lab's other Debian daemons (bench/support/detect-lab.ts), epochs as the archive has them.
  { products: ['Apache Tomcat'], source: (v) => /^\d+/.exec(v ?? '') !== null ? `tomcat${/^\d+/.exec(v ?? '')?.[0] ?? ''}` : null, epoch: 0 },
  { products: ['Jetty'], source: (v) => /^\d+/.exec(v ?? '') !== null ? `jetty${/^\d+/.exec(v ?? '')?.[0] ?? ''}` : null, epoch: 0 },
  { products: ['HAProxy'], source: fixed('haproxy'), epoch: 0 },
  { products: ['tinyproxy'], source: fixed('tinyproxy'), epoch: 0 },
  { products: ['Varnish'], source: fixed('varnish'), epoch: 0 },
  { products: ['CUPS'], source: fixed('cups'), epoch: 0 },
  { products: ['dnsmasq'], source: fixed('dnsmasq'), epoch: 0 },
  { products: ['Git'], source: fixed('git'), epoch: 1 },
  { products: ['Dropbear sshd'], source: fixed('dropbear'), epoch: 0 },
  { products: ['Apache ZooKeeper'], source: fixed('zookeeper'), epoch: 0 },
  { products: ['etcd'], source: fixed('etcd'), epoch: 0 },
  { products: ['Prometheus'], source: fixed('prometheus'), epoch: 0 },
  { products: ['ngIRCd'], source: fixed('ngircd'), epoch: 0 },
  { products: ['InspIRCd'], source: fixed('inspircd'), epoch: 0 },
  { products: ['OpenLDAP'], source: fixed('openldap'), epoch: 0 }
]

const RULES = new Map<string, SourceRule>()
for (const rule of SOURCE_PACKAGES) for (const p of rule.products) RULES.set(p.toLowerCase(), rule)

/** The source-package rule for a product name, if the table has one. */
export function sourceRuleFor (product: string | undefined): SourceRule | undefined {
  return product ? RULES.get(product.toLowerCase()) : undefined
}

/** The release a package revision names: `deb12u3`, `~deb12u1`, `~bpo12+1`, `ubuntu0.22.04.1`, `~22.04`. */
export function releaseFromRevision (revision: string): { family: BannerFamily, release: string } | null {
  const deb = /(?:deb|bpo)(\d+)(?:u\d+|\+\d+)/i.exec(revision)
  if (deb && DEBIAN_RELEASES[deb[1]]) return { family: 'debian', release: DEBIAN_RELEASES[deb[1]] }
  const ubuntu = /ubuntu\d+\.(\d{2}\.\d{2})(?:\.|$)/i.exec(revision) ?? /~(\d{2}\.\d{2})(?:\.|$)/.exec(revision)
  if (ubuntu && UBUNTU_RELEASES[ubuntu[1]]) return { family: 'ubuntu', release: UBUNTU_RELEASES[ubuntu[1]] }
  return null
}

function familyOfRevision (revision: string): BannerFamily {
  return /ubuntu/i.test(revision) ? 'ubuntu' : 'debian'
}

/** Un-escape what `printable()` did to a banner, enough to read text out of it. */
function bannerText (service: ServiceInfo): string {
  return (service.banner ?? '').replace(/\\r|\\n/g, ' ').replace(/\\x[0-9a-f]{2}/g, ' ').replace(/\\\\/g, '\\')
}

interface Seen {
  family: BannerFamily
  /** Upstream version as packaged, when it differs from what detection reported. */
  upstream?: string
  revision?: string
  where: string
}

/** Where each product shows its packaging, as the probes pass it on. */
function packagingOf (service: ServiceInfo): Seen | null {
  const product = service.product ?? ''
  const extra = service.extraInfo ?? ''
  const banner = bannerText(service)
  if (product === 'OpenSSH') {
    // The identification comment: `Debian-2+deb12u10`, `Ubuntu-3ubuntu0.13`, `Raspbian-5+deb11u3`.
    const m = /(?:^|[\s;])(Debian|Ubuntu|Raspbian)-(\S+?)(?:;|\s|$)/.exec(`${extra} ${banner}`)
    // Old Ubuntu releases wrote `Debian-8ubuntu1`: the revision tells the family.
    if (m) return { family: m[1] === 'Ubuntu' || /ubuntu/i.test(m[2]) ? 'ubuntu' : 'debian', revision: m[2], where: `SSH identification comment "${m[1]}-${m[2]}"` }
  }
  if (product === 'PostgreSQL') {
    // server_version: `15.20 (Debian 15.20-0+deb12u1)`; PGDG builds come from the PostgreSQL
    // project's own repository, which the distribution trackers do not cover.
    const m = /\((Debian|Ubuntu) (\d[\w.+~]*)-([\w.+~]+)\)/.exec(banner)
    if (m && !/pgdg/i.test(m[3])) return { family: m[1] === 'Ubuntu' ? 'ubuntu' : 'debian', upstream: m[2], revision: m[3], where: `server_version "(${m[1]} ${m[2]}-${m[3]})"` }
    const x = /(?:^|; )(\d[\w.+~]*)-([\w.+~]*(?:deb\d|ubuntu)[\w.+~]*)(?:;|$)/.exec(extra)
    if (x) return { family: familyOfRevision(x[2]), upstream: x[1], revision: x[2], where: `server_version revision "${x[1]}-${x[2]}"` }
    if (/pgdg/i.test(`${banner} ${extra} ${service.distro ?? ''}`)) return null
  }
  if (product === 'MariaDB' || product === 'MySQL') {
    // Handshake server version: `5.5.5-10.11.19-MariaDB-0+deb12u1`, `8.0.36-0ubuntu0.22.04.1`.
    const m = /(?:^|[^\d.])(\d+\.\d+\.\d+[a-z]?)(?:-MariaDB)?-([\w.+~]*(?:deb\d|ubuntu)[\w.+~]*)/i.exec(banner) ??
      /(?:^|[^\d.])()([\w.+~]*(?:deb\d|ubuntu)[\w.+~]*)(?:;|$)/i.exec(extra)
    if (m) return { family: familyOfRevision(m[2]), upstream: m[1] || undefined, revision: m[2], where: `server version revision "${m[2]}"` }
  }
  if (/BIND/i.test(product)) {
    // version.bind: `9.18.33-1~deb12u2-Debian`, `9.18.28-0ubuntu0.22.04.1-Ubuntu`.
    const text = `${service.version ?? ''} ${extra} ${banner}`
    const m = /(\d+\.\d+\.\d+)-([\w.+~]+)-(Debian|Ubuntu)\b/.exec(text)
    if (m) return { family: m[3] === 'Ubuntu' ? 'ubuntu' : 'debian', upstream: m[1], revision: m[2], where: `version.bind "${m[0]}"` }
  }
  // A build string with the package version (Prometheus' `build 2.42.0+ds-5+deb12u1`).
  const build = /\bbuild (\d[\w.+~]*)-([\w.+~]*(?:deb\d+u\d+|ubuntu\d)[\w.+~]*)/i.exec(extra)
  if (build) return { family: familyOfRevision(build[2]), upstream: build[1], revision: build[2], where: `build "${build[1]}-${build[2]}"` }
  // Everything else shows at most the family: `Apache/2.4.62 (Debian)`, `Dovecot (Ubuntu) ready`.
  const family = /\bubuntu\b/i.test(`${service.distro ?? ''} ${extra} ${banner}`)
    ? 'ubuntu'
    : /\b(debian|raspbian)\b|\bdeb\d+u\d+\b/i.test(`${service.distro ?? ''} ${extra} ${banner}`) ? 'debian' : null
  if (!family) return null
  const word = family === 'ubuntu' ? 'Ubuntu' : 'Debian'
  return { family, where: `banner names ${word} without a package revision` }
}

/**
 * The distribution package behind a detected service, or null when nothing on the wire names a
 * Debian-family distribution. `version` is set only when the banner shows the package revision.
 */
export function distroPackageOf (service: ServiceInfo): DistroPackage | null {
  const seen = packagingOf(service)
  if (!seen) return null
  const rule = sourceRuleFor(service.product)
  const upstream = seen.upstream ?? service.version
  let release: string | null = null
  const parts = [seen.where]
  if (seen.revision) {
    const r = releaseFromRevision(seen.revision)
    if (r && r.family === seen.family) {
      release = r.release
      parts.push(`release ${release} from the revision`)
    }
  }
  if (!release && service.product === 'OpenSSH' && upstream && seen.revision) {
    const r = OPENSSH_RELEASE[seen.family][upstream]
    if (r) {
      release = r
      parts.push(`release ${release} from the OpenSSH ${upstream} the release ships`)
    }
  }
  const source = rule ? rule.source(upstream, seen.family, release) : null
  let version: string | null = null
  if (rule && source && seen.revision && upstream) {
    version = `${rule.epoch ? `${rule.epoch}:` : ''}${upstream}-${seen.revision}`
  }
  return { family: seen.family, release, source, version, evidence: parts.join('; ') }
}
