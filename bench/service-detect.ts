// Service detection benchmark: detectService on the open ports of a host (by default the local
// daemons on 127.0.0.1) against `nmap -sV` on the same ports, in the same run.
//
//   npx tsx bench/service-detect.ts [--ports 6379,5432] [--host 127.0.0.1] [--level full|light] [--json]
//
// Without --ports, the candidate ports are those of the daemons this project tests against
// (Redis, PostgreSQL, MariaDB, RabbitMQ and its Erlang ports, Mosquitto, NATS), kept when open.
// nmap is used here only, as the yardstick; the product never calls it.

import { execFile } from 'node:child_process'
import net from 'node:net'
import { detectService } from '../lib/scanner/detect'
import type { ServiceInfo } from '../lib/scanner/types'

export const DEFAULT_PORTS = [1883, 3306, 4222, 4369, 5432, 5672, 6379, 25672]

export interface NmapService {
  port: number
  name?: string
  product?: string
  version?: string
  extraInfo?: string
}

export type Agreement = 'agree' | 'differ' | 'nmap-unnamed' | 'we-unnamed' | 'both-unnamed'

export interface PortComparison {
  port: number
  ours: ServiceInfo
  /** Time our detection took on this port (all ports run at once). */
  oursMs: number
  nmap: NmapService
  agreement: Agreement
  note?: string
}

export interface DetectionBenchResult {
  host: string
  ports: number[]
  level: 'light' | 'full'
  oursMs: number
  nmapMs: number
  /** nmap time divided by ours: above 1 means we are faster. */
  speedup: number
  comparisons: PortComparison[]
  /** Ports nmap names where we name the same product (and a consistent version). */
  agreeOnNmapNamed: number
  nmapNamed: number
  nmapVersion: string
}

function isOpen (host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port })
    const timer = setTimeout(() => { s.destroy(); resolve(false) }, 1000)
    s.once('connect', () => { clearTimeout(timer); s.destroy(); resolve(true) })
    s.once('error', () => { clearTimeout(timer); resolve(false) })
  })
}

function attr (tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)
  if (!m) return undefined
  return m[1].replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&apos;/g, "'").replace(/&amp;/g, '&')
}

/** Read the per-port service elements from `nmap -oX -` output. */
export function parseNmapXml (xml: string): NmapService[] {
  const out: NmapService[] = []
  for (const m of xml.matchAll(/<port protocol="tcp" portid="(\d+)">([\s\S]*?)<\/port>/g)) {
    const svc = /<service\b[^>]*>/.exec(m[2])?.[0]
    const entry: NmapService = { port: Number(m[1]) }
    if (svc) {
      entry.name = attr(svc, 'name')
      entry.product = attr(svc, 'product')
      entry.version = attr(svc, 'version')
      entry.extraInfo = attr(svc, 'extrainfo')
      // A name ending in '?' is nmap's guess from the port number, not a detection.
      if (entry.name?.endsWith('?') || attr(svc, 'method') === 'table') entry.name = undefined
    }
    out.push(entry)
  }
  return out
}

function numeric (v: string): number[] {
  return (v.match(/\d+/g) ?? []).map(Number)
}

function atLeast (v: string, floor: string): boolean {
  const a = numeric(v)
  const b = numeric(floor)
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    if (x !== y) return x > y
  }
  return true
}

/**
 * Same product and a consistent version. nmap words its products differently ("Redis key-value
 * store", "PostgreSQL DB", MariaDB as "MySQL 5.5.5-10.11.19-MariaDB…", Mosquitto in the service
 * name), so ours is looked for in all of nmap's text; a version range such as "9.6.0 or later"
 * agrees with any version inside it.
 */
export function compare (ours: ServiceInfo, nmap: NmapService): { agreement: Agreement, note?: string } {
  const nmapNamed = !!(nmap.product || nmap.name)
  const weNamed = ours.service !== 'unknown'
  if (!nmapNamed && !weNamed) return { agreement: 'both-unnamed' }
  if (!nmapNamed) return { agreement: 'nmap-unnamed' }
  if (!weNamed) return { agreement: 'we-unnamed' }
  const text = [nmap.name, nmap.product, nmap.version, nmap.extraInfo].filter(Boolean).join(' ').toLowerCase()
  if (!nmap.product && !nmap.version && !/ version \S/.test(nmap.name ?? '')) {
    return ours.service === nmap.name || text.includes(ours.service) ? { agreement: 'agree' } : { agreement: 'differ', note: 'service name' }
  }
  const product = (ours.product ?? '').toLowerCase()
  const first = product.split(' ')[0]
  if (!product || !(text.includes(first) || (nmap.product && product.includes(nmap.product.toLowerCase().split(' ')[0])))) {
    return { agreement: 'differ', note: 'product' }
  }
  const nmapVersion = nmap.version ?? /version (\S+)/.exec(nmap.name ?? '')?.[1]
  if (!nmapVersion) return { agreement: 'agree', note: ours.version ? 'we also report the version' : undefined }
  if (!ours.version) return { agreement: 'differ', note: 'nmap has a version, we do not' }
  const later = /^(\S+) or later$/.exec(nmapVersion)
  if (later) {
    return atLeast(ours.version, later[1])
      ? { agreement: 'agree', note: `nmap gives a range (${nmapVersion}); we give the exact version` }
      : { agreement: 'differ', note: 'version outside nmap range' }
  }
  return nmapVersion.includes(ours.version) ? { agreement: 'agree' } : { agreement: 'differ', note: `version ${ours.version} vs ${nmapVersion}` }
}

