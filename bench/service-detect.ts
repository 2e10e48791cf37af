// Service detection benchmark: detectService on the open ports of a host (by default the local
// daemons on 127.0.0.1) against `nmap -sV` on the same ports, in the same run.
//
//   npx tsx bench/service-detect.ts [--ports 6379,5432] [--host 127.0.0.1] [--level full|light] [--json]
//   npx tsx bench/service-detect.ts --lab [--daemons lighttpd,nginx,...] [--level full|light] [--json]
//
// Without --ports, the candidate ports are those of the daemons this project tests against
// (Redis, PostgreSQL, MariaDB, RabbitMQ and its Erlang ports, Mosquitto, NATS), kept when open.
// With --lab, it starts the lab instead (bench/support/detect-lab.ts): Debian's daemons, each on a
// loopback address of its own, held to what each shows on the wire; every daemon is stopped at the
// end, on failure and on Ctrl-C.
// nmap is used here only, as the yardstick; the product never calls it.

import { execFile, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import os from 'node:os'
import { detectService } from '../lib/scanner/detect'
import type { ServiceInfo } from '../lib/domain/services'
import { availableLab, expectedVersion, oursRight, selfVersion, upstream, versionIs, type LabDaemon, type WireTruth } from './support/detect-lab'
import { stopAllDaemons, type RunningDaemon } from './support/debian-daemon'

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
      if (entry.name?.endsWith('?') || entry.name === 'unknown' || attr(svc, 'method') === 'table') entry.name = undefined
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

/** The nmap child running now, so that Ctrl-C can stop it with the lab. */
let nmapChild: ChildProcess | undefined

function runNmap (hosts: string[], ports: number[]): Promise<{ ms: number, xml: string }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    nmapChild = execFile('nmap', ['-sV', '-n', '-Pn', '-sT', '-p', ports.join(','), ...hosts, '-oX', '-'],
      { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
        nmapChild = undefined
        if (err) return reject(err)
        resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, xml: stdout })
      })
  })
}

/** The per-port services of each host in `nmap -oX -` output, by address. */
export function parseNmapHosts (xml: string): Map<string, NmapService[]> {
  const out = new Map<string, NmapService[]>()
  for (const m of xml.matchAll(/<host\b[\s\S]*?<\/host>/g)) {
    const addr = /<address addr="([^"]+)"/.exec(m[0])?.[1]
    if (addr) out.set(addr, parseNmapXml(m[0]))
  }
  return out
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

  const nmap = await runNmap([host], open)
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

/** Ours against nmap on one lab port, judged by what the wire shows. */
export type Verdict = 'same' | 'better' | 'worse' | 'differ'

export interface LabRow {
  daemon: string
  label: string
  host: string
  port: number
  packageVersion: string
  /** The daemon's version as its binary states it (or, where it has no such option, its package's upstream version). */
  ownVersion: string
  ownVersionFrom: 'binary' | 'dpkg'
  /** What the wire shows: the product, and the version (absent where the wire shows none). */
  wire: { service: string, product?: string, version?: string }
  ours: ServiceInfo
  oursMs: number
  nmap: NmapService
  agreement: Agreement
  note?: string
  oursRight: boolean
  nmapRight: boolean
  verdict: Verdict
}

export interface LabResult {
  level: 'light' | 'full'
  nmapVersion: string
  /** Load average when the measurement started (other work shares this machine). */
  loadAverage: number[]
  started: string[]
  failed: Array<{ name: string, error: string }>
  skipped: Array<{ name: string, reason: string }>
  startMs: number
  oursMs: number
  nmapMs: number
  /** Our time divided by nmap's: the target is at most 0.1. */
  ratio: number
  rows: LabRow[]
  summary: {
    ports: number
    /** Ports where nmap names a service or product. */
    nmapNamed: number
    /** Of those, the ports where ours is the same or better. */
    sameOrBetter: number
    /** Ports where ours is worse than nmap's, or where both miss the wire and disagree. */
    worse: number
    /** Ports where we give a version although the wire shows none. */
    versionsWithoutWire: number
    oursRight: number
    nmapRight: number
    targetMet: boolean
  }
}

/** Whether nmap's words say what the wire shows: the service or product, and the version (or none). */
export function nmapRight (nmap: NmapService, truth: WireTruth, want: string | undefined): boolean {
  const text = [nmap.name, nmap.product, nmap.extraInfo].filter(Boolean).join(' ').toLowerCase()
  if (!text) return false
  const named = truth.product
    ? text.includes(truth.product.toLowerCase().split(' ')[0])
    : text.includes(truth.service) || (truth.service === 'xmpp' && text.includes('jabber'))
  if (!named) return false
  // nmap puts some versions in the service name ("mosquitto version 2.0.11") and some with packaging after a space.
  const version = nmap.version ?? / version (\S+)/.exec(nmap.name ?? '')?.[1]
  return versionIs(version?.split(' ')[0], want)
}

