// Scoring the matcher and the full pipeline against the labelled set (test/accuracy/labels.json): true and false
// positives and negatives of `open` verdicts per source and per evidence rule, precision, recall, F1, the share of
// indeterminate (potential) verdicts, critical/high false opens on patched Debian packages, and every miss. Used by
// `npm run accuracy` (bench/accuracy.ts) and by the gate test (test/accuracy/accuracy.test.ts).

import fs from 'node:fs'
import path from 'node:path'
import Fastify from 'fastify'
import app, { serverOptions } from '../../app'
import { loadConfig } from '../../lib/config'
import { parseCve5Record, type Cve5Summary } from '../../lib/cve5/record'
import { finishImport, writeSummaries } from '../../lib/cve5/source'
import { importDebianTracker } from '../../lib/distro/debian-tracker'
import { collectFromFiles, writeAliases } from '../../lib/cpe/dictionary'
import { CONFIDENCE_TABLE } from '../../lib/domain/confidence'
import { matchService, type MatchDeps } from '../../lib/match/service'
import { cpesFor } from '../../lib/cpe/aliases'
import { createMemoryIndex } from '../../lib/nvd/memory/cve-index'
import type { ServiceInfo } from '../../lib/domain/services'
import { createMemorySourceStore, type MemorySourceStore } from '../../lib/sources/memory'
import type { FindingRecord } from '../../lib/domain/findings'
import type { Expected, Label } from './accuracy-labels'
import { availableLab, type LabDaemon } from './detect-lab'
import { stopAllDaemons, type RunningDaemon } from './debian-daemon'

const ROOT = path.join(__dirname, '..', '..')
export const ACCURACY_DIR = path.join(ROOT, 'test', 'accuracy')
export const LABELS_FILE = path.join(ACCURACY_DIR, 'labels.json')
export const BASELINE_FILE = path.join(ACCURACY_DIR, 'baseline.json')
const FIXTURES = path.join(ROOT, 'test', 'fixtures')
const OWN = path.join(ACCURACY_DIR, 'fixtures')

export type Got = Expected
export interface Outcome { label: Label, got: Got, source: string | null, rule: string | null, score: number | null, severity: string | null }

function readJson (file: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
}

function jsonFiles (dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  const out: string[] = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...jsonFiles(p))
    else if (/^CVE-\d{4}-\d+\.json$/.test(e.name)) out.push(p)
  }
  return out.sort()
}

export function loadLabels (): Label[] {
  return JSON.parse(fs.readFileSync(LABELS_FILE, 'utf8')) as Label[]
}

/**
 * NVD records: the NVD fixtures of the tests and the accuracy set's own; CVE-2024-7347 in the derived form that files
 * it under f5:nginx_open_source only (the rename case; test/accuracy/fixtures/README.md), in place of the stored copy.
 */
export function nvdRecords (): Array<Record<string, unknown>> {
  const real = [...jsonFiles(path.join(FIXTURES, 'nvd', 'cves')), ...jsonFiles(path.join(FIXTURES, 'cve5', 'nvd')), ...jsonFiles(path.join(FIXTURES, 'udp')), ...jsonFiles(path.join(OWN, 'nvd'))]
    .filter((f) => path.basename(f) !== 'CVE-2024-7347.json')
  return [...real.map(readJson), readJson(path.join(OWN, 'derived', 'CVE-2024-7347-nginx_open_source.json'))]
}

export const RENAMES_FILE = path.join(OWN, 'derived', 'cpes-nginx-renamed.json')

/** CVE JSON 5 records: cvelistV5 copies, replaced by the Vulnrichment copy (the same record with CISA's ADP) where one exists. */
export function cve5Summaries (): Cve5Summary[] {
  const byId = new Map<string, string>()
  for (const f of jsonFiles(path.join(FIXTURES, 'cve5', 'cves'))) byId.set(path.basename(f, '.json'), f)
  for (const f of [...jsonFiles(path.join(FIXTURES, 'cve5', 'vulnrichment')), ...jsonFiles(path.join(OWN, 'vulnrichment'))]) byId.set(path.basename(f, '.json'), f)
  const out: Cve5Summary[] = []
  for (const f of byId.values()) {
    const s = parseCve5Record(readJson(f))
    if (s !== null) out.push(s)
  }
  return out
}

