// Scan results at enterprise size for bench/results-scale.ts: hosts with 5 to 15 open ports (service, product,
// version, CPE, banner), about 20 findings each from a per-product CVE catalogue with a realistic mix of CVSS,
// severity, KEV (about 4%, a third of them ransomware) and EPSS (most low, a few high). Deterministic per seed
// and host number, so a re-scan can be built from the same host with a few findings gone and a few new.
import { formatCpe } from '../../lib/cpe/name'
import type { PortResult } from '../../lib/domain/hosts'
import type { Confidence } from '../../lib/domain/confidence'
import type { HostScanWrite } from '../../lib/store/results-types'
import type { Kev, NewFinding, ObservedStatus } from '../../lib/domain/findings'
import type { Severity } from '../../lib/domain/severity'

/** mulberry32: a small, fast, seeded generator. */
export function random (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Product { port: number, service: string, product: string, version: string, vendor: string, cpeProduct: string, banner: string }

const PRODUCTS: Product[] = [
  { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1', vendor: 'openbsd', cpeProduct: 'openssh', banner: 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3' },
  { port: 21, service: 'ftp', product: 'ProFTPD', version: '1.3.8', vendor: 'proftpd', cpeProduct: 'proftpd', banner: '220 ProFTPD 1.3.8 Server (Debian) [::ffff:10.0.0.1]' },
  { port: 25, service: 'smtp', product: 'Exim smtpd', version: '4.96', vendor: 'exim', cpeProduct: 'exim', banner: '220 mail.example.internal ESMTP Exim 4.96 Fri, 20 Nov 2026 08:00:00 +0000' },
  { port: 80, service: 'http', product: 'nginx', version: '1.22.1', vendor: 'f5', cpeProduct: 'nginx', banner: 'HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Type: text/html\r\n' },
  { port: 443, service: 'https', product: 'Apache httpd', version: '2.4.62', vendor: 'apache', cpeProduct: 'http_server', banner: 'HTTP/1.1 200 OK\r\nServer: Apache/2.4.62 (Debian)\r\nStrict-Transport-Security: max-age=63072000\r\n' },
  { port: 143, service: 'imap', product: 'Dovecot imapd', version: '2.3.19', vendor: 'dovecot', cpeProduct: 'dovecot', banner: '* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ STARTTLS AUTH=PLAIN] Dovecot (Debian) ready.' },
  { port: 3306, service: 'mysql', product: 'MariaDB', version: '10.11.6', vendor: 'mariadb', cpeProduct: 'mariadb', banner: '5.5.5-10.11.6-MariaDB-0+deb12u1' },
  { port: 5432, service: 'postgresql', product: 'PostgreSQL', version: '15.10', vendor: 'postgresql', cpeProduct: 'postgresql', banner: 'SFATAL VFATAL C28000 Mno pg_hba.conf entry for host' },
  { port: 6379, service: 'redis', product: 'Redis', version: '7.0.15', vendor: 'redis', cpeProduct: 'redis', banner: '# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n' },
  { port: 1883, service: 'mqtt', product: 'Mosquitto', version: '2.0.11', vendor: 'eclipse', cpeProduct: 'mosquitto', banner: 'CONNACK rc=0; $SYS/broker/version: mosquitto version 2.0.11' },
  { port: 5671, service: 'amqps', product: 'RabbitMQ', version: '3.10.8', vendor: 'vmware', cpeProduct: 'rabbitmq', banner: 'AMQP 0-9-1 product=RabbitMQ, version=3.10.8, platform=Erlang/OTP 25.2.3' },
  { port: 8080, service: 'http-proxy', product: 'Apache Tomcat', version: '9.0.70', vendor: 'apache', cpeProduct: 'tomcat', banner: 'HTTP/1.1 200 \r\nContent-Type: text/html;charset=UTF-8\r\nServer: Apache-Coyote/1.1\r\n' },
  { port: 9200, service: 'http', product: 'Elasticsearch', version: '7.17.9', vendor: 'elastic', cpeProduct: 'elasticsearch', banner: '{"name":"es-1","cluster_name":"logs","version":{"number":"7.17.9"}}' },
  { port: 11211, service: 'memcached', product: 'Memcached', version: '1.6.18', vendor: 'memcached', cpeProduct: 'memcached', banner: 'STAT pid 712\r\nSTAT version 1.6.18\r\n' },
  { port: 27017, service: 'mongodb', product: 'MongoDB', version: '6.0.4', vendor: 'mongodb', cpeProduct: 'mongodb', banner: 'MongoDB 6.0.4 ismaster: true maxWireVersion: 17' },
  { port: 3389, service: 'ms-wbt-server', product: 'xrdp', version: '0.9.21', vendor: 'neutrinolabs', cpeProduct: 'xrdp', banner: 'RDP Negotiation Response: PROTOCOL_SSL' },
  { port: 53, service: 'domain', product: 'ISC BIND', version: '9.18.28', vendor: 'isc', cpeProduct: 'bind', banner: 'version.bind: 9.18.28-1~deb12u2-Debian' },
  { port: 161, service: 'snmp', product: 'net-snmp', version: '5.9.3', vendor: 'net-snmp', cpeProduct: 'net-snmp', banner: 'Linux web 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian' },
  { port: 8443, service: 'https-alt', product: 'Jetty', version: '10.0.13', vendor: 'eclipse', cpeProduct: 'jetty', banner: 'HTTP/1.1 302 Found\r\nServer: Jetty(10.0.13)\r\n' },
  { port: 2049, service: 'nfs', product: 'nfsd', version: '4.2', vendor: 'linux', cpeProduct: 'nfs', banner: 'rpcbind program 100003 version 4' }
]

interface Cve {
  id: string
  severity: Severity | 'unknown'
  cvss: number | null
  cvssVector: string | null
  kev: Kev | null
  epss: { score: number, percentile: number, date: string } | null
  description: string
}

const WORDS = ['allows', 'remote', 'attackers', 'to', 'cause', 'a', 'denial', 'of', 'service', 'via', 'crafted', 'request', 'buffer',
  'overflow', 'in', 'the', 'parser', 'authentication', 'bypass', 'when', 'configured', 'with', 'memory', 'corruption', 'leading',
  'execute', 'arbitrary', 'code', 'use-after-free', 'header', 'handling', 'integer', 'privilege', 'escalation', 'local', 'users']

function severityOf (cvss: number | null): Severity | 'unknown' {
  if (cvss === null) return 'unknown'
  return cvss >= 9 ? 'critical' : cvss >= 7 ? 'high' : cvss >= 4 ? 'medium' : cvss > 0 ? 'low' : 'none'
}

/** About 120 CVEs per product; each product's list is what a host port of it may be affected by. */
function catalogue (rnd: () => number): Cve[][] {
  let n = 0
  return PRODUCTS.map((p) => Array.from({ length: 120 }, () => {
    n++
    const r = rnd()
    // About 15% critical, 35% high, 40% medium, 5% low, 5% without a score.
    const cvss = r < 0.05 ? null : r < 0.1 ? 1 + Math.round(rnd() * 28) / 10 : r < 0.5 ? 4 + Math.round(rnd() * 29) / 10 : r < 0.85 ? 7 + Math.round(rnd() * 19) / 10 : 9 + Math.round(rnd() * 10) / 10
    const kev = rnd() < 0.04 ? { dateAdded: '2025-0' + (1 + Math.floor(rnd() * 9)) + '-15', ransomware: rnd() < 0.33 } as Kev : null
    const epssScore = rnd() < 0.15 ? null : Math.round(rnd() ** 4 * 100_000) / 100_000
    const words = Array.from({ length: 30 + Math.floor(rnd() * 40) }, () => WORDS[Math.floor(rnd() * WORDS.length)])
    return {
      id: `CVE-${2015 + (n % 11)}-${String(10_000 + n * 7).padStart(5, '0')}`,
      severity: severityOf(cvss),
      cvss,
      cvssVector: cvss === null ? null : 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
      kev,
      epss: epssScore === null ? null : { score: epssScore, percentile: Math.min(1, Math.round((0.3 + epssScore * 0.7) * 1000) / 1000), date: '2026-11-19' },
      description: `${p.product} ${words.join(' ')}.`
    }
  }))
}

export interface ResultsData {
  /** The scan write of host number i (0-based) at `at`; `rescan` drops a few findings and adds a few. */
  write(i: number, at: string, scanId: string, rescan?: boolean): HostScanWrite
  address(i: number): string
  hostname(i: number): string
  products: readonly Product[]
  /** A CVE id of the catalogue, for the cveId filter. */
  someCve(): string
  /** The tags a first scan gives host number i: one of 20 sites (5% of hosts each), and `pci` on one host in nine. */
  tags(i: number): string[]
}

export function resultsData (seed = 1): ResultsData {
  const cves = catalogue(random(seed))
  const address = (i: number): string => `10.${40 + Math.floor(i / 65_025)}.${Math.floor(i / 255) % 255}.${(i % 255) + 1}`
  const hostname = (i: number): string => `srv-${String(i).padStart(5, '0')}.dc${1 + (i % 3)}.example.internal`
  const tags = (i: number): string[] => i % 9 === 4 ? ['pci', `site-${i % 20}`] : [`site-${i % 20}`]
  return {
    address,
    hostname,
    tags,
    products: PRODUCTS,
    someCve: () => cves[0][3].id,
    write (i, at, scanId, rescan = false) {
      const rnd = random(seed * 1_000_003 + i)
      const addr = address(i)
      const portCount = 5 + Math.floor(rnd() * 11)
      const chosen = [...PRODUCTS].sort(() => rnd() - 0.5).slice(0, portCount).sort((a, b) => a.port - b.port)
      const ports: PortResult[] = chosen.map((p) => ({
        port: p.port,
        protocol: 'tcp',
        state: 'open',
        service: {
          service: p.service,
          product: p.product,
          version: p.version,
          banner: p.banner,
          cpe: [formatCpe({ vendor: p.vendor, product: p.cpeProduct, version: p.version })]
        }
      }))
      // About 20 findings per host, spread over its ports.
      const wanted = 16 + Math.floor(rnd() * 9)
      const findings: NewFinding[] = []
      const later = random(seed * 7_000_003 + i)
      for (let k = 0; k < wanted; k++) {
        const pi = Math.floor(rnd() * chosen.length)
        const p = chosen[pi]
        const list = cves[PRODUCTS.indexOf(p)]
        const cve = list[Math.floor(rnd() * list.length)]
        const r = rnd()
        // A re-scan: about 10% no longer seen (fixed), and a new one in their place.
        if (rescan && later() < 0.1) continue
        findings.push(finding(addr, p, cve, r < 0.7 ? 'high' : r < 0.95 ? 'medium' : 'low', r < 0.9 ? 'open' : r < 0.96 ? 'fixed_by_distribution' : 'potential'))
      }
      if (rescan) {
        for (let k = 0; k < 2; k++) {
          const p = chosen[Math.floor(later() * chosen.length)]
          const list = cves[PRODUCTS.indexOf(p)]
          findings.push(finding(addr, p, list[Math.floor(later() * list.length)], 'high', 'open'))
        }
      }
      return {
        scanId,
        at,
        host: { address: addr, hostnames: [hostname(i)], up: true, rttMs: 0.3 + (i % 10) / 10, ports, closedCount: 0 },
        scannedPorts: chosen.map((p) => p.port),
        findings,
        settledPorts: chosen.map((p) => p.port),
        // A scan adds tags and never removes one: the first scan's stay through the re-scan.
        ...(rescan ? {} : { tags: tags(i) })
      }
    }
  }
}

function finding (address: string, p: Product, cve: Cve, confidence: Confidence, observed: ObservedStatus): NewFinding {
  const cpe = formatCpe({ vendor: p.vendor, product: p.cpeProduct, version: p.version })
  const bound = `${p.version.split('.')[0]}.99`
  return {
    address,
    port: p.port,
    cveId: cve.id,
    severity: cve.severity,
    cvss: cve.cvss,
    cvssVersion: cve.cvss === null ? null : '3.1',
    cvssVector: cve.cvssVector,
    kev: cve.kev,
    epss: cve.epss,
    description: cve.description,
    product: p.product,
    version: observed === 'potential' ? null : p.version,
    matchedCpe: cpe,
    criterion: `cpe:2.3:a:${p.vendor}:${p.cpeProduct}:*:*:*:*:*:*:*:* < ${bound}`,
    reason: `${p.version} < ${bound} (versionEndExcluding)`,
    source: observed === 'fixed_by_distribution' ? 'distribution' : 'nvd',
    rule: `nvd: cpe:2.3:a:${p.vendor}:${p.cpeProduct}:* < ${bound} matched ${p.version}`,
    observed,
    distribution: null,
    confidence,
    confidenceNote: confidence === 'medium' ? 'The banner carries a distro tag: the distro may have backported the fix' : null,
    evidence: p.banner,
    requiresPlatform: []
  }
}
