// CVE JSON 5.x records (cvelistV5, the CVE Services API, CISA Vulnrichment) reduced to the compact
// summary the matcher needs. A full cvelistV5 import holds about 300,000 of them, so the summary
// keeps only what decides a match or is shown with a finding: no references, no supporting media,
// no credits.

export type Origin = 'cna' | 'adp'
export type VersionStatus = 'affected' | 'unaffected' | 'unknown'

export interface Cve5Change {
  at: string
  status: VersionStatus
}

export interface Cve5Version {
  version: string
  status: VersionStatus
  lessThan?: string
  lessThanOrEqual?: string
  versionType?: string
  changes?: Cve5Change[]
}

export interface Cve5Affected {
  origin: Origin
  /** The ADP's providerMetadata.shortName (`CISA-ADP`, …); absent for the CNA. */
  provider?: string
  vendor?: string
  product?: string
  packageName?: string
  collectionURL?: string
  cpes?: string[]
  defaultStatus?: VersionStatus
  versions: Cve5Version[]
  platforms?: string[]
}

export type CvssVersion = '4.0' | '3.1' | '3.0' | '2.0'

export interface Cve5Cvss {
  version: CvssVersion
  score: number
  severity: string
  vector?: string
  origin: Origin
}

export interface Cve5Kev {
  dateAdded: string
  reference?: string
}

export interface Cve5Ssvc {
  exploitation?: string
  automatable?: string
  technicalImpact?: string
}

export interface Cve5Summary {
  id: string
  state: 'PUBLISHED' | 'REJECTED'
  published?: string
  updated?: string
  assigner?: string
  title?: string
  description?: string
  cvss?: Cve5Cvss
  cwes?: string[]
  kev?: Cve5Kev
  ssvc?: Cve5Ssvc
  affected: Cve5Affected[]
}

type Obj = Record<string, unknown>

function obj (v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Obj : undefined
}

function arr (v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}

function str (v: unknown): string | undefined {
  if (typeof v === 'string') {
    const s = v.trim()
    return s === '' ? undefined : s
  }
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  return undefined
}

function status (v: unknown): VersionStatus {
  return v === 'affected' || v === 'unaffected' ? v : 'unknown'
}

const CVE_ID = /^CVE-\d{4}-\d{4,}$/

/** Description longer than this is cut: findings show a summary, the record link has the rest. */
const MAX_DESCRIPTION = 600
/** Version types whose ranges are commit ids: one is kept (it keeps the entry undecidable), not all. */
export const GRAPH_TYPES = new Set(['git', 'hg', 'mercurial', 'svn', 'bzr', 'fossil', 'commit'])

function english (list: unknown): string | undefined {
  const entries = arr(list).map(obj).filter((e): e is Obj => e !== undefined)
  const en = entries.find((e) => typeof e.lang === 'string' && /^en\b/i.test(e.lang)) ?? entries[0]
  const text = en ? str(en.value) : undefined
  if (text === undefined) return undefined
  return text.length > MAX_DESCRIPTION ? text.slice(0, MAX_DESCRIPTION - 1) + '…' : text
}

function parseVersions (list: unknown): Cve5Version[] {
  const out: Cve5Version[] = []
  let graphKept = false
  for (const raw of arr(list)) {
    const v = obj(raw)
    if (!v) continue
    const version = str(v.version)
    if (version === undefined) continue
    const entry: Cve5Version = { version, status: status(v.status) }
    const lt = str(v.lessThan)
    const lte = str(v.lessThanOrEqual)
    const type = str(v.versionType)
    if (lt !== undefined) entry.lessThan = lt
    else if (lte !== undefined) entry.lessThanOrEqual = lte
    if (type !== undefined) entry.versionType = type.toLowerCase()
    // Commit ranges can never be compared with a banner version; the Linux CNA lists one per
    // stable branch, so only the first is kept to say so.
    if (entry.versionType !== undefined && GRAPH_TYPES.has(entry.versionType)) {
      if (graphKept) continue
      graphKept = true
    }
    const changes: Cve5Change[] = []
    for (const c of arr(v.changes)) {
      const co = obj(c)
      const at = co ? str(co.at) : undefined
      if (co && at !== undefined) changes.push({ at, status: status(co.status) })
    }
    if (changes.length > 0) entry.changes = changes
    out.push(entry)
  }
  return out
}

