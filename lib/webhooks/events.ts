// Webhook events: what the service tells (a scan ended, new findings), written as our JSON event or a Slack
// message, queued once per event and webhook, and sent with retries by whichever process runs deliveries.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { DeliveryHandler, DeliveryQueue } from '../queue/types'
import { PermanentJobError } from '../queue/types'
import { outboxKey, type OutboxEntry, type ScanRecord, type Store, type WebhookDelivery, type WebhookFilter, type WebhookRecord } from '../store/types'
import { outageReason } from '../outage'
import type { FindingRecord, NewFinding } from '../domain/findings'
import type { ResultsStore } from '../store/results-types'
import { findingId } from '../store/results-merge'
import { WEBHOOK_TEST_EVENT, type WebhookEvent, type WebhookFormat } from '../vocabulary'
import { sendWebhook, type SendResult } from './send'
import type { WebhookPolicy } from './policy'

/** A new webhook's signing secret. */
export function newWebhookSecret (): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}

/** A stable event id from what the event is about: every process and every retry names it alike. */
export function eventId (...parts: string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32)
}

const SEVERITY_ORDER = ['none', 'unknown', 'low', 'medium', 'high', 'critical']
const CONFIDENCE_ORDER = ['low', 'medium', 'high']

/** Whether a finding passes a webhook's filter. */
export function passesFilter (f: Pick<FindingRecord, 'severity' | 'kev' | 'confidence' | 'confidenceScore'>, filter: WebhookFilter): boolean {
  if (filter.minSeverity !== undefined && SEVERITY_ORDER.indexOf(f.severity) < SEVERITY_ORDER.indexOf(filter.minSeverity)) return false
  if (filter.kevOnly === true && f.kev === null) return false
  const min = filter.minConfidence
  if (typeof min === 'number' && f.confidenceScore < min) return false
  if (typeof min === 'string' && CONFIDENCE_ORDER.indexOf(f.confidence) < CONFIDENCE_ORDER.indexOf(min)) return false
  return true
}

/** The scan as an event shows it: the fields GET /app/scan/{id} shows, nothing internal. */
function publicScan (s: ScanRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id, status: s.status, targets: s.targets, template: s.template, priority: s.priority, createdAt: s.createdAt, progress: s.progress
  }
  for (const k of ['ports', 'startedAt', 'finishedAt', 'reason', 'summary', 'scheduleId'] as const) if (s[k] !== undefined) out[k] = s[k]
  return out
}

function publicFinding (f: FindingRecord): Record<string, unknown> {
  return {
    id: f.id,
    address: f.address,
    port: f.port,
    protocol: f.protocol,
    cveId: f.cveId,
    severity: f.severity,
    cvss: f.cvss,
    cvssVersion: f.cvssVersion,
    kev: f.kev !== null,
    confidence: f.confidence,
    confidenceScore: f.confidenceScore,
    product: f.product,
    version: f.version,
    description: f.description.slice(0, 500),
    status: f.status
  }
}

export interface WebhookBody {
  id: string
  event: WebhookEvent | typeof WEBHOOK_TEST_EVENT
  createdAt: string
  scan?: Record<string, unknown>
  host?: string
  findings?: Record<string, unknown>[]
  message?: string
}

const MAX_SLACK_FINDINGS = 20

/** A Slack-compatible message (`{"text": …}`) saying what the event says. */
function slackText (b: WebhookBody): string {
  if (b.event === WEBHOOK_TEST_EVENT) return `vulnscan: test delivery (${b.id})`
  const scan = b.scan as { id: string, status: string, reason?: string, summary?: { hostsUp: number, openPorts: number, findings: Record<string, number> } } | undefined
  if (b.event === 'finding.new') {
    const lines = (b.findings ?? []).slice(0, MAX_SLACK_FINDINGS).map((f) =>
      `• ${String(f.cveId)} (${String(f.severity)}${f.cvss === null ? '' : `, CVSS ${String(f.cvss)}`}${f.kev === true ? ', KEV' : ''}) ${f.port === 0 ? 'in the package list' : `on port ${String(f.port)}${f.protocol === 'udp' ? '/udp' : ''}`}: ${String(f.product)} ${String(f.version ?? '')}`.trimEnd())
    const more = (b.findings?.length ?? 0) > MAX_SLACK_FINDINGS ? `\n… and ${(b.findings?.length ?? 0) - MAX_SLACK_FINDINGS} more` : ''
    return `vulnscan: ${b.findings?.length ?? 0} new finding${b.findings?.length === 1 ? '' : 's'} on ${String(b.host)} (scan ${String(scan?.id)})\n${lines.join('\n')}${more}`
  }
  const counts = scan?.summary === undefined
    ? ''
    : ` — ${scan.summary.hostsUp} hosts up, ${scan.summary.openPorts} open ports, findings: ${Object.entries(scan.summary.findings).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(', ') || 'none'}`
  return `vulnscan: scan ${String(scan?.id)} ${String(scan?.status)}${scan?.reason === undefined ? '' : ` (${scan.reason})`}${counts}`
}

