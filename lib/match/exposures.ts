// Findings of vulnscan's own exposure checks, shaped like CVE findings so that they share the results store's
// lifecycle (new, fixed, reopened), filters, decisions and CSV: the check's `VULNSCAN-…` id stands where a CVE
// id stands, the severity is the check's own (no CVSS), `reason` says why that severity, `rule` what was checked,
// `evidence` what the server answered, and `remediation` what to do about it.
import { checkById } from '../scanner/checks/catalogue'
import type { PortExposure, ServiceInfo } from '../scanner/types'
import { confidenceFor } from './confidence'
import type { Verdict } from './service'

/** The finding of one proved exposure on a port whose service detection named `service`. */
export function exposureVerdict (exposure: PortExposure, service: ServiceInfo | undefined): Verdict {
  const def = checkById(exposure.check)
  return {
    cveId: def.id,
    severity: def.severity,
    cvss: null,
    cvssVersion: null,
    cvssVector: null,
    kev: null,
    epss: null,
    description: def.title,
    product: service?.product ?? service?.service ?? 'unknown',
    version: service?.version ?? null,
    matchedCpe: service?.cpe[0] ?? '',
    criterion: def.evidence,
    reason: def.severityReason,
    source: 'vulnscan',
    rule: `vulnscan: ${def.id}: ${def.evidence}`,
    // Seen on the wire, not inferred from a version: an open finding of high confidence.
    observed: 'open',
    distribution: null,
    ...confidenceFor('exposure'),
    confidenceNote: def.reads ? 'Proved by a read-only exchange that logs in or reads data (names or statistics only).' : null,
    evidence: exposure.evidence,
    requiresPlatform: [],
    remediation: def.remediation
  }
}
