// The sync: what each ticket should say and whether it should be open, computed from the findings as they stand,
// compared with what vulnscan last made it say (the local ticket map), and the difference sent. It is a
// reconciliation, not a stream of events: a sync that failed or was cut short by a restart is made good by the next
// one. Each ticket carries a stable key (a label from the integration and the group), written to the local map
// before the create is sent, so that a create whose answer was lost is found on the tracker rather than made twice.
import { createHash, randomUUID } from 'node:crypto'
import type { FindingExportQuery, ResultsStore } from '../store/results-types'
import type { FindingRecord } from '../domain/findings'
import type { SecretBox } from '../secrets'
import type { WebhookPolicy } from '../webhooks/policy'
import { TrackerError, type TrackerHttpOptions } from './http'
import { trackerClient, type TrackerClient } from './trackers'
import type { Block, TicketText } from './text'
import type { IntegrationFilter, IntegrationRecord, IntegrationStore, TicketRecord } from './types'

export interface SyncDeps {
  store: IntegrationStore
  results: ResultsStore
  box: SecretBox
  policy: WebhookPolicy
  http: Pick<TrackerHttpOptions, 'timeoutMs' | 'tries' | 'backoffMs' | 'retryAfterMaxMs' | 'resolve' | 'sleep'>
  log: { warn(obj: object, msg: string): void, info?(obj: object, msg: string): void }
}

export interface SyncCounts {
  created: number
  updated: number
  closed: number
  reopened: number
  unchanged: number
  failed: number
}

export const tokenContext = (id: string): string => `integration:${id}`

/** The label a group's ticket carries: the same for the same integration and group, whichever process computes it. */
export function ticketKey (integrationId: string, grouping: string, group: string): string {
  return `vulnscan-${createHash('sha256').update(`${integrationId}\n${grouping}\n${group}`).digest('hex').slice(0, 20)}`
}

const SEVERITY_ORDER = ['none', 'unknown', 'low', 'medium', 'high', 'critical']
const ACTIVE = new Set(['open', 'reopened'])

function passes (f: FindingRecord, filter: IntegrationFilter): boolean {
  if (filter.minSeverity !== undefined && SEVERITY_ORDER.indexOf(f.severity) < SEVERITY_ORDER.indexOf(filter.minSeverity)) return false
  return true
}

/**
 * The store query of an integration's filter, before its tags: `kevOnly` is CISA's catalogue, as the API documents it
 * and as a webhook's `kevOnly` reads it (a finding on the EU KEV alone is not on it).
 */
export function integrationQuery (filter: IntegrationFilter): FindingExportQuery {
  return {
    ...(filter.kevOnly === true ? { kev: 'cisa' as const } : {}),
    ...(filter.minEpss !== undefined ? { minEpss: filter.minEpss } : {})
  }
}

/** The findings an integration keeps tickets for, every status but the hidden ones (fixed and decided included). */
async function findingsFor (results: ResultsStore, filter: IntegrationFilter): Promise<FindingRecord[]> {
  const base = integrationQuery(filter)
  const seen = new Map<string, FindingRecord>()
  const queries = (filter.tags ?? []).length === 0 ? [base] : (filter.tags ?? []).map((tag) => ({ ...base, tag }))
  for (const q of queries) {
    for await (const f of results.streamFindings(q)) if (passes(f, filter)) seen.set(f.id, f)
  }
  return [...seen.values()]
}

function groupOf (f: FindingRecord, grouping: IntegrationRecord['grouping']): string {
  return grouping === 'finding' ? f.id : grouping === 'host' ? f.address : f.cveId
}

function where (f: FindingRecord): string {
  return f.port === 0 ? `${f.address} (installed package)` : `${f.address} port ${f.port}/${f.protocol}`
}

export interface Desired {
  key: string
  group: string
  open: boolean
  /** Why it is closed: every member fixed, or a decision. */
  closedAs?: 'fixed' | 'accepted' | 'false_positive'
  text: TicketText
  hash: string
  lastScanId: string
}