export function judge (ours: ServiceInfo, nmap: NmapService, truth: WireTruth, want: string | undefined): { agreement: Agreement, note?: string, oursRight: boolean, nmapRight: boolean, verdict: Verdict } {
  const { agreement, note } = compare(ours, nmap)
  const o = oursRight(ours, truth, want)
  const n = nmapRight(nmap, truth, want)
  let verdict: Verdict
  if (o && !n) verdict = 'better'
  else if (!o && n) verdict = 'worse'
  else if (o && n) verdict = 'same'
  // Neither says what the wire shows: naming the wrong thing is no better than naming nothing.
  else if (agreement === 'agree' || agreement === 'both-unnamed') verdict = 'same'
  else verdict = 'differ'
  return { agreement, note, oursRight: o, nmapRight: n, verdict }
}

/** Stop nmap and every daemon of the lab, those still starting included (the end of a run, or Ctrl-C). */
export async function stopLab (): Promise<void> {
  nmapChild?.kill('SIGTERM')
  await stopAllDaemons()
}

async function startAll (daemons: LabDaemon[], concurrency: number): Promise<{ up: Array<{ d: LabDaemon, r: RunningDaemon }>, failed: LabResult['failed'] }> {
  const up: Array<{ d: LabDaemon, r: RunningDaemon }> = []
  const failed: LabResult['failed'] = []
  const queue = [...daemons]
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    for (let d = queue.shift(); d; d = queue.shift()) {
      try {
        up.push({ d, r: await d.start() })
      } catch (err) {
        failed.push({ name: d.name, error: (err as Error).message.slice(0, 500) })
      }
    }
  }))
  return { up: daemons.flatMap((d) => up.filter((u) => u.d === d)), failed }
}

/**
 * Start the lab, run our detection on every port at once, then `nmap -sV` on the same addresses and
 * ports, and judge both by what each port shows on the wire. The daemons are stopped before it returns.
 */
export async function runLab (opts: { only?: string[], level?: 'light' | 'full', startConcurrency?: number } = {}): Promise<LabResult> {
  const level = opts.level ?? 'full'
  const { daemons, skipped } = availableLab(opts.only)
  if (!daemons.length) throw new Error(`no lab daemon is installed here (${skipped.map((s) => s.reason).join('; ')})`)
  try {
    const t0 = process.hrtime.bigint()
    const { up, failed } = await startAll(daemons, opts.startConcurrency ?? 4)
    const startMs = Number(process.hrtime.bigint() - t0) / 1e6
    if (!up.length) throw new Error(`no lab daemon started: ${failed.map((f) => `${f.name}: ${f.error}`).join('; ')}`)
    const targets = await Promise.all(up.map(async ({ d, r }) => {
      const self = await selfVersion(d)
      const own = self ?? upstream(r.packageVersion)
      return d.ports(r).map((p) => ({ d, r, p, own, ownFrom: self ? 'binary' as const : 'dpkg' as const, want: expectedVersion(p.truth, own) }))
    })).then((l) => l.flat())

    const loadAverage = os.loadavg()
    const t1 = process.hrtime.bigint()
    const ours = await Promise.all(targets.map(async ({ r, p }) => {
      const start = process.hrtime.bigint()
      const info = await detectService({ host: r.host, port: p.port, level })
      return { info, ms: Number(process.hrtime.bigint() - start) / 1e6 }
    }))
    const oursMs = Number(process.hrtime.bigint() - t1) / 1e6

    const hosts = [...new Set(targets.map((t) => t.r.host))]
    const ports = [...new Set(targets.map((t) => t.p.port))].sort((a, b) => a - b)
    const nmap = await runNmap(hosts, ports)
    const byHost = parseNmapHosts(nmap.xml)

    const rows: LabRow[] = targets.map(({ d, r, p, own, ownFrom, want }, i) => {
      const n = byHost.get(r.host)?.find((x) => x.port === p.port) ?? { port: p.port }
      return {
        daemon: d.name,
        label: p.label,
        host: r.host,
        port: p.port,
        packageVersion: r.packageVersion,
        ownVersion: own,
        ownVersionFrom: ownFrom,
        wire: { service: p.truth.service, product: p.truth.product, version: want },
        ours: ours[i].info,
        oursMs: ours[i].ms,
        nmap: n,
        ...judge(ours[i].info, n, p.truth, want)
      }
    })
    const nmapNamed = rows.filter((r) => r.nmap.name || r.nmap.product)
    const summary = {
      ports: rows.length,
      nmapNamed: nmapNamed.length,
      sameOrBetter: nmapNamed.filter((r) => r.verdict === 'same' || r.verdict === 'better').length,
      worse: rows.filter((r) => r.verdict === 'worse' || r.verdict === 'differ').length,
      versionsWithoutWire: rows.filter((r) => r.wire.version === undefined && r.ours.version !== undefined).length,
      oursRight: rows.filter((r) => r.oursRight).length,
      nmapRight: rows.filter((r) => r.nmapRight).length,
      targetMet: false
    }
    const ratio = oursMs / nmap.ms
    summary.targetMet = summary.sameOrBetter === summary.nmapNamed && summary.versionsWithoutWire === 0 && ratio <= 0.1
    return {
      level,
      nmapVersion: /<nmaprun [^>]*?\sversion="([^"]+)"/.exec(nmap.xml)?.[1] ?? 'unknown',
      loadAverage,
      started: up.map((u) => u.d.name),
      failed,
      skipped,
      startMs,
      oursMs,
      nmapMs: nmap.ms,
      ratio,
      rows,
      summary
    }
  } finally {
    await stopLab()
  }
}