function strings (list: unknown): string[] | undefined {
  const out = arr(list).map(str).filter((s): s is string => s !== undefined)
  return out.length > 0 ? out : undefined
}

function parseAffected (list: unknown, origin: Origin, provider?: string): Cve5Affected[] {
  const out: Cve5Affected[] = []
  for (const raw of arr(list)) {
    const a = obj(raw)
    if (!a) continue
    const entry: Cve5Affected = { origin, versions: parseVersions(a.versions) }
    if (provider !== undefined) entry.provider = provider
    const vendor = str(a.vendor)
    const product = str(a.product)
    // CVE 5.0 names the package field `packageName`; some early records used `package`.
    const packageName = str(a.packageName) ?? str(a.package)
    const collectionURL = str(a.collectionURL)
    if (vendor !== undefined) entry.vendor = vendor
    if (product !== undefined) entry.product = product
    if (packageName !== undefined) entry.packageName = packageName
    if (collectionURL !== undefined) entry.collectionURL = collectionURL
    const cpes = strings(a.cpes)
    if (cpes) entry.cpes = cpes
    if (a.defaultStatus !== undefined) entry.defaultStatus = status(a.defaultStatus)
    const platforms = strings(a.platforms)
    if (platforms) entry.platforms = platforms
    out.push(entry)
  }
  return out
}

const CVSS_KEYS: Array<[string, CvssVersion]> = [
  ['cvssV4_0', '4.0'], ['cvssV3_1', '3.1'], ['cvssV3_0', '3.0'], ['cvssV2_0', '2.0']
]

function severityFor (version: CvssVersion, score: number): string {
  if (version === '2.0') return score >= 7 ? 'HIGH' : score >= 4 ? 'MEDIUM' : 'LOW'
  if (score === 0) return 'NONE'
  return score >= 9 ? 'CRITICAL' : score >= 7 ? 'HIGH' : score >= 4 ? 'MEDIUM' : 'LOW'
}

/** Every CVSS block of a container's metrics. */
function cvssOf (metrics: unknown, origin: Origin): Cve5Cvss[] {
  const found: Cve5Cvss[] = []
  for (const raw of arr(metrics)) {
    const m = obj(raw)
    if (!m) continue
    for (const [key, version] of CVSS_KEYS) {
      const c = obj(m[key])
      if (!c) continue
      const score = typeof c.baseScore === 'number' ? c.baseScore : Number(c.baseScore)
      if (!Number.isFinite(score)) continue
      const severity = str(c.baseSeverity)?.toUpperCase() ?? severityFor(version, score)
      const entry: Cve5Cvss = { version, score, severity, origin }
      const vector = str(c.vectorString)
      if (vector !== undefined) entry.vector = vector
      found.push(entry)
    }
  }
  return found
}

function otherMetrics (metrics: unknown, type: string): Obj[] {
  const out: Obj[] = []
  for (const raw of arr(metrics)) {
    const other = obj(obj(raw)?.other)
    if (other && other.type === type) {
      const content = obj(other.content)
      if (content) out.push(content)
    }
  }
  return out
}

function ssvcOf (content: Obj): Cve5Ssvc {
  const out: Cve5Ssvc = {}
  for (const opt of arr(content.options)) {
    const o = obj(opt)
    if (!o) continue
    for (const [k, v] of Object.entries(o)) {
      const value = str(v)
      if (value === undefined) continue
      const key = k.toLowerCase().replace(/\s+/g, '')
      if (key === 'exploitation') out.exploitation = value
      else if (key === 'automatable') out.automatable = value
      else if (key === 'technicalimpact') out.technicalImpact = value
    }
  }
  return out
}