export const TRACKER_FILE = path.join(OWN, 'debian-tracker.json')

/** Fill an NVD index and a source store with the accuracy set's data. */
export async function loadData (into?: { nvd: { upsertRaw: (r: Array<Record<string, unknown>>) => Promise<unknown> }, sources: MemorySourceStore | MatchDeps['sources'] }): Promise<MatchDeps> {
  const nvd = into?.nvd ?? await createMemoryIndex()
  await nvd.upsertRaw(nvdRecords())
  const sources = (into?.sources ?? await createMemorySourceStore()) as NonNullable<MatchDeps['sources']>
  await importDebianTracker(TRACKER_FILE, sources)
  await writeSummaries(sources, cve5Summaries())
  await finishImport(sources)
  await writeAliases(sources, await collectFromFiles(RENAMES_FILE), RENAMES_FILE)
  return { nvd: nvd as unknown as MatchDeps['nvd'], sources }
}

/** The service a label's banner stands for, as detection would have reported it. */
export function serviceOfLabel (l: Label): ServiceInfo {
  const b = l.banner
  const info: ServiceInfo = { service: b.service, product: b.product, cpe: cpesFor(b.product, b.version) }
  if (b.version !== undefined) info.version = b.version
  if (b.banner !== undefined) info.banner = b.banner
  if (b.extraInfo !== undefined) info.extraInfo = b.extraInfo
  if (b.distro !== undefined) info.distro = b.distro
  if (b.versionPrefix === true) info.versionPrefix = true
  return info
}

/** When the set is scored: whether a release is supported is judged on this day, so results do not drift. */
export const SCORED_AT = new Date('2026-11-01T00:00:00Z')

function gotOf (v: { observed: string } | undefined): Got {
  if (v === undefined) return 'not_affected'
  return v.observed === 'open' ? 'open' : v.observed === 'fixed_by_distribution' ? 'fixed_by_distribution' : 'potential'
}

/** The matcher's verdict on every label (lab labels by their recorded banner). */
export async function runMatcher (labels: Label[], deps: MatchDeps): Promise<Outcome[]> {
  const byHost = new Map<string, Label[]>()
  // Exposure checks talk to the daemon: only the pipeline sees them.
  for (const l of labels.filter((x) => !/^VULNSCAN-(?!OS-EOL$)/.test(x.cve))) {
    const k = `${l.host}|${l.port}|${JSON.stringify(l.banner)}`
    byHost.set(k, [...(byHost.get(k) ?? []), l])
  }
  const out: Outcome[] = []
  for (const group of byHost.values()) {
    const m = await matchService(serviceOfLabel(group[0]), deps, { now: SCORED_AT })
    const by = new Map(m.verdicts.map((v) => [v.cveId, v]))
    // An open verdict no label names is a false positive all the same.
    for (const v of m.verdicts) {
      if (v.observed !== 'open' || group.some((l) => l.cve === v.cveId)) continue
      const label: Label = { ...group[0], id: `unlabelled-${group[0].id}-${v.cveId}`, cve: v.cveId, expected: 'not_affected', reason: 'no label names it: an open verdict outside the labelled set' }
      out.push({ label, got: 'open', source: v.source, rule: ruleOf(v.confidenceScore), score: v.confidenceScore ?? null, severity: v.severity })
    }
    for (const l of group) {
      const v = by.get(l.cve)
      out.push({ label: l, got: gotOf(v), source: v?.source ?? null, rule: v === undefined ? null : ruleOf(v.confidenceScore), score: v?.confidenceScore ?? null, severity: v?.severity ?? null })
    }
  }
  return out
}

/** The evidence rule of a score (the table's kind; several kinds share a score, joined). */
export function ruleOf (score: number | undefined): string {
  const kinds = CONFIDENCE_TABLE.filter((r) => r.score === score).map((r) => r.kind)
  return kinds.length > 0 ? kinds.join('|') : 'unscored'
}

