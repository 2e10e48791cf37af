import { Type } from '@sinclair/typebox'
import { ListQueryProperties, pageOf, ref, StringEnum } from './common'
import { ScanSchema } from './scan'
import { WEBHOOK_EVENTS, WEBHOOK_FORMATS, WEBHOOK_TEST_EVENT } from '../lib/vocabulary'

const EventsProperty = Type.Array(StringEnum([...WEBHOOK_EVENTS]), {
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  description: '`scan.completed`, `scan.failed`, `scan.cancelled`: a scan ended so (the Scan is in the body). `finding.new`: a scan found ' +
    'findings on a host not seen there before, filtered by `filter`'
})

export const WebhookFilterSchema = Type.Object({
  minSeverity: Type.Optional(StringEnum(['critical', 'high', 'medium', 'low', 'none'], { description: 'Only findings of this severity or worse' })),
  kevOnly: Type.Optional(Type.Boolean({ description: 'Only findings on CISA\'s Known Exploited Vulnerabilities list' })),
  minConfidence: Type.Optional(Type.Union([
    StringEnum(['high', 'medium', 'low']),
    Type.Integer({ minimum: 0, maximum: 100 })
  ], { description: 'Only findings of this confidence or higher: a label (its findings and those of the labels above it), or a number 0–100 that the finding\'s confidenceScore must reach' }))
}, { $id: 'WebhookFilter', additionalProperties: false, description: 'Which new findings `finding.new` tells; scan events are not filtered' })

export const WebhookUrlSchema = Type.String({
  $id: 'WebhookUrl',
  minLength: 1,
  maxLength: 2048,
  description: 'http or https URL the events are posted to. Private, loopback, link-local, CGNAT, multicast and other special addresses ' +
    'are refused unless WEBHOOK_ALLOW names them; a host name is resolved and checked again at each delivery, which connects to the ' +
    'address it checked. Redirects are not followed.',
  examples: ['https://hooks.example.com/vulnscan']
})
const UrlProperty = ref(WebhookUrlSchema)
const FormatProperty = StringEnum([...WEBHOOK_FORMATS], { description: '`json`: the WebhookEvent body. `slack`: a Slack-compatible message `{"text": …}`' })
const DescriptionProperty = Type.String({ maxLength: 200, description: 'What the webhook is for' })

export const WebhookCreateSchema = Type.Object({
  url: UrlProperty,
  events: EventsProperty,
  filter: Type.Optional(ref(WebhookFilterSchema)),
  format: Type.Optional({ ...FormatProperty, default: 'json' }),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  description: Type.Optional(DescriptionProperty)
}, {
  $id: 'WebhookCreate',
  additionalProperties: false,
  examples: [{ url: 'https://hooks.example.com/vulnscan', events: ['scan.failed', 'finding.new'], filter: { minSeverity: 'high', kevOnly: false, minConfidence: 'medium' }, format: 'json', description: 'security channel' }]
})

export const WebhookPatchSchema = Type.Object({
  url: Type.Optional(UrlProperty),
  events: Type.Optional(EventsProperty),
  filter: Type.Optional(ref(WebhookFilterSchema)),
  format: Type.Optional(FormatProperty),
  enabled: Type.Optional(Type.Boolean()),
  description: Type.Optional(DescriptionProperty)
}, { $id: 'WebhookPatch', additionalProperties: false, minProperties: 1, description: 'The fields to change; `filter` is replaced whole', examples: [{ enabled: false }] })

const EXAMPLE_WEBHOOK = {
  id: '0b6f1c52-3f0e-4d8e-a0a4-9f3c2f1d7e11',
  url: 'https://hooks.example.com/vulnscan',
  events: ['scan.failed', 'finding.new'],
  filter: { minSeverity: 'high' },
  format: 'json',
  enabled: true,
  description: 'security channel',
  createdAt: '2026-01-05T09:00:00.000Z',
  updatedAt: '2026-01-05T09:00:00.000Z'
}

export const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(StringEnum([...WEBHOOK_EVENTS])),
  filter: ref(WebhookFilterSchema),
  format: StringEnum([...WEBHOOK_FORMATS]),
  enabled: Type.Boolean(),
  description: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
}, { $id: 'Webhook', description: 'A webhook; its secret is shown only when it is created', examples: [EXAMPLE_WEBHOOK] })

export const WebhookCreatedSchema = Type.Composite([WebhookSchema, Type.Object({
  secret: Type.String({ description: 'Signs every body: `X-Vulnscan-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. Shown only in this response: store it now.' })
})], { $id: 'WebhookCreated', examples: [{ ...EXAMPLE_WEBHOOK, secret: 'whsec_4bq1c0Yg0y3mVw2m6nq2m4r7p1s8t5u9x0z3a6d9f2h' }] })

export const PageWebhookSchema = pageOf(WebhookSchema, 'PageWebhook')