function runNmap (host: string, ports: number[]): Promise<{ ms: number, xml: string }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    execFile('nmap', ['-sV', '-n', '-Pn', '-sT', '-p', ports.join(','), host, '-oX', '-'],
      { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
        if (err) return reject(err)
        resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, xml: stdout })
      })
  })
}

export async function runDetectionBench (opts: { host?: string, ports?: number[], level?: 'light' | 'full' } = {}): Promise<DetectionBenchResult> {
  const host = opts.host ?? '127.0.0.1'
  const level = opts.level ?? 'full'
  const candidates = opts.ports ?? DEFAULT_PORTS
  const open = (await Promise.all(candidates.map(async (p) => (await isOpen(host, p)) ? p : null)))
    .filter((p): p is number => p !== null)
  if (!open.length) throw new Error(`none of ports ${candidates.join(',')} is open on ${host}`)

  const t0 = process.hrtime.bigint()
  const ours = await Promise.all(open.map(async (port) => {
    const start = process.hrtime.bigint()
    const info = await detectService({ host, port, level })
    return { info, ms: Number(process.hrtime.bigint() - start) / 1e6 }
  }))
  const oursMs = Number(process.hrtime.bigint() - t0) / 1e6

  const nmap = await runNmap(host, open)
  const nmapPorts = parseNmapXml(nmap.xml)
  const nmapVersion = /<nmaprun [^>]*?\sversion="([^"]+)"/.exec(nmap.xml)?.[1] ?? 'unknown'

  const comparisons = open.map((port, i) => {
    const n = nmapPorts.find((p) => p.port === port) ?? { port }
    return { port, ours: ours[i].info, oursMs: ours[i].ms, nmap: n, ...compare(ours[i].info, n) }
  })
  const named = comparisons.filter((c) => c.agreement !== 'nmap-unnamed' && c.agreement !== 'both-unnamed')
  return {
    host,
    ports: open,
    level,
    oursMs,
    nmapMs: nmap.ms,
    speedup: nmap.ms / oursMs,
    comparisons,
    agreeOnNmapNamed: named.filter((c) => c.agreement === 'agree').length,
    nmapNamed: named.length,
    nmapVersion
  }
}

function describe (s: { service?: string, name?: string, product?: string, version?: string }): string {
  return [s.service ?? s.name ?? '-', s.product, s.version].filter(Boolean).join(' ')
}

export function printReport (r: DetectionBenchResult): void {
  const lines = [
    `service detection on ${r.host}, ports ${r.ports.join(',')} (level ${r.level}) vs nmap ${r.nmapVersion} -sV`,
    `  ours: ${(r.oursMs / 1000).toFixed(2)} s   nmap: ${(r.nmapMs / 1000).toFixed(2)} s   nmap/ours: ${r.speedup.toFixed(1)}x`,
    `  agreement on the ports nmap names: ${r.agreeOnNmapNamed}/${r.nmapNamed}`,
    ''
  ]
  for (const c of r.comparisons) {
    lines.push(`  ${String(c.port).padStart(5)}  ${c.oursMs.toFixed(0).padStart(5)} ms  ${describe(c.ours).padEnd(42)} nmap: ${describe(c.nmap).padEnd(48)} ${c.agreement}${c.note ? ` (${c.note})` : ''}`)
  }
  process.stdout.write(lines.join('\n') + '\n')
}

function argValue (name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

if (require.main === module) {
  const ports = argValue('--ports')?.split(',').map(Number).filter((n) => n > 0 && n < 65536)
  const level = argValue('--level') === 'light' ? 'light' : 'full'
  runDetectionBench({ host: argValue('--host'), ports, level }).then((r) => {
    if (process.argv.includes('--json')) process.stdout.write(JSON.stringify(r, null, 2) + '\n')
    else printReport(r)
  }, (err: Error) => {
    process.stderr.write(`service-detect bench failed: ${err.message}\n`)
    process.exitCode = 1
  })
}
