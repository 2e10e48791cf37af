import { Type, type TSchema } from '@sinclair/typebox'
import { CursorProperty, ListQueryProperties, pageOf, ref, StringEnum } from './common'
import { ScanIdProperty } from './scan-diff'
import { tagFilter, TagSchema } from './tags'

export const TlsInfoSchema = Type.Object({
  protocol: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  issuer: Type.Optional(Type.String()),
  notBefore: Type.Optional(Type.String()),
  notAfter: Type.Optional(Type.String()),
  selfSigned: Type.Optional(Type.Boolean())
}, { $id: 'TlsInfo' })

/** What a port shows in host lists; GET /host/{address} adds the details. */
const HostPortBrief = {
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: StringEnum(['tcp', 'udp'], { description: 'tcp, or udp when the scan covered UDP' }),
  state: Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('filtered'), Type.Literal('open|filtered')], { description: 'open|filtered: a UDP port that neither answered nor was refused' }),
  service: Type.Optional(Type.String()),
  product: Type.Optional(Type.String()),
  version: Type.Optional(Type.String())
}

export const HostPortSchema = Type.Object({
  ...HostPortBrief,
  extraInfo: Type.Optional(Type.String()),
  distro: Type.Optional(Type.String()),
  cpe: Type.Optional(Type.Array(Type.String())),
  banner: Type.Optional(Type.String()),
  tls: Type.Optional(ref(TlsInfoSchema))
}, { $id: 'HostPort' })

const PORTS_DESCRIPTION = 'Open and filtered ports, by number (TCP before UDP on one number); a port a later scan found closed is removed'

const MAX_SEVERITY_DESCRIPTION = 'Severity of the most severe standing finding (critical, high, medium, low, none or unknown); null without one'

/** A host's fields, with its ports as `port` shows them. */
function hostProperties (port: TSchema, maxSeverity: TSchema = Type.Union([Type.String(), Type.Null()], { description: MAX_SEVERITY_DESCRIPTION })) {
  return {
    address: Type.String(),
    hostnames: Type.Array(Type.String()),
    up: Type.Boolean(),
    firstSeen: Type.String({ format: 'date-time' }),
    lastSeen: Type.String({ format: 'date-time' }),
    lastScanId: Type.String(),
    rttMs: Type.Optional(Type.Number()),
    ports: Type.Array(port, { description: PORTS_DESCRIPTION }),
    findingsCount: Type.Integer({ minimum: 0, description: 'Findings that stand: neither fixed nor marked false positive' }),
    maxSeverity,
    tags: Type.Array(ref(TagSchema), { description: 'The host\'s tags, in code-unit order: set with PUT /host/{address}/tags, added to by scans that name `tags` (a scan never removes one)', examples: [['prod', 'team:web']] })
  }
}

export const HostSchema = Type.Object(hostProperties(ref(HostPortSchema)), { $id: 'Host' })

/** A host as lists show it: the response schema is the allow-list, so banners, CPE names and TLS facts stay out. */
// A page of fifty hosts is serialised on every request: plain enums and type lists here, where the anyOf
// of a union would make the serialiser validate each value to pick a branch.
export const HostPortBriefSchema = Type.Object({
  ...HostPortBrief,
  state: StringEnum(['open', 'closed', 'filtered', 'open|filtered'])
}, { $id: 'HostPortBrief' })

export const HostBriefSchema = Type.Object(hostProperties(
  ref(HostPortBriefSchema),
  Type.Unsafe<string | null>({ type: ['string', 'null'], description: MAX_SEVERITY_DESCRIPTION })
), { $id: 'HostBrief' })

export const PageHostSchema = pageOf(HostBriefSchema, 'PageHost', { cursor: true })

export const HostListQuerySchema = Type.Object({
  ...ListQueryProperties,
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Text in the address or in a hostname (case-insensitive)' })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Only hosts with this TCP port open' })),
  service: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only hosts with an open port running this service, e.g. `ssh` (case-insensitive)' })),
  product: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only hosts with an open port running this product, e.g. `OpenSSH` (case-insensitive)' })),
  minSeverity: Type.Optional(StringEnum(['none', 'low', 'medium', 'high', 'critical'], { description: 'Only hosts whose most severe standing finding is at least this severe' })),
  hasFindings: Type.Optional(Type.Boolean({ description: 'true: only hosts with standing findings (neither fixed nor false positive); false: only hosts without' })),
  scanId: Type.Optional(Type.String({ ...ScanIdProperty, description: 'Only the hosts this scan saw, up or down (404 for an unknown scan). The records are the hosts as they stand now, e.g. `scan-1`' })),
  tag: tagFilter('Only hosts carrying this tag'),
  sort: Type.Optional(StringEnum(['lastSeen', 'address', 'findings', 'severity'], { default: 'lastSeen', description: 'Sort key; addresses sort numerically, IPv4 before IPv6' })),
  order: Type.Optional(StringEnum(['asc', 'desc'], { description: 'Default: ascending for address, descending for the others' })),
  cursor: CursorProperty
}, { additionalProperties: false })

export const HostAddressParamsSchema = Type.Object({
  address: Type.String({ minLength: 1, maxLength: 64, description: 'An IPv4 or IPv6 address', examples: ['127.0.0.1'] })
})