export interface Counts { tp: number, fp: number, fn: number, tn: number }
export interface Score extends Counts {
  verdicts: number
  precision: number
  recall: number
  f1: number
  /** Share of the verdicts the scanner gave (open, fixed_by_distribution, potential) that are potential. */
  potentialShare: number
  /** Labels whose verdict is exactly the expected one. */
  exact: number
  bySource: Record<string, Counts>
  byRule: Record<string, Counts>
  /** Critical or high `open` verdicts on a Debian package that carries the fix (label fixed_by_distribution or potential). */
  falseOpenPatchedSevere: number
  misses: Array<{ id: string, host: string, port: number, cve: string, expected: Expected, got: Got, source: string | null, reason: string }>
}

function add (m: Record<string, Counts>, k: string, f: keyof Counts): void {
  m[k] ??= { tp: 0, fp: 0, fn: 0, tn: 0 }
  m[k][f]++
}

export function score (outcomes: Outcome[]): Score {
  const s: Score = { verdicts: outcomes.length, tp: 0, fp: 0, fn: 0, tn: 0, precision: 0, recall: 0, f1: 0, potentialShare: 0, exact: 0, bySource: {}, byRule: {}, falseOpenPatchedSevere: 0, misses: [] }
  let given = 0
  let potential = 0
  for (const o of outcomes) {
    const exp = o.label.expected
    const k: keyof Counts = o.got === 'open' ? (exp === 'open' ? 'tp' : 'fp') : exp === 'open' ? 'fn' : 'tn'
    s[k]++
    add(s.bySource, o.source ?? '(none)', k)
    add(s.byRule, o.rule ?? '(none)', k)
    if (o.got !== 'not_affected') given++
    if (o.got === 'potential') potential++
    if (o.got === exp) s.exact++
    else s.misses.push({ id: o.label.id, host: o.label.host, port: o.label.port, cve: o.label.cve, expected: exp, got: o.got, source: o.source, reason: o.label.reason })
    if (k === 'fp' && (exp === 'fixed_by_distribution' || exp === 'potential') && (o.severity === 'critical' || o.severity === 'high')) s.falseOpenPatchedSevere++
  }
  s.precision = s.tp + s.fp === 0 ? 1 : s.tp / (s.tp + s.fp)
  s.recall = s.tp + s.fn === 0 ? 1 : s.tp / (s.tp + s.fn)
  s.f1 = s.precision + s.recall === 0 ? 0 : 2 * s.precision * s.recall / (s.precision + s.recall)
  s.potentialShare = given === 0 ? 0 : potential / given
  return s
}

export interface Baseline { matcher: { f1: number, fn: number }, pipeline: { f1: number, fn: number } }

export function readBaseline (): Baseline {
  return JSON.parse(fs.readFileSync(BASELINE_FILE, 'utf8')) as Baseline
}

/** What a gate says of a score against the baseline: empty when it holds. */
export function regressions (name: string, s: Score, base: { f1: number, fn: number }): string[] {
  const out: string[] = []
  if (s.f1 + 1e-9 < base.f1) out.push(`${name} F1 ${s.f1.toFixed(4)} fell below the baseline ${base.f1}`)
  if (s.fn > base.fn) out.push(`${name} false negatives rose from ${base.fn} to ${s.fn}`)
  return out
}

export interface PipelineRun {
  /** Findings by label id. */
  outcomes: Outcome[]
  /** Every finding the scan wrote on the lab's labelled ports, for consistency checks: id, status, confidenceScore. */
  findings: Array<{ id: string, cveId: string, status: string, confidenceScore: number }>
  skipped: Array<{ name: string, reason: string }>
}

/** The lab daemons the lab labels are about, and why any cannot run here. */
export function pipelineLab (labels: Label[]): { daemons: LabDaemon[], skipped: Array<{ name: string, reason: string }> } {
  const names = [...new Set(labels.filter((l) => l.kind === 'lab').map((l) => l.daemon as string))]
  return availableLab(names)
}

/**
 * The full pipeline: the lab's daemons started, scanned by the service (POST /app/scan, its worker, detection,
 * matching, the results store), and the findings read back. `runs` scans of the same lab, for consistency.
 */