export const WebhookDeliverySchema = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time', description: 'When the attempt started' }),
  event: Type.String({ description: `The event sent (\`${WEBHOOK_TEST_EVENT}\` for a test delivery)` }),
  eventId: Type.String({ description: 'The event\'s id, the same on every attempt (header `X-Vulnscan-Delivery`)' }),
  attempt: Type.Integer({ minimum: 1 }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver\'s HTTP status; null when none came' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed: a refused address, a timeout, a connection error or a non-2xx status' }),
  durationMs: Type.Integer({ minimum: 0 }),
  ok: Type.Boolean({ description: 'A 2xx answer came' }),
  willRetry: Type.Boolean({ description: 'Another attempt follows (after a backoff)' })
}, {
  $id: 'WebhookDelivery',
  examples: [{ id: '9d2e6f3a-1c4b-4e8a-b7f0-2a5c8d1e4f60', at: '2026-01-06T02:14:03.120Z', event: 'scan.failed', eventId: '3f9a1c0e7b2d4a6f8e1c3b5d7f9a2c4e', attempt: 2, statusCode: 500, error: 'answered 500', durationMs: 41, ok: false, willRetry: true }]
})

export const PageWebhookDeliverySchema = pageOf(WebhookDeliverySchema, 'PageWebhookDelivery')

const WebhookFindingSchema = Type.Object({
  id: Type.String(),
  address: Type.String(),
  port: Type.Integer(),
  protocol: StringEnum(['tcp', 'udp'], { description: 'The port\'s transport' }),
  cveId: Type.String(),
  severity: Type.String(),
  cvss: Type.Union([Type.Number(), Type.Null()]),
  cvssVersion: Type.Union([Type.String(), Type.Null()]),
  kev: Type.Boolean({ description: 'On CISA\'s Known Exploited Vulnerabilities list' }),
  confidence: StringEnum(['high', 'medium', 'low']),
  confidenceScore: Type.Integer({ minimum: 0, maximum: 100, description: 'How sure, 0–100 (the Finding\'s confidenceScore)' }),
  product: Type.String(),
  version: Type.Union([Type.String(), Type.Null()]),
  description: Type.String({ description: 'The CVE description, at most 500 characters' }),
  status: Type.String()
})

export const WebhookEventSchema = Type.Object({
  id: Type.String({ description: 'The event id (also in `X-Vulnscan-Delivery`): the same on every attempt, so a receiver can drop a repeat' }),
  event: StringEnum([...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT]),
  createdAt: Type.String({ format: 'date-time' }),
  scan: Type.Optional(Type.Union([ref(ScanSchema), Type.Object({ id: Type.String(), scheduleId: Type.Optional(Type.String()) })], {
    description: 'scan.*: the Scan as GET /app/scan/{id} shows it; finding.new: the id of the scan that found them'
  })),
  host: Type.Optional(Type.String({ description: 'finding.new: the host the findings are on' })),
  findings: Type.Optional(Type.Array(WebhookFindingSchema, { description: 'finding.new: the new findings that pass the webhook\'s filter' })),
  message: Type.Optional(Type.String({ description: `${WEBHOOK_TEST_EVENT} only` }))
}, {
  $id: 'WebhookEvent',
  description: 'The body of a `json` webhook (POST, `Content-Type: application/json`), signed in `X-Vulnscan-Signature-256: sha256=<hex>` ' +
    '(HMAC-SHA256 of the raw body with the webhook\'s secret); `X-Vulnscan-Event` names the event. A `slack` webhook gets `{"text": …}` instead.',
  examples: [{
    id: '3f9a1c0e7b2d4a6f8e1c3b5d7f9a2c4e',
    event: 'finding.new',
    createdAt: '2026-01-06T02:14:03.120Z',
    scan: { id: 'scan-1' },
    host: '192.0.2.10',
    findings: [{ id: '5c1f0e2d3b4a59687a6b5c4d', address: '192.0.2.10', port: 22, protocol: 'tcp', cveId: 'CVE-2024-6387', severity: 'high', cvss: 8.1, cvssVersion: '3.1', kev: false, confidence: 'medium', confidenceScore: 50, product: 'OpenSSH', version: '9.2p1', description: 'A signal handler race condition was found in OpenSSH\'s server (sshd)…', status: 'open' }]
  }]
})

export const SlackMessageSchema = Type.Object({
  text: Type.String({ description: 'One line saying what happened (for finding.new, one more line per finding, at most 20)' })
}, { $id: 'SlackMessage', description: 'The body of a `slack` webhook: a Slack-compatible incoming-webhook message' })

export const WebhookListQuerySchema = Type.Object({ ...ListQueryProperties }, { additionalProperties: false })

export const WebhookDeliveriesQuerySchema = Type.Object({
  ...ListQueryProperties,
  failed: Type.Optional(Type.Boolean({ description: 'Only the deliveries that failed for good and are kept for redelivery (one per event: its last attempt)' }))
}, { additionalProperties: false })

export const WebhookDeliveryParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' }),
  delivery: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$', description: 'The delivery id: the X-Vulnscan-Delivery header, `eventId` in the log' })
})

export const WebhookRedeliverySchema = Type.Object({
  status: Type.Literal('queued'),
  delivery: Type.String({ description: 'The delivery id, the same as the failed delivery\'s (X-Vulnscan-Delivery)' }),
  event: Type.String()
}, { $id: 'WebhookRedelivery', description: 'A failed delivery queued again; it leaves the failed list once delivered' })

export const WebhookIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' })
})
