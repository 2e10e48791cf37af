// The words the API, the CLI and the code share, each written once: the schemas, the CLI's help and the
// queue read them from here, and test/vocabulary.test.ts holds the three together.

/** Scan priority: 5 is the most urgent, 1 the least. */
export const PRIORITY_MIN = 1
export const PRIORITY_MAX = 5
export const DEFAULT_PRIORITY = 3

/** Where a scan stands: queued → running → completed | failed | cancelled. */
export const SCAN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const
export type ScanStatus = typeof SCAN_STATUSES[number]

/** Scan templates (lib/scanner/templates.ts says what each does). */
export const TEMPLATE_NAMES = ['quick', 'standard', 'full', 'discovery'] as const
export type TemplateName = typeof TEMPLATE_NAMES[number]
export const DEFAULT_TEMPLATE: TemplateName = 'quick'

/**
 * Where a finding stands. open, fixed, reopened: what scans saw; accepted, false_positive: a user's decision;
 * fixed_by_distribution: the running package revision carries the fix; potential: the product showed no version.
 */
export const FINDING_STATUSES = ['open', 'fixed', 'reopened', 'accepted', 'false_positive', 'fixed_by_distribution', 'potential'] as const
export type FindingStatus = typeof FINDING_STATUSES[number]
/** The statuses a CI gate (--fail-on) and a scan's severity totals count: what is open now. */
export const GATE_STATUSES: readonly FindingStatus[] = ['open', 'reopened']

/**
 * The data that decided a finding: an NVD configuration, the CNA's or CISA's ADP affected data, a distribution tracker,
 * or one of vulnscan's own exposure checks (lib/scanner/checks/catalogue.ts: a service that lets anyone in, a weak
 * transport), whose findings carry the check's `VULNSCAN-…` id where CVE findings carry a CVE id.
 */
export const FINDING_SOURCES = ['nvd', 'cna', 'adp', 'distribution', 'vulnscan', 'template'] as const
export type FindingSource = typeof FINDING_SOURCES[number]

/** The catalogues of known exploited vulnerabilities a finding can be listed in: CISA's KEV, ENISA's EU KEV. */
export const KEV_CATALOGUES = ['cisa', 'eu'] as const
export type KevCatalogue = typeof KEV_CATALOGUES[number]
/** The finding filter `kev`: true, listed by any catalogue; false, by none; a catalogue's name, by that one. */
export type KevFilter = boolean | KevCatalogue

/** Finding list orders; risk is KEV (known ransomware use first), then EPSS, then CVSS. */
export const FINDING_SORTS = ['cvss', 'severity', 'risk', 'lastSeen', 'firstSeen'] as const
export type FindingSort = typeof FINDING_SORTS[number]
export const DEFAULT_FINDING_SORT: FindingSort = 'cvss'
/** The order the CLI and the reports list findings in: the most severe first, exposure findings in their rank. */
export const CLI_FINDING_SORT: FindingSort = 'severity'

/** What a webhook can be told: a scan ended (one event per terminal state), or a scan found findings not seen before. */
export const WEBHOOK_EVENTS = ['scan.completed', 'scan.failed', 'scan.cancelled', 'finding.new'] as const
export type WebhookEvent = typeof WEBHOOK_EVENTS[number]
/** The event a test delivery (POST /admin/webhook/{id}/test) carries. */
export const WEBHOOK_TEST_EVENT = 'webhook.test'

/** How a webhook's body is written: our JSON event, or a Slack-compatible message (`{"text": …}`). */
export const WEBHOOK_FORMATS = ['json', 'slack'] as const
export type WebhookFormat = typeof WEBHOOK_FORMATS[number]

/** Order of severities for max severity and `minSeverity`; `unknown` (no CVSS) sits between none and low. */
export const SEVERITY_RANK: Record<string, number> = { none: 0, unknown: 1, low: 2, medium: 3, high: 4, critical: 5 }

/** The order each sort takes when the request names none. */
export const HOST_SORT_DEFAULT_ORDER = { lastSeen: 'desc', address: 'asc', findings: 'desc', severity: 'desc' } as const
export const FINDING_SORT_DEFAULT_ORDER = { cvss: 'desc', severity: 'desc', lastSeen: 'desc', firstSeen: 'desc', risk: 'desc' } as const
