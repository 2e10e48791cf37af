// A finding: what a scan concluded of one CVE (or one exposure check) on one host and port, as the worker produces
// it (NewFinding) and as the results store keeps it across scans (FindingRecord), with the evidence it carries.
import type { Confidence } from './confidence'
import type { Transport } from './hosts'
import type { FindingSeverity } from './severity'
import type { FindingSource, FindingStatus, KevCatalogue } from '../vocabulary'

/** CISA's Known Exploited Vulnerabilities entry of a CVE. */
export interface Kev {
  dateAdded: string
  dueDate?: string
  requiredAction?: string
  name?: string
  /** CISA's knownRansomwareCampaignUse is "Known" (from the KEV catalog; the NVD record does not say). */
  ransomware?: boolean
}

/** What a scan concluded for one CVE on one port; the store keeps a user's decision over it. */
export type ObservedStatus = 'open' | 'fixed_by_distribution' | 'potential'

/** FIRST's EPSS: the probability of exploitation in the next 30 days, its percentile, and the day it was scored. */
export interface Epss {
  score: number
  percentile: number
  date: string
}

/** What the banner showed of the distribution package, and what the distribution's tracker says of this CVE. */
export interface DistributionEvidence {
  family: string
  release: string | null
  sourcePackage: string | null
  /** The full package version the wire shows (epoch:upstream-revision), when it shows the revision. */
  packageVersion: string | null
  /** The version the tracker names as fixed in that release ('0' when the release was never affected). */
  fixedVersion: string | null
  /** The tracker's status for the release: resolved, open, undetermined, not-affected… */
  trackerStatus: string | null
  urgency: string | null
}

/** What a credentialed scan read of the package a finding is about (package findings only). */
export interface PackageEvidence {
  /** The binary package named for the finding: the one named after its source package, else the first. */
  name: string
  /** The source package: findings are one per source package and CVE. */
  source: string
  /** The installed version that decided it (the source's lowest among its binaries; the running kernel's for the kernel). */
  installed: string
  /** The tracker's fixed version, or `no fix yet`. */
  fixed: string
  /** Every installed binary package built from the source. */
  binaries: string[]
  tracker: string
  /** When the tracker data was imported; null when unknown. */
  trackerDate: string | null
}

/** A finding as the worker produces it for one host and port. */
export interface NewFinding {
  address: string
  port: number
  /** The transport of the port: a UDP service and a TCP one on the same number are different findings. Absent: tcp. */
  protocol?: Transport
  cveId: string
  severity: FindingSeverity
  cvss: number | null
  cvssVersion: string | null
  cvssVector: string | null
  kev: Kev | null
  epss: Epss | null
  /**
   * The catalogues of known exploited vulnerabilities that list the CVE: `cisa` whenever `kev` holds CISA's entry,
   * `eu` when ENISA's EU KEV lists it (the EUVD's exploited dump). Absent: from `kev` alone.
   */
  kevCatalogues?: KevCatalogue[]
  /** The CVE's id in ENISA's EU Vulnerability Database, e.g. EUVD-2025-4893; absent or null when it has none (or the EUVD was never imported). */
  euvdId?: string | null
  description: string
  product: string
  version: string | null
  /** The CPE the scan derived from the banner. */
  matchedCpe: string
  /** The NVD criterion that matched, with its bounds, e.g. `cpe:2.3:a:eclipse:mosquitto:*:… < 2.0.16`. */
  criterion: string
  /** Why it matched, e.g. "2.0.11 < 2.0.16 (versionEndExcluding)". */
  reason: string
  /** The data that decided the finding's status. */
  source: FindingSource
  /** The exact rule of that source, e.g. `nvd: cpe:…:openssh:*… < 9.6 matched 9.2p1` or the tracker's fixed version. */
  rule: string
  /** What the scan concluded: open, fixed_by_distribution or potential. */
  observed: ObservedStatus
  distribution: DistributionEvidence | null
  confidence: Confidence
  /**
   * How sure, 0–100, from the kind of evidence (./confidence.ts has the table); the label above is derived
   * from it. A producer that leaves it out gets the score its source, rule and label stand for.
   */
  confidenceScore?: number
  /** Said to the user with the confidence, e.g. the distro backport caveat or a required platform. */
  confidenceNote: string | null
  /** The banner or reply that shows the product and version (bounded). */
  evidence: string
  requiresPlatform: string[]
  /** What to do about it, one line; set by exposure checks (source `vulnscan`), absent on CVE findings for now. */
  remediation?: string
  /** The installed package, on findings of a credentialed scan's package list (port 0, rule `package`). */
  package?: PackageEvidence
}

export interface FindingRecord extends NewFinding {
  confidenceScore: number
  kevCatalogues: KevCatalogue[]
  euvdId: string | null
  /** Stable id from address, port (and its protocol, for UDP) and CVE: the same finding in every scan. */
  id: string
  protocol: Transport
  firstSeen: string
  lastSeen: string
  lastScanId: string
  status: FindingStatus
  /** When the finding was last marked fixed (not seen again on a re-scan of its host and port). */
  fixedAt: string | null
  comment: string | null
  decidedBy: string | null
  decidedAt: string | null
}