export async function runPipeline (labels: Label[], runs = 1): Promise<PipelineRun[]> {
  const labLabels = labels.filter((l) => l.kind === 'lab')
  const { daemons, skipped } = pipelineLab(labels)
  if (daemons.length === 0) return [{ outcomes: [], findings: [], skipped }]
  const config = loadConfig({
    SERVICE_API_KEY: 'accuracy-key-0123456789abcdef0123',
    LOG_LEVEL: 'silent',
    WORKER_ENABLED: true,
    NVD_ON_DEMAND: false,
    NVD_INDEX_FILE: '',
    SOURCES_FILE: '',
    NVD_API_URL: 'http://127.0.0.1:1/rest/json',
    RATE_LIMIT_MAX: 100000
  }, {})
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })
  await fastify.ready()
  const running: Array<{ d: LabDaemon, r: RunningDaemon }> = []
  try {
    await loadData({ nvd: fastify.backends.indexes.cve, sources: fastify.backends.indexes.sources })
    const started = await Promise.allSettled(daemons.map(async (d) => ({ d, r: await d.start() })))
    for (const s of started) {
      if (s.status === 'fulfilled') running.push(s.value)
      else skipped.push({ name: '?', reason: (s.reason as Error).message.slice(0, 200) })
    }
    const results: PipelineRun[] = []
    for (let run = 0; run < runs; run++) {
      const outcomes: Outcome[] = []
      const findings: PipelineRun['findings'] = []
      for (const { d, r } of running) {
        const ports = d.ports(r).map((p) => p.port)
        const id = `accuracy-${run}-${d.name.replace(/[^a-z0-9]/gi, '').toLowerCase()}`
        const posted = await fastify.inject({
          method: 'POST', url: '/app/scan', headers: { 'x-api-key': config.SERVICE_API_KEY },
          payload: { id, targets: [{ value: r.host, type: 'single_ip' }], options: { template: 'standard', ports: ports.join(',') }, priority: 3 }
        })
        if (posted.statusCode !== 200) throw new Error(`POST /app/scan answered ${posted.statusCode}: ${posted.body}`)
        const deadline = Date.now() + 120_000
        for (;;) {
          const scan = await fastify.store.getScan(id)
          if (scan !== null && ['completed', 'failed', 'cancelled'].includes(scan.status)) break
          if (Date.now() > deadline) throw new Error(`scan ${id} did not end`)
          await new Promise((resolve) => setTimeout(resolve, 200))
        }
        const all: FindingRecord[] = []
        for (const status of ['open', 'reopened', 'fixed_by_distribution', 'potential'] as const) {
          for await (const f of fastify.results.streamFindings({ host: r.host, status })) all.push(f)
        }
        const at = (l: Label): number => ports[l.port] ?? ports[0]
        const byKey = new Map(all.map((f) => [`${f.port} ${f.cveId}`, f]))
        for (const f of all) findings.push({ id: f.id, cveId: f.cveId, status: f.status, confidenceScore: f.confidenceScore })
        const mine = labLabels.filter((x) => x.daemon === d.name)
        // An open finding no label names is a false positive all the same.
        for (const f of all) {
          if (mine.some((l) => l.cve === f.cveId && at(l) === f.port) || (f.status !== 'open' && f.status !== 'reopened')) continue
          const label: Label = { id: `unlabelled-${d.name}-${f.cveId}`, kind: 'lab', host: `lab:${d.name}`, port: f.port, product: f.product, version: f.version, revision: null, banner: { service: '', product: f.product }, cve: f.cveId, expected: 'not_affected', reason: 'no label names it: an open finding outside the labelled set', daemon: d.name }
          outcomes.push({ label, got: 'open', source: f.source, rule: ruleOf(f.confidenceScore), score: f.confidenceScore, severity: f.severity })
        }
        for (const l of mine) {
          const f = byKey.get(`${at(l)} ${l.cve}`)
          const got: Got = f === undefined ? 'not_affected' : f.status === 'open' || f.status === 'reopened' ? 'open' : f.status === 'fixed_by_distribution' ? 'fixed_by_distribution' : 'potential'
          outcomes.push({ label: l, got, source: f?.source ?? null, rule: f === undefined ? null : ruleOf(f.confidenceScore), score: f?.confidenceScore ?? null, severity: f?.severity ?? null })
        }
      }
      findings.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      results.push({ outcomes, findings, skipped })
    }
    return results
  } finally {
    await stopAllDaemons()
    await fastify.close()
  }
}

