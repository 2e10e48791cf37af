// Issue-tracker integrations: what is kept about each (its tracker, where, its sealed token, which findings and how
// grouped), the local map from a ticket's stable key to the tracker's ticket, and the log of what was sent.
import type { ListOptions, Page } from '../store/types'

export const TRACKER_KINDS = ['github', 'gitlab', 'jira-cloud', 'jira-dc'] as const
export type TrackerKind = typeof TRACKER_KINDS[number]

export const GROUPINGS = ['finding', 'host', 'cve'] as const
export type Grouping = typeof GROUPINGS[number]

/** Which findings an integration keeps tickets for. */
export interface IntegrationFilter {
  minSeverity?: 'critical' | 'high' | 'medium' | 'low' | 'none'
  /** Risk: only findings whose EPSS score is at least this (0–1). */
  minEpss?: number
  kevOnly?: boolean
  /** Only findings on hosts carrying one of these tags. */
  tags?: string[]
}

export interface IntegrationRecord {
  id: string
  name: string
  kind: TrackerKind
  /** The tracker's API base: https://api.github.com, https://gitlab.example.com, https://example.atlassian.net. */
  url: string
  /** github: owner/repo; gitlab: the numeric id or the full path; jira: the project key. */
  project: string
  /** jira-cloud: the account's e-mail (Basic auth with the token); unused elsewhere. */
  username?: string
  /** jira: the issue type tickets are created as (default Bug). */
  issueType?: string
  /** The token sealed under CREDENTIALS_KEY, bound to `integration:<id>`; never leaves the server. */
  sealedToken: string
  filter: IntegrationFilter
  grouping: Grouping
  enabled: boolean
  description: string
  createdAt: string
  updatedAt: string
  createdBy: string
}

export type IntegrationPatch = Partial<Pick<IntegrationRecord, 'name' | 'url' | 'project' | 'username' | 'issueType' | 'sealedToken' | 'filter' | 'enabled' | 'description'>> & { updatedAt: string }

/** What vulnscan last made a ticket say, kept per stable key so that a sync never opens a second ticket. */
export interface TicketRecord {
  /** `vulnscan-<hex>`: the label the ticket carries on the tracker, from the integration and the group. */
  key: string
  /** The group: a finding id, a host address or a CVE id. */
  group: string
  /** The tracker's reference (GitHub/GitLab number, Jira key); null while a create is in flight. */
  ref: string | null
  url: string | null
  /** What vulnscan last set: open, or closed (with why). */
  state: 'open' | 'closed'
  /** Hash of the title and body last sent: an unchanged ticket is not updated. */
  contentHash: string
  /** Why it was closed: fixed, accepted or false_positive. */
  closedAs?: string
  updatedAt: string
}

/** One request to a tracker, as the deliveries list shows it. */
export interface IntegrationDelivery {
  id: string
  integrationId: string
  at: string
  /** create, update, comment, close, reopen, find, transition. */
  action: string
  /** The stable key of the ticket it was about. */
  key: string
  ref: string | null
  method: string
  /** The request's path on the tracker (never its credentials). */
  path: string
  attempt: number
  statusCode: number | null
  error: string | null
  ok: boolean
  willRetry: boolean
}

export const INTEGRATION_DELIVERIES_KEPT = 500

export interface IntegrationStore {
  create(record: IntegrationRecord): Promise<void>
  get(id: string): Promise<IntegrationRecord | null>
  /** Newest first. */
  list(opts: ListOptions): Promise<Page<IntegrationRecord>>
  update(id: string, patch: IntegrationPatch): Promise<IntegrationRecord | null>
  /** With its tickets map and deliveries. */
  delete(id: string): Promise<boolean>

  getTicket(integrationId: string, key: string): Promise<TicketRecord | null>
  putTicket(integrationId: string, ticket: TicketRecord): Promise<void>
  listTickets(integrationId: string): Promise<TicketRecord[]>

  appendDelivery(delivery: IntegrationDelivery): Promise<void>
  /** Newest first; `failed` keeps only failed attempts. */
  listDeliveries(integrationId: string, opts: ListOptions & { failed?: boolean }): Promise<Page<IntegrationDelivery>>

  /** Take the integration's sync lock for `ttlMs`; false when another sync holds it (it is then asked to run again). */
  claimSync(integrationId: string, owner: string, ttlMs: number): Promise<boolean>
  /** Let go of the lock; true when another sync was asked for meanwhile (the holder runs again). */
  releaseSync(integrationId: string, owner: string): Promise<boolean>
}
