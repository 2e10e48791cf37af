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