function cell (s: { service?: string, name?: string, product?: string, version?: string }): string {
  const name = s.service ?? s.name
  if (!name && !s.product) return '-'
  return [s.product ?? name, s.version].filter(Boolean).join(' ')
}

export function printLab (r: LabResult): void {
  const table = [['port', 'daemon', 'own version', 'wire shows', 'ours', 'ours ms', 'nmap -sV', 'agreement']]
  for (const row of r.rows) {
    table.push([String(row.port), row.label, `${row.ownVersion}${row.ownVersionFrom === 'dpkg' ? ' (dpkg)' : ''}`,
      cell({ service: row.wire.service, product: row.wire.product, version: row.wire.version ?? '(none)' }),
      cell(row.ours) + (row.ours.versionPrefix ? ' (prefix)' : ''), row.oursMs.toFixed(0), cell(row.nmap),
      row.verdict + (row.oursRight ? '' : ' (ours off the wire)') + (row.nmapRight ? '' : ' (nmap off the wire)')])
  }
  const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)))
  const s = r.summary
  const lines = [
    `service detection lab: ${r.started.length} daemons, ${s.ports} ports (level ${r.level}) vs nmap ${r.nmapVersion} -sV; load average ${r.loadAverage.map((l) => l.toFixed(1)).join(' ')}`,
    ...r.failed.map((f) => `  did not start: ${f.name}: ${f.error}`),
    ...r.skipped.map((f) => `  skipped: ${f.name}: ${f.reason}`),
    '',
    ...table.map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()),
    '',
    `ours: ${(r.oursMs / 1000).toFixed(2)} s   nmap: ${(r.nmapMs / 1000).toFixed(2)} s   ours/nmap: ${r.ratio.toFixed(3)} (nmap/ours ${(1 / r.ratio).toFixed(1)}x)   daemons started in ${(r.startMs / 1000).toFixed(1)} s`,
    `ports nmap names: ${s.nmapNamed}, ours same or better on ${s.sameOrBetter}; worse or different: ${s.worse}; a version where the wire shows none: ${s.versionsWithoutWire}`,
    `what the wire shows, exactly: ours ${s.oursRight}/${s.ports}, nmap ${s.nmapRight}/${s.ports}`,
    `target (every port nmap names the same or better, no version without the wire, at most a tenth of nmap's time): ${s.targetMet ? 'met' : 'NOT met'}`
  ]
  process.stdout.write(lines.join('\n') + '\n')
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
  const level = argValue('--level') === 'light' ? 'light' : 'full'
  const json = process.argv.includes('--json')
  let stopping = false
  const fail = (err: Error): void => {
    if (stopping) return
    process.stderr.write(`service-detect bench failed: ${err.message}\n`)
    process.exitCode = 1
  }
  if (process.argv.includes('--lab')) {
    // Ctrl-C or a kill stops every daemon of the lab (and nmap) before the bench exits.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        stopping = true
        process.stderr.write(`${signal}: stopping the lab\n`)
        stopLab().finally(() => process.exit(130))
      })
    }
    const only = argValue('--daemons')?.split(',').map((s) => s.trim()).filter(Boolean)
    runLab({ only, level }).then((r) => {
      if (json) process.stdout.write(JSON.stringify(r, null, 2) + '\n')
      else printLab(r)
    }, fail)
  } else {
    const ports = argValue('--ports')?.split(',').map(Number).filter((n) => n > 0 && n < 65536)
    runDetectionBench({ host: argValue('--host'), ports, level }).then((r) => {
      if (json) process.stdout.write(JSON.stringify(r, null, 2) + '\n')
      else printReport(r)
    }, fail)
  }
}
