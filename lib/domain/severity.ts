// How bad a finding is: the qualitative ratings of CVSS as the NVD gives them, and `unknown` for a finding whose
// CVE has no score yet. The order they rank in is SEVERITY_RANK in lib/vocabulary.ts.

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'none'

/** A finding's severity: `unknown` when the CVE has no CVSS score yet. */
export type FindingSeverity = Severity | 'unknown'

/** A count of findings per severity (lib/finding-counts.ts counts them). */
export type SeverityTally = Record<FindingSeverity, number>

/** A template's own severity (Nuclei's words, `info` among them). */
export type TemplateSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info' | 'unknown'