/** Whether runs agree: the same findings (ids), statuses and confidence scores. */
export function consistent (runs: PipelineRun[]): { same: boolean, differences: string[] } {
  const differences: string[] = []
  const key = (r: PipelineRun): string[] => r.findings.map((f) => `${f.id} ${f.cveId} ${f.status} ${f.confidenceScore}`)
  const first = new Set(key(runs[0]))
  runs.slice(1).forEach((r, i) => {
    const k = new Set(key(r))
    for (const x of first) if (!k.has(x)) differences.push(`run ${i + 2} lacks: ${x}`)
    for (const x of k) if (!first.has(x)) differences.push(`run ${i + 2} adds: ${x}`)
  })
  return { same: differences.length === 0, differences }
}

export function formatScore (name: string, s: Score): string {
  const pct = (x: number): string => (x * 100).toFixed(1) + '%'
  const lines = [
    `${name}: ${s.verdicts} verdicts, ${s.exact} exactly right; TP ${s.tp} FP ${s.fp} FN ${s.fn} TN ${s.tn}; precision ${s.precision.toFixed(4)} recall ${s.recall.toFixed(4)} F1 ${s.f1.toFixed(4)}; potential ${pct(s.potentialShare)} of verdicts given; critical/high false open on patched Debian packages: ${s.falseOpenPatchedSevere}`,
    '  by source: ' + Object.entries(s.bySource).map(([k, c]) => `${k} ${c.tp}/${c.fp}/${c.fn}/${c.tn}`).join(', ') + ' (TP/FP/FN/TN)',
    '  by rule:   ' + Object.entries(s.byRule).map(([k, c]) => `${k} ${c.tp}/${c.fp}/${c.fn}/${c.tn}`).join(', ')
  ]
  if (s.misses.length === 0) lines.push('  misses: none')
  else {
    lines.push(`  misses (${s.misses.length}):`)
    for (const m of s.misses) lines.push(`    ${m.id} ${m.host}:${m.port} ${m.cve}: expected ${m.expected}, got ${m.got}${m.source !== null ? ` (${m.source})` : ''} — ${m.reason}`)
  }
  return lines.join('\n')
}

/** The lab packages whose changelogs the tracker is built from: binary package → source package. */
export const CHANGELOG_PACKAGES: Record<string, string> = {
  'openssh-server': 'openssh', 'nginx-common': 'nginx', mosquitto: 'mosquitto', 'exim4-base': 'exim4', haproxy: 'haproxy', zookeeper: 'zookeeper', memcached: 'memcached'
}

/** CVE → the oldest version whose changelog entry names it, from a changelog.Debian text (newest entry first). */
export function changelogFixes (text: string): { installed: string | null, fixes: Map<string, string> } {
  const fixes = new Map<string, string>()
  let installed: string | null = null
  for (const entry of text.split(/\n(?=\S+ \()/)) {
    const m = /^(\S+) \(([^)]+)\) [^;]+;/.exec(entry.trim())
    if (m === null) continue
    installed ??= m[2]
    for (const cve of new Set(entry.match(/CVE-\d{4}-\d{4,}/g) ?? [])) fixes.set(cve, m[2])
  }
  return { installed, fixes }
}

/**
 * The Debian tracker export (its JSON format) for bookworm from the installed packages' changelogs, with the
 * entries of the tests' tracker fixture (which adds what changelogs do not say: DSA-5724-1's CVE-2024-6387, the
 * <unfixed> unimportant CVE-2023-51767) laid over it.
 */
export function buildTracker (changelogs: Record<string, string>): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {}
  for (const [pkg, text] of Object.entries(changelogs)) {
    const source = CHANGELOG_PACKAGES[pkg]
    const { installed, fixes } = changelogFixes(text)
    out[source] ??= {}
    for (const [cve, version] of [...fixes].sort()) {
      out[source][cve] = {
        description: '',
        scope: 'remote',
        releases: { bookworm: { status: 'resolved', repositories: { bookworm: installed }, fixed_version: version, urgency: 'not yet assigned' } }
      }
    }
  }
  const base = readJson(path.join(FIXTURES, 'distro', 'debian-tracker.json')) as Record<string, Record<string, unknown>>
  for (const [source, cves] of Object.entries(base)) out[source] = { ...(out[source] ?? {}), ...cves }
  return out
}
