import { Type, type Static } from '@sinclair/typebox'
import { ListQueryProperties, pageOf, ref, StringEnum } from './common'
import { DataSourcesSchema } from './health'
import { tagList } from './tags'
import { DEFAULT_PRIORITY, DEFAULT_TEMPLATE, PRIORITY_MAX, PRIORITY_MIN, SCAN_STATUSES, TEMPLATE_NAMES } from '../lib/vocabulary'

export const TargetSchema = Type.Object({
  value: Type.String({ minLength: 1, maxLength: 255, description: 'An IPv4/IPv6 address, a range `a.b.c.d-a.b.c.e`, a CIDR block or a DNS name, as `type` says' }),
  type: StringEnum(['single_ip', 'ip_range', 'cidr', 'dns_name'], { description: 'How to read `value`' })
}, { $id: 'Target', additionalProperties: false })

export const ScanOptionsSchema = Type.Object({
  template: Type.Optional(StringEnum([...TEMPLATE_NAMES], { default: DEFAULT_TEMPLATE, description: 'quick: top 100 ports plus modern services, light detection; standard: top 1000, full detection; full: all 65535 ports; discovery: quick\'s ports, no detection, no CVE matching' })),
  ports: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$', description: 'Overrides the template\'s ports, e.g. `22,80,8000-8100` (1..65535)', examples: ['22,80,443,8000-8100'] })),
  udp: Type.Optional(Type.Boolean({ description: 'Also scan UDP (absent: no, unless `udpPorts` is given): the template\'s UDP ports (quick and discovery: 20 common service ports; standard and full: 50), or `udpPorts`. A UDP port reads open (it answered), closed (ICMP port unreachable) or open|filtered (no answer after the retries)' })),
  udpPorts: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$', description: 'UDP ports to scan instead of the template\'s; implies `udp` unless it is false', examples: ['53,123,161'] })),
  discovery: Type.Optional(Type.Boolean({ default: true, description: 'Host discovery before the port scan when the targets cover several addresses: a few TCP connects per address, and addresses that answer none are reported down without a port scan. false scans every address (like nmap -Pn)' })),
  intrusive: Type.Optional(Type.Boolean({ default: false, description: 'Also run intrusive templates and checks: those tagged intrusive, dos, bruteforce, default-login or fuzz, which try logins with empty or documented default passwords (leaving failed logins in the target\'s logs; accounts may lock) or send what may disturb a fragile service (docs/templates.md and docs/checks.md list them). Default false: only read-only exchanges' })),
  credentials: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }), {
    maxItems: 8,
    uniqueItems: true,
    description: 'Stored SSH credentials (POST /admin/credentials) to log in to every host found up with, by id or name, tried in order ' +
      '(the next only when a host refuses the previous). The host\'s package list is then decided by its distribution\'s tracker: ' +
      'package findings on port 0, `source: distribution`, `rule: package`, and the banner findings of the same packages decided by what is installed. ' +
      'Any key that may post scans may name any credential, within the credential\'s `scope` (403 for a target outside it); the scan stores their ids'
  }))
}, { $id: 'ScanOptions', additionalProperties: false })

/** What a scan body says about tags: in POST /app/scan and in a schedule's scan. */
export const ScanTagProperties = {
  tags: Type.Optional(tagList('Tags added to every host the scan finds up (tags those hosts have stay)')),
  targetTags: Type.Optional(tagList('The scan also covers every known host carrying any of these tags, looked up when the scan is planned ' +
    '(so each run of a schedule picks up the hosts tagged then), within the scope lists and this key\'s scope like any target. ' +
    'With no `targets`, tags that name no host are a 400 at POST, and a failed scan when the hosts lost the tags before it was planned'))
}

export const ScanRequestSchema = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$', description: 'Client-chosen scan id (a UUID is generated when absent). Posting the same id and body again is a no-op; the same id with another body is a 409.' })),
  targets: Type.Optional(Type.Array(ref(TargetSchema), { description: 'What to scan (at most MAX_TARGETS entries); may be left out when `targetTags` names the hosts' })),
  options: Type.Optional(ref(ScanOptionsSchema)),
  priority: Type.Optional(Type.Integer({ minimum: PRIORITY_MIN, maximum: PRIORITY_MAX, default: DEFAULT_PRIORITY, description: `Queue priority from ${PRIORITY_MIN} (least urgent) to ${PRIORITY_MAX} (most urgent, started first); default ${DEFAULT_PRIORITY}` })),
  ...ScanTagProperties
}, {
  $id: 'ScanRequest',
  additionalProperties: false,
  description: 'At least one of `targets` and `targetTags` must name something to scan.',
  examples: [
    { id: 'scan-1', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: DEFAULT_TEMPLATE }, priority: DEFAULT_PRIORITY },
    { id: 'web-weekly', targetTags: ['team:web'], tags: ['scanned:weekly'] }
  ]
})
export type ScanRequest = Static<typeof ScanRequestSchema>