function cwesOf (problemTypes: unknown, into: Set<string>): void {
  for (const pt of arr(problemTypes)) {
    for (const d of arr(obj(pt)?.descriptions)) {
      const id = str(obj(d)?.cweId)
      if (id !== undefined && /^CWE-\d+$/i.test(id)) into.add(id.toUpperCase())
    }
  }
}

/**
 * Reduce one CVE JSON 5.x record to its summary. Returns null for anything that is not a CVE
 * record with a valid id (a delta file, a truncated download), so bulk imports can count and
 * skip it.
 */
export function parseCve5Record (input: unknown): Cve5Summary | null {
  const rec = obj(input)
  if (!rec) return null
  const meta = obj(rec.cveMetadata)
  const id = meta ? str(meta.cveId)?.toUpperCase() : undefined
  if (!meta || id === undefined || !CVE_ID.test(id)) return null
  if (rec.dataType !== undefined && rec.dataType !== 'CVE_RECORD') return null
  const containers = obj(rec.containers) ?? {}
  const cna = obj(containers.cna) ?? {}
  const adps = arr(containers.adp).map(obj).filter((a): a is Obj => a !== undefined)
  const rejected = str(meta.state)?.toUpperCase() === 'REJECTED'

  const summary: Cve5Summary = { id, state: rejected ? 'REJECTED' : 'PUBLISHED', affected: [] }
  const published = str(meta.datePublished)
  const updated = str(meta.dateUpdated)
  const assigner = str(meta.assignerShortName)
  if (published !== undefined) summary.published = published
  if (updated !== undefined) summary.updated = updated
  if (assigner !== undefined) summary.assigner = assigner
  const title = str(cna.title)
  if (title !== undefined) summary.title = title
  const description = english(rejected ? cna.rejectedReasons : cna.descriptions)
  if (description !== undefined) summary.description = description
  // A rejected record matches nothing, so its product data (usually none) is not kept.
  if (rejected) return summary

  summary.affected.push(...parseAffected(cna.affected, 'cna'))
  const cvss = cvssOf(cna.metrics, 'cna')
  const cwes = new Set<string>()
  cwesOf(cna.problemTypes, cwes)
  for (const adp of adps) {
    const provider = str(obj(adp.providerMetadata)?.shortName)
    summary.affected.push(...parseAffected(adp.affected, 'adp', provider))
    cvss.push(...cvssOf(adp.metrics, 'adp'))
    cwesOf(adp.problemTypes, cwes)
    const kev = otherMetrics(adp.metrics, 'kev')[0]
    const dateAdded = kev ? str(kev.dateAdded) : undefined
    if (kev && dateAdded !== undefined && summary.kev === undefined) {
      summary.kev = { dateAdded }
      const ref = str(kev.reference)
      if (ref !== undefined) summary.kev.reference = ref
    }
    const ssvc = otherMetrics(adp.metrics, 'ssvc')[0]
    if (ssvc && summary.ssvc === undefined) summary.ssvc = ssvcOf(ssvc)
  }
  // Newest CVSS version first; at the same version the CNA's own score comes before an ADP's.
  const rank = (v: CvssVersion): number => CVSS_KEYS.findIndex(([, x]) => x === v)
  cvss.sort((a, b) => rank(a.version) - rank(b.version) || (a.origin === b.origin ? 0 : a.origin === 'cna' ? -1 : 1))
  if (cvss.length > 0) summary.cvss = cvss[0]
  if (cwes.size > 0) summary.cwes = [...cwes]
  return summary
}

/** Parse a record from its JSON text; null when the text is not a CVE record. */
export function parseCve5Json (text: string): Cve5Summary | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  return parseCve5Record(parsed)
}

export function encodeSummary (s: Cve5Summary): string {
  return JSON.stringify(s)
}

export function decodeSummary (text: string): Cve5Summary {
  return JSON.parse(text) as Cve5Summary
}