/** What a group's ticket should say and be. */
export function desiredTicket (i: IntegrationRecord, group: string, members: FindingRecord[]): Desired {
  const sorted = [...members].sort((a, b) => a.id.localeCompare(b.id))
  const open = sorted.some((f) => ACTIVE.has(f.status))
  let closedAs: Desired['closedAs']
  if (!open) {
    if (sorted.every((f) => f.status === 'false_positive')) closedAs = 'false_positive'
    else if (sorted.some((f) => f.status === 'accepted' || f.status === 'false_positive')) closedAs = 'accepted'
    else closedAs = 'fixed'
  }
  const worst = sorted.reduce((w, f) => SEVERITY_ORDER.indexOf(f.severity) > SEVERITY_ORDER.indexOf(w) ? f.severity : w, 'none')
  const first = sorted[0]
  const title = i.grouping === 'finding'
    ? `${first.cveId} (${first.severity}) in ${first.product}${first.version === null ? '' : ` ${first.version}`} on ${where(first)}`
    : i.grouping === 'host'
      ? `${sorted.filter((f) => ACTIVE.has(f.status)).length} open vulnerabilities on ${group} (worst: ${worst})`
      : `${group} (${worst}) on ${new Set(sorted.filter((f) => ACTIVE.has(f.status)).map((f) => f.address)).size} hosts`
  const blocks: Block[] = [
    { para: `vulnscan keeps this ticket in step with its findings: it is updated at each scan and closed when every finding below is fixed or decided.` },
    { heading: 'Findings' },
    {
      items: sorted.map((f) => `${f.cveId} [${f.status}] ${f.severity}${f.cvss === null ? '' : ` CVSS ${f.cvss}`}${f.kev === null ? '' : ' KEV'} — ${f.product}${f.version === null ? '' : ` ${f.version}`} on ${where(f)}; last seen ${f.lastSeen} (scan ${f.lastScanId})${f.comment === null ? '' : `; decision: ${f.comment}`}`)
    }
  ]
  if (first.description !== '') blocks.push({ heading: 'Description' }, { para: first.description.slice(0, 1500) })
  if (first.remediation !== undefined) blocks.push({ heading: 'Remediation' }, { para: first.remediation })
  blocks.push({ para: `Evidence: ${first.evidence.slice(0, 300)}` })
  const text: TicketText = { title, blocks }
  const lastScanId = sorted.reduce((s, f) => f.lastSeen > s.at ? { at: f.lastSeen, id: f.lastScanId } : s, { at: '', id: '' }).id
  return { key: ticketKey(i.id, i.grouping, group), group, open, closedAs, text, hash: createHash('sha256').update(JSON.stringify(text)).digest('hex'), lastScanId }
}

const CLOSE_WORDS: Record<NonNullable<Desired['closedAs']>, string> = {
  fixed: 'Fixed: a re-scan no longer finds it. Closed by vulnscan.',
  accepted: 'Risk accepted in vulnscan. Closed by vulnscan.',
  false_positive: 'Marked a false positive in vulnscan. Closed by vulnscan.'
}

/** Bring one ticket in step; returns what was done. Throws TrackerError. */
async function reconcileOne (store: IntegrationStore, i: IntegrationRecord, client: TrackerClient, d: Desired, t: TicketRecord | null): Promise<keyof SyncCounts> {
  const now = (): string => new Date().toISOString()
  const put = async (next: Partial<TicketRecord> & Pick<TicketRecord, 'ref' | 'state' | 'contentHash'>): Promise<void> => {
    await store.putTicket(i.id, { key: d.key, group: d.group, url: null, ...t, ...next, updatedAt: now() })
  }
  if (t === null || t.ref === null) {
    // A create sent before may have reached the tracker without its answer reaching us: look for the key first.
    const found = t === null ? null : await client.find(d.key)
    if (found === null) {
      if (!d.open) return 'unchanged'
      // The intent, with the text it sends: a ticket found later by its key is known to say this already.
      await store.putTicket(i.id, { key: d.key, group: d.group, ref: null, url: null, state: 'open', contentHash: d.hash, updatedAt: now() })
      const made = await client.create(d.key, d.text)
      await put({ ref: made.ref, url: made.url, state: 'open', contentHash: d.hash })
      return 'created'
    }
    t = { key: d.key, group: d.group, ref: found.ref, url: found.url, state: found.open ? 'open' : 'closed', contentHash: t?.contentHash ?? '', updatedAt: now() }
    await store.putTicket(i.id, t)
  }
  const ref = t.ref as string
  // Each step is kept as it succeeds, so that a sync cut short after it does not send it again.
  const updateText = async (): Promise<void> => {
    if (t?.contentHash === d.hash) return
    await client.update(ref, d.text)
    await put({ ref, state: t?.state ?? 'open', contentHash: d.hash })
  }
  if (d.open && t.state === 'closed') {
    await updateText()
    await client.comment(ref, `Seen again by scan ${d.lastScanId}: reopened by vulnscan.`)
    await client.setOpen(ref, true, 'completed')
    await put({ ref, state: 'open', contentHash: d.hash, closedAs: undefined })
    return 'reopened'
  }
  if (!d.open && t.state === 'open') {
    await updateText()
    await client.comment(ref, CLOSE_WORDS[d.closedAs ?? 'fixed'])
    await client.setOpen(ref, false, d.closedAs === 'fixed' ? 'completed' : 'not_planned')
    await put({ ref, state: 'closed', contentHash: d.hash, closedAs: d.closedAs })
    return 'closed'
  }
  if (t.contentHash !== d.hash && d.open) {
    await client.update(ref, d.text)
    await put({ ref, state: t.state, contentHash: d.hash })
    return 'updated'
  }
  return 'unchanged'
}