export const ScanAckSchema = Type.Object({
  status: Type.Literal('Message sent successfully'),
  id: Type.String({ description: 'The scan id, to follow it at /app/scan/{id}' })
}, { $id: 'ScanAck' })

export const ScanStatusSchema = StringEnum([...SCAN_STATUSES], { $id: 'ScanStatus', description: 'queued → running → completed | failed | cancelled' })

export const ScanProgressSchema = Type.Object({
  hostsTotal: Type.Integer(),
  hostsDone: Type.Integer(),
  portsTotal: Type.Integer(),
  portsDone: Type.Integer(),
  percent: Type.Number({ minimum: 0, maximum: 100, description: 'Only goes up; 100 exactly when completed' })
}, { $id: 'ScanProgress' })

const SeverityCounts = Type.Object({
  critical: Type.Integer(), high: Type.Integer(), medium: Type.Integer(), low: Type.Integer(), none: Type.Integer(), unknown: Type.Integer()
})

export const ScanSummarySchema = Type.Object({
  hostsUp: Type.Integer(),
  hostsDown: Type.Integer(),
  openPorts: Type.Integer({ description: 'Open TCP and UDP ports' }),
  openUdpPorts: Type.Optional(Type.Integer({ description: 'Of those, UDP ports that answered (present when the scan covered UDP)' })),
  findings: SeverityCounts,
  uncheckedProducts: Type.Array(Type.String(), { description: 'Products that could not be checked against the NVD (it was unreachable); re-matched when the index next updates' }),
  excluded: Type.Array(Type.Object({ address: Type.String(), reason: Type.String() }), { description: 'Resolved addresses left out by the scope lists' }),
  credentialed: Type.Optional(Type.Object({
    attempted: Type.Integer({ description: 'Hosts found up that a login was tried on' }),
    succeeded: Type.Integer({ description: 'Hosts whose package list was read and decided' }),
    failed: Type.Record(Type.String(), Type.Integer(), { description: 'Failed hosts per reason: auth (refused the credential), host-key (changed or not the pinned one), timeout, no-command, connect, output-limit, unsupported, scope, credential, error. A failed login is never a clean host: its package findings stay as the last successful login left them' }),
    hosts: Type.Array(Type.Object({ address: Type.String(), reason: Type.String(), message: Type.String() }), { description: 'The failed hosts (the first 100 by address) with their reason' })
  }, { description: 'Present when the scan named credentials' })),
  dataSources: Type.Optional(ref(DataSourcesSchema))
}, { $id: 'ScanSummary' })

export const ScanSchema = Type.Object({
  id: Type.String(),
  status: ref(ScanStatusSchema),
  targets: Type.Array(ref(TargetSchema)),
  template: Type.String(),
  ports: Type.Optional(Type.String()),
  udp: Type.Optional(Type.Boolean({ description: 'Whether UDP was asked for (absent: no)' })),
  udpPorts: Type.Optional(Type.String({ description: 'The UDP ports asked for instead of the template\'s' })),
  discovery: Type.Optional(Type.Boolean({ description: 'false when host discovery was switched off' })),
  intrusive: Type.Optional(Type.Boolean({ description: 'true when intrusive templates and checks were asked for' })),
  credentials: Type.Optional(Type.Array(Type.String(), { description: 'Ids of the credentials the scan logs in with' })),
  priority: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
  reason: Type.Optional(Type.String({ description: 'Why the scan failed or was cancelled' })),
  progress: ref(ScanProgressSchema),
  summary: Type.Optional(ref(ScanSummarySchema)),
  scheduleId: Type.Optional(Type.String({ description: 'The schedule that started the scan (GET /app/schedule/{id}), when one did' })),
  tags: Type.Optional(Type.Array(Type.String(), { description: 'Tags the scan adds to every host it finds up' })),
  targetTags: Type.Optional(Type.Array(Type.String(), { description: 'Tags whose hosts the scan also covers (looked up when it was planned)' }))
}, { $id: 'Scan' })

export const PageScanSchema = pageOf(ScanSchema, 'PageScan')

export const ScanListQuerySchema = Type.Object({
  status: Type.Optional(StringEnum([...SCAN_STATUSES], { description: 'Only scans in this state' })),
  ...ListQueryProperties
}, { additionalProperties: false })

export const ScanIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' })
})