/** The bytes sent for an event in a webhook's format. */
export function renderBody (format: WebhookFormat, body: WebhookBody): string {
  return JSON.stringify(format === 'slack' ? { text: slackText(body) } : body)
}

export function testBody (webhookId: string, now = new Date()): WebhookBody {
  return { id: eventId('test', webhookId, randomUUID()), event: WEBHOOK_TEST_EVENT, createdAt: now.toISOString(), message: 'A test delivery from vulnscan: the signature header shows the secret works.' }
}

export interface NotifierLogger {
  warn(obj: object, msg: string): void
  debug?(obj: object, msg: string): void
}

/** How long an outbox entry waits before the relay takes it: the fast path (the process that wrote it) goes first. */
export const OUTBOX_SETTLE_MS = 10_000

/**
 * Where scans and findings are told about (the worker and the cancel route call it). Every event is kept in the
 * store's outbox until its deliveries are queued: the calls here are the fast path, `relay` the one that catches up
 * after a crash or an outage. None of them throws but `recordFindings`.
 */
export interface Notifier {
  scanEnded(scan: ScanRecord): Promise<void>
  /**
   * Before a host write: keep, in the outbox, the open findings the write may make new, so that a crash after the
   * write commits cannot lose its `finding.new`. Returns the keys findingsNew takes. Throws when the store does.
   */
  recordFindings(scan: Pick<ScanRecord, 'id' | 'scheduleId'>, writes: { address: string, at: string, candidates: NewFinding[] }[]): Promise<(string | null)[]>
  /** A host write of `at` in `scan` committed: those among `candidates` first seen by that write are told. */
  findingsNew(scan: Pick<ScanRecord, 'id' | 'scheduleId'>, address: string, at: string, candidates: NewFinding[], key?: string | null): Promise<void>
  /** Queue the deliveries of outbox entries kept for at least `olderThanMs`; returns how many entries it took. */
  relay(olderThanMs?: number): Promise<number>
}

async function subscribed (store: Store, event: WebhookEvent): Promise<WebhookRecord[]> {
  const out: WebhookRecord[] = []
  for (let offset = 0; ; offset += 500) {
    const page = await store.listWebhooks({ limit: 500, offset })
    out.push(...page.items.filter((w) => w.enabled && w.events.includes(event)))
    if (page.items.length < 500) return out
  }
}

export function createNotifier (deps: {
  store: Store
  results: ResultsStore
  deliveries: DeliveryQueue
  log: NotifierLogger
  /** Told of each completed scan (issue-tracker syncs), from the same outbox entry as the webhooks: throws to keep it. */
  onScanCompleted?: (scan: ScanRecord) => Promise<void>
}): Notifier {
  const { store, results, deliveries, log } = deps
  const queue = async (w: WebhookRecord, body: WebhookBody): Promise<void> => {
    await deliveries.add(`${body.id}:${w.id}`, { webhookId: w.id, event: body.event, eventId: body.id, body: renderBody(w.format, body) })
  }
  /** Queue a scan's end event (the delivery ids are the event's: queueing twice sends once). Throws. */
  const tellScanEnded = async (scan: ScanRecord): Promise<void> => {
    if (scan.status !== 'completed' && scan.status !== 'failed' && scan.status !== 'cancelled') return
    if (scan.status === 'completed') await deps.onScanCompleted?.(scan)
    const event: WebhookEvent = `scan.${scan.status}`
    const hooks = await subscribed(store, event)
    const body: WebhookBody = { id: eventId(event, scan.id), event, createdAt: scan.finishedAt ?? new Date().toISOString(), scan: publicScan(scan) }
    for (const w of hooks) await queue(w, body)
  }
  /** Queue `finding.new` for the findings among `ids` first seen by the write of `at`. Throws. */
  const tellFindings = async (scan: Pick<ScanRecord, 'id' | 'scheduleId'>, address: string, at: string, ids: string[]): Promise<void> => {
    const hooks = await subscribed(store, 'finding.new')
    if (hooks.length === 0) return
    const found: FindingRecord[] = []
    for (const id of ids) {
      const f = await results.getFinding(id)
      // First seen by this very write: new. A retried write has another time and tells nothing twice.
      if (f !== null && f.firstSeen === at && f.status === 'open') found.push(f)
    }
    if (found.length === 0) return
    for (const w of hooks) {
      const mine = found.filter((f) => passesFilter(f, w.filter))
      if (mine.length === 0) continue
      const body: WebhookBody = {
        id: eventId('finding.new', scan.id, address, ...mine.map((f) => f.id)),
        event: 'finding.new',
        createdAt: at,
        scan: { id: scan.id, ...(scan.scheduleId !== undefined ? { scheduleId: scan.scheduleId } : {}) },
        host: address,
        findings: mine.map(publicFinding)
      }
      await queue(w, body)
    }
  }
  const openIds = (address: string, candidates: NewFinding[]): string[] =>
    candidates.filter((c) => c.observed === 'open').map((c) => findingId(address, c.port, c.cveId, c.protocol))
  const quiet = (obj: object, msg: string): void => (log.debug ?? log.warn).call(log, obj, msg)
  return {
    async scanEnded (scan) {
      try {
        await tellScanEnded(scan)
        await store.removeOutbox([outboxKey({ kind: 'scan', scanId: scan.id })])
      } catch (err) {
        // Kept in the outbox by the step that ended the scan: the relay queues it later.
        quiet({ reason: outageReason(err), scanId: scan.id }, 'scan end event kept for the relay')
      }
    },
    async recordFindings (scan, writes) {
      const entries: (OutboxEntry | null)[] = writes.map((w) => {
        const findingIds = openIds(w.address, w.candidates)
        return findingIds.length === 0 ? null : { kind: 'findings', scanId: scan.id, ...(scan.scheduleId !== undefined ? { scheduleId: scan.scheduleId } : {}), address: w.address, at: w.at, findingIds }
      })
      await store.addOutbox(entries.filter((e): e is OutboxEntry => e !== null))
      return entries.map((e) => e === null ? null : outboxKey(e))
    },
    async findingsNew (scan, address, at, candidates, key) {
      try {
        await tellFindings(scan, address, at, openIds(address, candidates))
        if (key !== undefined && key !== null) await store.removeOutbox([key])
      } catch (err) {
        quiet({ reason: outageReason(err), scanId: scan.id, address }, 'finding.new event kept for the relay')
      }
    },
    async relay (olderThanMs = OUTBOX_SETTLE_MS) {
      const entries = await store.listOutbox(olderThanMs, 200)
      for (const { key, entry } of entries) {
        if (entry.kind === 'scan') {
          const scan = await store.getScan(entry.scanId)
          if (scan !== null) await tellScanEnded(scan)
        } else {
          await tellFindings({ id: entry.scanId, scheduleId: entry.scheduleId }, entry.address, entry.at, entry.findingIds)
        }
        await store.removeOutbox([key])
      }
      return entries.length
    }
  }
}