/** One pass over an integration's findings and tickets. Throws when any ticket could not be brought in step. */
async function reconcile (deps: SyncDeps, i: IntegrationRecord): Promise<SyncCounts> {
  const counts: SyncCounts = { created: 0, updated: 0, closed: 0, reopened: 0, unchanged: 0, failed: 0 }
  const token = deps.box.open(i.sealedToken, tokenContext(i.id))
  let current = { action: 'sync', key: '', ref: null as string | null }
  const client = trackerClient(i, token, {
    ...deps.http,
    policy: deps.policy,
    onAttempt: async (n) => {
      await deps.store.appendDelivery({ id: randomUUID(), integrationId: i.id, at: new Date().toISOString(), action: current.action, key: current.key, ref: current.ref, ...n, ok: n.error === null })
    }
  })
  const groups = new Map<string, FindingRecord[]>()
  for (const f of await findingsFor(deps.results, i.filter)) {
    const g = groupOf(f, i.grouping)
    const list = groups.get(g)
    if (list === undefined) groups.set(g, [f])
    else list.push(f)
  }
  const tickets = new Map((await deps.store.listTickets(i.id)).map((t) => [t.key, t]))
  const failures: TrackerError[] = []
  for (const [group, members] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const d = desiredTicket(i, group, members)
    const t = tickets.get(d.key) ?? null
    current = { action: t === null || t.ref === null ? (d.open ? 'create' : 'find') : d.open ? (t.state === 'closed' ? 'reopen' : 'update') : 'close', key: d.key, ref: t?.ref ?? null }
    try {
      counts[await reconcileOne(deps.store, i, client, d, t)]++
    } catch (err) {
      if (!(err instanceof TrackerError)) throw err
      counts.failed++
      failures.push(err)
      deps.log.warn({ integrationId: i.id, key: d.key, error: err.message }, 'ticket not brought in step; the next sync tries again')
    }
  }
  if (failures.length > 0) {
    throw new SyncError(`${failures.length} ticket(s) not brought in step: ${failures[0].message}`, failures.every((f) => !f.retryable), counts)
  }
  return counts
}

export class SyncError extends Error {
  constructor (message: string, readonly permanent: boolean, readonly counts: SyncCounts) {
    super(message)
    this.name = 'SyncError'
  }
}

/** How long a sync may hold an integration before another process may take it over. */
export const SYNC_LOCK_MS = 10 * 60_000

/**
 * Sync one integration now, in this process. When another sync of it runs, that one is asked to run once more
 * (it then sees whatever this one would have) and this returns null.
 */
export async function syncIntegration (deps: SyncDeps, integrationId: string): Promise<SyncCounts | null> {
  const owner = randomUUID()
  if (!(await deps.store.claimSync(integrationId, owner, SYNC_LOCK_MS))) return null
  let counts: SyncCounts | null = null
  let held = true
  try {
    for (;;) {
      const i = await deps.store.get(integrationId)
      if (i === null || !i.enabled) return counts
      counts = await reconcile(deps, i)
      deps.log.info?.({ integrationId, ...counts }, 'integration synced')
      held = false
      // Another sync was asked for while this one ran: run once more, so that what it would have seen is sent.
      if (!(await deps.store.releaseSync(integrationId, owner))) return counts
      if (!(await deps.store.claimSync(integrationId, owner, SYNC_LOCK_MS))) return counts
      held = true
    }
  } finally {
    if (held) await deps.store.releaseSync(integrationId, owner).catch(() => false)
  }
}
