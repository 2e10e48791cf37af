// Webhook events: what the service tells (a scan ended, new findings), written as our JSON event or a Slack
// message, queued once per event and webhook, and sent with retries by whichever process runs deliveries.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { DeliveryHandler, DeliveryQueue } from '../queue/types'
import { PermanentJobError } from '../queue/types'
import type { ScanRecord, Store, WebhookDelivery, WebhookFilter, WebhookRecord } from '../store/types'
import type { FindingRecord, NewFinding, ResultsStore } from '../store/results-types'
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
export function passesFilter (f: Pick<FindingRecord, 'severity' | 'kev' | 'confidence'>, filter: WebhookFilter): boolean {
  if (filter.minSeverity !== undefined && SEVERITY_ORDER.indexOf(f.severity) < SEVERITY_ORDER.indexOf(filter.minSeverity)) return false
  if (filter.kevOnly === true && f.kev === null) return false
  if (filter.minConfidence !== undefined && CONFIDENCE_ORDER.indexOf(f.confidence) < CONFIDENCE_ORDER.indexOf(filter.minConfidence)) return false
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
}

/** Where scans and findings are told about: the worker and the cancel route call it; it never throws. */
export interface Notifier {
  scanEnded(scan: ScanRecord): Promise<void>
  /** A host write of `at` in `scan` reported new findings: those among `candidates` first seen by that write are told. */
  findingsNew(scan: Pick<ScanRecord, 'id' | 'scheduleId'>, address: string, at: string, candidates: NewFinding[]): Promise<void>
}

async function subscribed (store: Store, event: WebhookEvent): Promise<WebhookRecord[]> {
  const out: WebhookRecord[] = []
  for (let offset = 0; ; offset += 500) {
    const page = await store.listWebhooks({ limit: 500, offset })
    out.push(...page.items.filter((w) => w.enabled && w.events.includes(event)))
    if (page.items.length < 500) return out
  }
}

export function createNotifier (deps: { store: Store, results: ResultsStore, deliveries: DeliveryQueue, log: NotifierLogger }): Notifier {
  const { store, results, deliveries, log } = deps
  const queue = async (w: WebhookRecord, body: WebhookBody): Promise<void> => {
    await deliveries.add(`${body.id}:${w.id}`, { webhookId: w.id, event: body.event, eventId: body.id, body: renderBody(w.format, body) })
  }
  return {
    async scanEnded (scan) {
      if (scan.status !== 'completed' && scan.status !== 'failed' && scan.status !== 'cancelled') return
      const event: WebhookEvent = `scan.${scan.status}`
      try {
        const hooks = await subscribed(store, event)
        if (hooks.length === 0) return
        const body: WebhookBody = { id: eventId(event, scan.id), event, createdAt: scan.finishedAt ?? new Date().toISOString(), scan: publicScan(scan) }
        for (const w of hooks) await queue(w, body)
      } catch (err) {
        log.warn({ err: { message: (err as Error).message }, scanId: scan.id, event }, 'could not queue webhook deliveries')
      }
    },
    async findingsNew (scan, address, at, candidates) {
      try {
        const hooks = await subscribed(store, 'finding.new')
        if (hooks.length === 0) return
        const found: FindingRecord[] = []
        for (const c of candidates) {
          if (c.observed !== 'open') continue
          const f = await results.getFinding(findingId(address, c.port, c.cveId, c.protocol))
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
      } catch (err) {
        log.warn({ err: { message: (err as Error).message }, scanId: scan.id, address }, 'could not queue finding.new deliveries')
      }
    }
  }
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

/** The queue's handler: a webhook deleted or disabled meanwhile gets nothing; a failure is retried unless permanent. */
export function createDeliveryHandler (deps: { store: Store, policy: WebhookPolicy, timeoutMs: number, log: NotifierLogger, resolve?: (host: string) => Promise<string[]> }): DeliveryHandler {
  return async (job, attempt, final) => {
    const w = await deps.store.getWebhook(job.webhookId)
    if (w === null || !w.enabled) return
    const { result } = await attemptDelivery(deps, w, job, attempt, final)
    if (result.error === null) return
    deps.log.warn({ webhookId: w.id, event: job.event, attempt, error: result.error }, final || result.permanent ? 'webhook delivery failed for good' : 'webhook delivery failed, will retry')
    throw result.permanent ? new PermanentJobError(result.error) : new Error(result.error)
  }
}