/** Runs the notifier's relay every few seconds until the returned function is called. */
export function startOutboxRelay (notifier: Notifier, log: NotifierLogger, everyMs = 5000): () => void {
  let running = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    notifier.relay()
      .catch((err) => (log.debug ?? log.warn).call(log, { reason: outageReason(err) }, 'webhook outbox relay put off'))
      .finally(() => { running = false })
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}

/** Send once to a webhook and write the attempt in its delivery log. */
export async function attemptDelivery (deps: { store: Store, policy: WebhookPolicy, timeoutMs: number, resolve?: (host: string) => Promise<string[]> },
  w: WebhookRecord, job: { event: string, eventId: string, body: string }, attempt: number, final: boolean): Promise<{ result: SendResult, delivery: WebhookDelivery }> {
  const at = new Date().toISOString()
  const result = await sendWebhook({ url: w.url, body: job.body, secret: w.secret, event: job.event, eventId: job.eventId, policy: deps.policy, timeoutMs: deps.timeoutMs, resolve: deps.resolve })
  const ok = result.error === null
  const delivery = {
    id: randomUUID(), webhookId: w.id, at, event: job.event, eventId: job.eventId, attempt,
    statusCode: result.statusCode, error: result.error, durationMs: result.durationMs, ok, willRetry: !ok && !final && !result.permanent
  }
  await deps.store.appendWebhookDelivery(delivery)
  return { result, delivery }
}

/**
 * The queue's handler: a webhook deleted or disabled meanwhile gets nothing; a failure is retried unless permanent,
 * and one that failed for good is kept (FailedDelivery) for inspection and POST …/deliveries/{delivery}/retry.
 */
export function createDeliveryHandler (deps: { store: Store, policy: WebhookPolicy, timeoutMs: number, log: NotifierLogger, resolve?: (host: string) => Promise<string[]> }): DeliveryHandler {
  return async (job, attempt, final) => {
    const w = await deps.store.getWebhook(job.webhookId)
    if (w === null || !w.enabled) return
    const { result, delivery } = await attemptDelivery(deps, w, job, attempt, final)
    if (result.error === null) {
      // Delivered: a failure kept from before (this is its retry) is settled.
      if (attempt > 1 || job.retry === true) await deps.store.dropFailedDelivery(w.id, job.eventId)
      return
    }
    const givenUp = final || result.permanent
    deps.log.warn({ webhookId: w.id, event: job.event, attempt, error: result.error }, givenUp ? 'webhook delivery failed for good; kept for redelivery' : 'webhook delivery failed, will retry')
    if (givenUp) {
      await deps.store.keepFailedDelivery({ webhookId: w.id, eventId: job.eventId, event: job.event, body: job.body, failedAt: delivery.at, attempts: attempt, statusCode: result.statusCode, error: result.error })
    }
    throw result.permanent ? new PermanentJobError(result.error) : new Error(result.error)
  }
}
