import { Type } from '@sinclair/typebox'
import { ListQueryProperties, pageOf, ref, StringEnum } from './common'
import { GROUPINGS, TRACKER_KINDS } from '../lib/integrations/types'

export const IntegrationFilterSchema = Type.Object({
  minSeverity: Type.Optional(StringEnum(['critical', 'high', 'medium', 'low', 'none'], { description: 'Only findings of this severity or worse' })),
  minEpss: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Risk: only findings whose EPSS score is at least this (findings without one are left out)' })),
  kevOnly: Type.Optional(Type.Boolean({ description: 'Only findings on CISA\'s Known Exploited Vulnerabilities list' })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' }), { maxItems: 20, uniqueItems: true, description: 'Only findings on hosts carrying one of these tags' }))
}, { $id: 'IntegrationFilter', additionalProperties: false, description: 'Which findings get tickets' })

const KindProperty = StringEnum([...TRACKER_KINDS], { description: '`github` (GitHub Issues, REST), `gitlab` (GitLab Issues, REST v4), `jira-cloud` (REST v3, Atlassian Document Format), `jira-dc` (Jira Data Center / Server, REST v2, wiki markup)' })
const GroupingProperty = StringEnum([...GROUPINGS], { description: 'One ticket per finding, per host, or per CVE' })
const UrlProperty = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'The tracker\'s API base: https://api.github.com (or https://<host>/api/v3), https://gitlab.example.com, https://<site>.atlassian.net or the Jira Data Center base URL. ' +
    'http or https; private and special addresses are refused unless WEBHOOK_ALLOW names them'
})
const ProjectProperty = Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$', description: '`github`: owner/repo; `gitlab`: the project id or full path (group/project); jira: the project key' })
const TokenProperty = Type.String({ minLength: 1, maxLength: 4096, description: 'The API token (GitHub, GitLab: a personal or project access token; Jira Cloud: an API token with `username`; Jira Data Center: a personal access token). Write-only: encrypted at rest, never returned, never logged' })
const NameProperty = Type.String({ minLength: 1, maxLength: 100 })
const DescriptionProperty = Type.String({ maxLength: 200 })
const UsernameProperty = Type.String({ minLength: 1, maxLength: 254, description: '`jira-cloud`: the account\'s e-mail address the token belongs to' })
const IssueTypeProperty = Type.String({ minLength: 1, maxLength: 64, description: 'jira: the issue type tickets are created as (default Bug)' })

export const IntegrationCreateSchema = Type.Object({
  name: NameProperty,
  kind: KindProperty,
  url: UrlProperty,
  project: ProjectProperty,
  token: TokenProperty,
  username: Type.Optional(UsernameProperty),
  issueType: Type.Optional(IssueTypeProperty),
  filter: Type.Optional(ref(IntegrationFilterSchema)),
  grouping: Type.Optional({ ...GroupingProperty, default: 'finding' }),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  description: Type.Optional(DescriptionProperty)
}, {
  $id: 'IntegrationCreate',
  additionalProperties: false,
  examples: [{ name: 'security repo', kind: 'github', url: 'https://api.github.com', project: 'example/security', token: 'github_pat_…', filter: { minSeverity: 'high' }, grouping: 'host' }]
})

export const IntegrationPatchSchema = Type.Object({
  name: Type.Optional(NameProperty),
  url: Type.Optional(UrlProperty),
  project: Type.Optional(ProjectProperty),
  token: Type.Optional(TokenProperty),
  username: Type.Optional(UsernameProperty),
  issueType: Type.Optional(IssueTypeProperty),
  filter: Type.Optional(ref(IntegrationFilterSchema)),
  enabled: Type.Optional(Type.Boolean()),
  description: Type.Optional(DescriptionProperty)
}, { $id: 'IntegrationPatch', additionalProperties: false, minProperties: 1, description: 'The fields to change; `filter` is replaced whole; a `token` replaces the stored one. The kind and grouping stay (their tickets are keyed by them)', examples: [{ enabled: false }] })

export const IntegrationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: KindProperty,
  url: Type.String(),
  project: Type.String(),
  username: Type.Optional(Type.String()),
  issueType: Type.Optional(Type.String()),
  filter: ref(IntegrationFilterSchema),
  grouping: GroupingProperty,
  enabled: Type.Boolean(),
  description: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
}, {
  $id: 'Integration',
  description: 'An issue-tracker integration; its token is never shown',
  examples: [{ id: '5f0c3a1e-8d2b-4c7e-9a61-2b3c4d5e6f70', name: 'security repo', kind: 'github', url: 'https://api.github.com', project: 'example/security', filter: { minSeverity: 'high' }, grouping: 'host', enabled: true, description: '', createdAt: '2026-01-05T09:00:00.000Z', updatedAt: '2026-01-05T09:00:00.000Z' }]
})

export const PageIntegrationSchema = pageOf(IntegrationSchema, 'PageIntegration')

export const IntegrationDeliverySchema = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time', description: 'When the request was sent' }),
  action: Type.String({ description: 'What the sync was doing: create, update, reopen, close, find' }),
  key: Type.String({ description: 'The ticket\'s stable key (the label it carries on the tracker)' }),
  ref: Type.Union([Type.String(), Type.Null()], { description: 'The tracker\'s ticket (issue number or key); null before it exists' }),
  method: Type.String(),
  path: Type.String({ description: 'The request\'s path on the tracker, without its query' }),
  attempt: Type.Integer({ minimum: 1 }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The tracker\'s HTTP status; null when none came' }),
  error: Type.Union([Type.String(), Type.Null()]),
  ok: Type.Boolean(),
  willRetry: Type.Boolean({ description: 'The request is tried again (after Retry-After or a doubling wait)' })
}, { $id: 'IntegrationDelivery', description: 'One request sent to the tracker' })

export const PageIntegrationDeliverySchema = pageOf(IntegrationDeliverySchema, 'PageIntegrationDelivery')

export const IntegrationSyncAckSchema = Type.Object({
  status: Type.Literal('queued'),
  request: Type.String({ description: 'The sync request\'s id' })
}, { $id: 'IntegrationSyncAck', description: 'A sync queued: its requests appear in the deliveries as they are sent' })

export const IntegrationListQuerySchema = Type.Object({ ...ListQueryProperties }, { additionalProperties: false })
export const IntegrationDeliveriesQuerySchema = Type.Object({
  ...ListQueryProperties,
  failed: Type.Optional(Type.Boolean({ description: 'Only the failed requests' }))
}, { additionalProperties: false })
export const IntegrationIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' })
})
