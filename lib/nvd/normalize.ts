// Turn an NVD API 2.0 `cve` object into the record the index keeps. NVD adds fields over time
// (cveTags, affected, ssvcV203, ...) and snapshots differ in which optional keys exist, so this
// reads only what it knows, defensively, and ignores everything else.

import type { Configuration, ConfigNode, CpeCriterion, CveRecord, CvssMetric, CvssVersion, Reference } from './types'
import type { Kev } from '../domain/findings'
import type { Severity } from '../domain/severity'

type Obj = Record<string, unknown>

function isObj (v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function str (v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}

function arr (v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}

const METRIC_KEYS: Array<[string, CvssVersion]> = [
  ['cvssMetricV40', '4.0'], ['cvssMetricV31', '3.1'], ['cvssMetricV30', '3.0'], ['cvssMetricV2', '2.0']
]

const SEVERITIES = new Set<Severity>(['critical', 'high', 'medium', 'low', 'none'])

/** Severity from the score when a metric carries none, on the scale of its CVSS version. */
function severityFromScore (score: number, version: CvssVersion): Severity {
  if (version === '2.0') return score >= 7 ? 'high' : score >= 4 ? 'medium' : 'low'
  if (score === 0) return 'none'
  if (score >= 9) return 'critical'
  if (score >= 7) return 'high'
  if (score >= 4) return 'medium'
  return 'low'
}

function readMetrics (metrics: unknown): CvssMetric[] {
  if (!isObj(metrics)) return []
  const out: CvssMetric[] = []
  for (const [key, version] of METRIC_KEYS) {
    for (const m of arr(metrics[key])) {
      if (!isObj(m) || !isObj(m.cvssData)) continue
      const data = m.cvssData
      const score = typeof data.baseScore === 'number' ? data.baseScore : Number(data.baseScore)
      if (!Number.isFinite(score)) continue
      // v2 keeps the severity beside cvssData; v3.x and v4.0 keep it inside.
      const raw = (version === '2.0' ? str(m.baseSeverity) : str(data.baseSeverity)) ??
        str(data.baseSeverity) ?? str(m.baseSeverity)
      const lower = raw?.toLowerCase() as Severity | undefined
      const severity = lower !== undefined && SEVERITIES.has(lower) ? lower : severityFromScore(score, version)
      out.push({
        version,
        score,
        severity,
        vector: str(data.vectorString) ?? '',
        source: str(m.source) ?? '',
        type: m.type === 'Primary' ? 'Primary' : 'Secondary'
      })
    }
  }
  return out
}

/** NVD's own (Primary) assessment first; within a type, the newest CVSS version first. */
function chooseMetric (metrics: CvssMetric[]): CvssMetric | null {
  return metrics.find((m) => m.type === 'Primary') ?? metrics[0] ?? null
}

/**
 * CWE ids such as `CWE-79`. NVD's placeholders `NVD-CWE-noinfo` and `NVD-CWE-Other` say that
 * no CWE was assigned; they are left out so that consumers see an empty list, not a fake id.
 */
function readCwes (weaknesses: unknown): string[] {
  const primary: string[] = []
  const other: string[] = []
  for (const w of arr(weaknesses)) {
    if (!isObj(w)) continue
    const target = w.type === 'Primary' ? primary : other
    for (const d of arr(w.description)) {
      const v = isObj(d) ? str(d.value) : undefined
      if (v !== undefined && /^CWE-\d+$/.test(v)) target.push(v)
    }
  }
  return [...new Set([...primary, ...other])]
}

function readReferences (refs: unknown): Reference[] {
  const out: Reference[] = []
  for (const r of arr(refs)) {
    if (!isObj(r)) continue
    const url = str(r.url)
    if (url === undefined) continue
    const ref: Reference = { url }
    const source = str(r.source)
    if (source !== undefined) ref.source = source
    const tags = arr(r.tags).filter((t): t is string => typeof t === 'string')
    if (tags.length > 0) ref.tags = tags
    out.push(ref)
  }
  return out
}

function readKev (cve: Obj): Kev | null {
  // Some producers nest the CISA fields in an object; NVD puts them at the top level, in no fixed order.
  const src: Obj = isObj(cve.cisa) ? { ...cve, ...cve.cisa } : cve
  const dateAdded = str(src.cisaExploitAdd)
  if (dateAdded === undefined) return null
  const kev: Kev = { dateAdded }
  const due = str(src.cisaActionDue)
  if (due !== undefined) kev.dueDate = due
  const action = str(src.cisaRequiredAction)
  if (action !== undefined) kev.requiredAction = action
  const name = str(src.cisaVulnerabilityName)
  if (name !== undefined) kev.name = name
  return kev
}

function readCriterion (m: unknown): CpeCriterion | null {
  if (!isObj(m)) return null
  const criteria = str(m.criteria)
  if (criteria === undefined || !criteria.startsWith('cpe:2.3:')) return null
  const c: CpeCriterion = { criteria, vulnerable: m.vulnerable === true }
  const id = str(m.matchCriteriaId)
  if (id !== undefined) c.matchCriteriaId = id
  for (const k of ['versionStartIncluding', 'versionStartExcluding', 'versionEndIncluding', 'versionEndExcluding'] as const) {
    const v = str(m[k])
    if (v !== undefined && v !== '') c[k] = v
  }
  return c
}

function readConfigurations (configs: unknown): Configuration[] {
  const out: Configuration[] = []
  for (const c of arr(configs)) {
    if (!isObj(c)) continue
    const nodes: ConfigNode[] = []
    for (const n of arr(c.nodes)) {
      if (!isObj(n)) continue
      const cpeMatch = arr(n.cpeMatch).map(readCriterion).filter((x): x is CpeCriterion => x !== null)
      if (cpeMatch.length === 0) continue
      nodes.push({ operator: n.operator === 'AND' ? 'AND' : 'OR', negate: n.negate === true, cpeMatch })
    }
    if (nodes.length === 0) continue
    const conf: Configuration = { nodes }
    if (c.operator === 'AND' || c.operator === 'OR') conf.operator = c.operator
    if (typeof c.negate === 'boolean') conf.negate = c.negate
    out.push(conf)
  }
  return out
}

function englishDescription (descriptions: unknown): string {
  let first: string | undefined
  for (const d of arr(descriptions)) {
    if (!isObj(d)) continue
    const v = str(d.value)
    if (v === undefined) continue
    if (d.lang === 'en') return v
    first ??= v
  }
  return first ?? ''
}

/**
 * Normalize one NVD API 2.0 `cve` object (also accepts the `{ cve: {...} }` wrapper of the
 * `vulnerabilities` array). Throws when the record has no CVE id.
 */
export function normalizeCve (raw: unknown): CveRecord {
  let cve: unknown = raw
  if (isObj(cve) && cve.id === undefined && isObj(cve.cve)) cve = cve.cve
  if (!isObj(cve)) throw new Error('NVD record is not an object')
  const id = str(cve.id)
  if (id === undefined || !/^CVE-\d{4}-\d{4,}$/.test(id)) {
    throw new Error(`NVD record without a valid CVE id (id: ${JSON.stringify(cve.id ?? null)})`)
  }
  const vulnStatus = str(cve.vulnStatus) ?? ''
  const description = englishDescription(cve.descriptions)
  const rejected = vulnStatus === 'Rejected' || description.startsWith('** REJECT **') ||
    description.startsWith('Rejected reason:')
  const metrics = readMetrics(cve.metrics)
  const chosen = chooseMetric(metrics)
  return {
    id,
    published: str(cve.published) ?? '',
    lastModified: str(cve.lastModified) ?? str(cve.published) ?? '',
    vulnStatus,
    rejected,
    description,
    metrics,
    cvss: chosen?.score ?? null,
    cvssVersion: chosen?.version ?? null,
    cvssVector: chosen !== null && chosen.vector !== '' ? chosen.vector : null,
    severity: chosen?.severity ?? null,
    cwes: readCwes(cve.weaknesses),
    references: readReferences(cve.references),
    kev: readKev(cve),
    configurations: rejected ? [] : readConfigurations(cve.configurations)
  }
}
