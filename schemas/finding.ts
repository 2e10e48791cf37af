import { Type } from '@sinclair/typebox'
import { CursorProperty, OFFSET_MAX, pageOf, ref, StringEnum } from './common'
import { ScanIdProperty } from './scan-diff'
import { tagFilter } from './tags'
import { DEFAULT_FINDING_SORT, FINDING_SORTS, FINDING_SOURCES, FINDING_STATUSES, KEV_CATALOGUES } from '../lib/vocabulary'
import { CVE_DESCRIBERS } from '../lib/sources/registry'

const nullable = <T extends ReturnType<typeof Type.String>> (s: T, description: string) => Type.Union([s, Type.Null()], { description })
const SEVERITIES: ['critical', 'high', 'medium', 'low', 'none', 'unknown'] = ['critical', 'high', 'medium', 'low', 'none', 'unknown']
const STATUSES = [...FINDING_STATUSES]
const SOURCES = [...FINDING_SOURCES]
const CVE_PATTERN = '^[Cc][Vv][Ee]-[0-9]{4}-[0-9]{4,}$'
/** A CVE id, or the `VULNSCAN-…` id of one of vulnscan's own exposure checks. */
const FINDING_ID_PATTERN = '^([Cc][Vv][Ee]-[0-9]{4}-[0-9]{4,}|[Vv][Uu][Ll][Nn][Ss][Cc][Aa][Nn](-[A-Za-z0-9]+)+)$'

export const KevSchema = Type.Object({
  dateAdded: Type.String({ description: 'When CISA added the CVE to its Known Exploited Vulnerabilities catalog' }),
  dueDate: Type.Optional(Type.String()),
  requiredAction: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  ransomware: Type.Optional(Type.Boolean({ description: 'CISA knows of its use in ransomware campaigns (from the KEV catalog)' }))
}, { $id: 'Kev', description: 'CISA Known Exploited Vulnerabilities entry' })

export const EpssSchema = Type.Object({
  score: Type.Number({ minimum: 0, maximum: 1, description: 'Probability of exploitation activity in the next 30 days' }),
  percentile: Type.Number({ minimum: 0, maximum: 1, description: 'Share of scored CVEs with a lower or equal score' }),
  date: Type.String({ description: 'The day FIRST scored it' })
}, { $id: 'Epss', description: 'FIRST Exploit Prediction Scoring System score' })

export const DistributionEvidenceSchema = Type.Object({
  family: Type.String({ description: 'Distribution family the banner shows, e.g. debian or ubuntu' }),
  release: nullable(Type.String(), 'Release codename, e.g. bookworm, when the banner shows it'),
  sourcePackage: nullable(Type.String(), 'The distribution source package of the product, e.g. openssh'),
  packageVersion: nullable(Type.String(), 'The package version the banner shows, e.g. 1:9.2p1-2+deb12u3'),
  fixedVersion: nullable(Type.String(), 'The version the tracker names as fixed in that release (0: never affected)'),
  trackerStatus: nullable(Type.String(), 'The tracker status for the release: resolved, open, undetermined, not-affected'),
  urgency: nullable(Type.String(), 'The tracker urgency or priority')
}, { $id: 'DistributionEvidence', description: 'The distribution package the banner shows and what its security tracker says of this CVE' })

export const PackageEvidenceSchema = Type.Object({
  name: Type.String({ description: 'The binary package named for the finding: the one named after its source package, else the first' }),
  source: Type.String({ description: 'The source package: one finding per source package and CVE per host' }),
  installed: Type.String({ description: 'The installed version that decided it (the running kernel\'s, for the kernel)' }),
  fixed: Type.String({ description: 'The version the tracker names as fixed, or `no fix yet`' }),
  binaries: Type.Array(Type.String(), { description: 'Every installed binary package built from the source package' }),
  tracker: Type.String({ description: 'The tracker that decided it, e.g. Debian security tracker' }),
  trackerDate: Type.Union([Type.String(), Type.Null()], { description: 'When that tracker data was imported' })
}, { $id: 'PackageEvidence', description: 'The installed package a credentialed scan read, and what the distribution\'s tracker says of this CVE' })

export const FindingSchema = Type.Object({
  id: Type.String({ description: 'Stable id from address, port, protocol and CVE: the same finding in every scan (a UDP service and a TCP one on the same port number are two findings)' }),
  address: Type.String(),
  port: Type.Integer({ minimum: 0, maximum: 65535, description: 'The port of the service; 0 for a finding about the host itself (a credentialed scan\'s package findings, as Nessus and Greenbone report local checks)' }),
  protocol: StringEnum(['tcp', 'udp'], { description: 'The transport of the port: tcp, or udp for a service found by a UDP scan' }),
  cveId: Type.String({ description: 'The CVE id, or for a finding of vulnscan\'s own exposure checks (source `vulnscan`) the check\'s id, e.g. `VULNSCAN-REDIS-NOAUTH`', examples: ['CVE-2023-28531', 'VULNSCAN-REDIS-NOAUTH'] }),
  severity: StringEnum(SEVERITIES, { description: '`unknown` when the CVE has no CVSS score yet; for an exposure check, the severity the check sets (its reason is in `reason`)' }),
  cvss: Type.Union([Type.Number({ minimum: 0, maximum: 10 }), Type.Null()], { description: 'Base score; null when none exists (never 0 for missing)' }),
  cvssVersion: nullable(Type.String(), 'CVSS version of the score'),
  cvssVector: nullable(Type.String(), 'CVSS vector of the score'),
  kev: Type.Union([ref(KevSchema), Type.Null()], { description: 'Known exploited (CISA KEV); null when not listed' }),
  kevCatalogues: Type.Array(StringEnum([...KEV_CATALOGUES]), { description: 'The catalogues of known exploited vulnerabilities that list the CVE: cisa (CISA\'s KEV, whenever `kev` is set), eu (ENISA\'s EU KEV, from the EUVD\'s exploited dump); empty when none does' }),
  euvdId: Type.Union([Type.String({ pattern: '^EUVD-[0-9]{4}-[0-9]+$' }), Type.Null()], { description: 'The CVE\'s id in ENISA\'s EU Vulnerability Database (EUVD), e.g. EUVD-2025-4893; null when it has none or the EUVD was never imported', examples: ['EUVD-2021-29270'] }),
  epss: Type.Union([ref(EpssSchema), Type.Null()], { description: 'FIRST EPSS score; null when not scored or not imported' }),
  description: Type.String(),
  product: Type.String(),
  version: nullable(Type.String(), 'Version the scan identified; null when the product showed none'),
  matchedCpe: Type.String({ description: 'The CPE 2.3 name the scan derived from the service' }),
  criterion: Type.String({ description: 'The NVD criterion that matched, with its version bounds' }),
  reason: Type.String({ description: 'Why it matched, e.g. `2.0.11 < 2.0.16 (versionEndExcluding)`' }),
  source: StringEnum(SOURCES, { description: 'The data that decided the status: nvd (an NVD configuration), cna (the CVE record of the CNA), adp (CISA Vulnrichment), distribution (the distribution security tracker), vulnscan (one of vulnscan\'s own exposure checks: `GET /vulnerability/check` lists them)' }),
  rule: Type.String({ description: 'The exact rule of that source that decided it' }),
  observed: StringEnum(['open', 'fixed_by_distribution', 'potential'], { description: 'What the last scan concluded, whatever a user decided since' }),
  distribution: Type.Union([ref(DistributionEvidenceSchema), Type.Null()], { description: 'The distribution package and tracker entry; null when the banner shows no distribution' }),
  confidence: StringEnum(['high', 'medium', 'low'], { description: 'The label of confidenceScore: high from 80, medium from 50, low below (high: exact upstream version under an NVD rule, or a tracker that decides the running revision; medium: a CNA-only range, a distribution family without revision, or a required platform; low: product without version)' }),
  confidenceScore: Type.Integer({ minimum: 0, maximum: 100, description: 'How sure, 0–100, from the kind of evidence that decided it (docs/accuracy.md has the table): package data 97, exposure check 95, banner with the package revision 90, template match 85, full upstream banner 80, CISA ADP CPE 75, CNA range 70, required platform 60, release out of support 55, distribution family only 50, version a supported release patched 40, version prefix 30, defaultStatus 25, product only 20' }),
  confidenceNote: nullable(Type.String(), 'What qualifies the confidence, e.g. a possible backport or a required platform'),
  evidence: Type.String({ description: 'The banner or reply that shows the product and version' }),
  requiresPlatform: Type.Array(Type.String(), { description: 'Platform CPEs the NVD configuration also requires (not visible to a scan)' }),
  remediation: Type.Optional(Type.String({ description: 'What to do about it, one line (exposure checks set it; absent on CVE findings)' })),
  package: Type.Optional(ref(PackageEvidenceSchema)),
  status: StringEnum(STATUSES, { description: 'open; fixed (not seen when its host and port were re-scanned); reopened (seen again after fixed); accepted or false_positive (a user decision that later scans keep); fixed_by_distribution (the running package revision carries the fix); potential (the product showed no version: check the installed version). Only open and reopened count in totals and CI gates' }),
  firstSeen: Type.String({ format: 'date-time' }),
  lastSeen: Type.String({ format: 'date-time' }),
  lastScanId: Type.String(),
  fixedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it was last marked fixed' }),
  comment: nullable(Type.String(), 'The comment given with the last decision'),
  decidedBy: nullable(Type.String(), 'API key id of the last decision'),
  decidedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the last decision was made' })
}, { $id: 'Finding', description: 'One CVE on one host and port (port 0: on the host itself, from its package list)' })

export const PageFindingSchema = pageOf(FindingSchema, 'PageFinding', { cursor: true })

export const FindingDecisionSchema = Type.Object({
  status: StringEnum(['accepted', 'false_positive', 'open'], { description: 'accepted: a known risk; false_positive: not really affected; open: withdraw an earlier decision' }),
  comment: Type.Optional(Type.String({ maxLength: 2000, description: 'Why; kept with the finding' }))
}, { $id: 'FindingDecision', additionalProperties: false, examples: [{ status: 'accepted', comment: 'Internal only; upgrade planned for Q3' }] })

const findingFilterProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Page size (default 50; for CSV, every matching row when absent)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: OFFSET_MAX, default: 0, description: 'Items to skip' })),
  severity: Type.Optional(StringEnum(SEVERITIES, { description: 'Only findings of this severity' })),
  minCvss: Type.Optional(Type.Number({ minimum: 0, maximum: 10, description: 'Only findings with a CVSS score at least this (findings without a score are left out)' })),
  minEpss: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Only findings with an EPSS score at least this (findings without one are left out)' })),
  kev: Type.Optional(Type.Union([Type.Boolean(), StringEnum([...KEV_CATALOGUES])], { description: 'true: only CVEs a catalogue of known exploited vulnerabilities lists (CISA\'s KEV or ENISA\'s EU KEV); false: only the others; cisa or eu: only those that catalogue lists' })),
  cveId: Type.Optional(Type.String({ pattern: FINDING_ID_PATTERN, maxLength: 64, description: 'Only findings of this CVE, or of this exposure check (`VULNSCAN-…`)' })),
  status: Type.Optional(StringEnum(STATUSES, { description: 'Only findings in this status; without it, fixed_by_distribution and potential findings are left out' })),
  confidence: Type.Optional(StringEnum(['high', 'medium', 'low'], { description: 'Only findings of this confidence' })),
  source: Type.Optional(StringEnum(SOURCES, { description: 'Only findings decided by this source; `distribution`: the package findings of credentialed scans (port 0, rule `package`) and the banner findings a tracker decided' })),
  minConfidence: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Only findings whose confidenceScore is at least this (70 leaves out what --fail-on leaves out by default)' })),
  sort: Type.Optional(StringEnum([...FINDING_SORTS], { default: DEFAULT_FINDING_SORT, description: 'Sort key. cvss: findings without a CVSS score (exposure checks among them) sort below every scored one. severity: severity first (an exposure finding in its own rank), then known exploited (CISA\'s KEV with ransomware use first, then CISA\'s KEV or the EU KEV), EPSS and CVSS; the CLI and the reports use it. risk: known exploited as in severity, then EPSS, then CVSS' })),
  order: Type.Optional(StringEnum(['asc', 'desc'], { default: 'desc', description: 'Sort direction' }))
}

export const FindingListQuerySchema = Type.Object({
  ...findingFilterProperties,
  host: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only findings on this IP address' })),
  scanId: Type.Optional(Type.String({ ...ScanIdProperty, description: 'Only the findings this scan observed on the hosts and ports it covered (404 for an unknown scan), with their status now: one a later scan fixed shows `fixed`. E.g. `scan-1`' })),
  tag: tagFilter('Only findings on hosts carrying this tag'),
  cursor: CursorProperty
}, { additionalProperties: false })

export const HostFindingQuerySchema = Type.Object(findingFilterProperties, { additionalProperties: false })

export const FindingReportQuerySchema = Type.Object({
  format: Type.Optional(StringEnum(['cyclonedx', 'openvex'], { description: 'cyclonedx (CycloneDX 1.6 JSON) or openvex (OpenVEX 0.2); wins over the Accept header, which chooses without it (CycloneDX when it allows anything)' })),
  ...findingFilterProperties,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: 'At most this many findings (default: every matching one)' })),
  host: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only findings on this IP address' })),
  scanId: Type.Optional(Type.String({ ...ScanIdProperty, description: 'Only the findings this scan observed (404 for an unknown scan), with their status now' })),
  tag: tagFilter('Only findings on hosts carrying this tag')
}, { additionalProperties: false })

export const HostReportQuerySchema = Type.Object({
  format: Type.Optional(StringEnum(['cyclonedx', 'openvex'], { description: 'cyclonedx (CycloneDX 1.6 JSON) or openvex (OpenVEX 0.2); wins over the Accept header, which chooses without it (CycloneDX when it allows anything)' })),
  ...findingFilterProperties,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, description: 'At most this many findings (default: every matching one)' }))
}, { additionalProperties: false })

export const FindingIdParamsSchema = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{24}$', description: 'Finding id' })
})

export const CveIdParamsSchema = Type.Object({
  cveId: Type.String({ pattern: CVE_PATTERN, maxLength: 32, description: 'CVE id, e.g. CVE-2023-28531', examples: ['CVE-2023-28531'] })
})

const CvssMetricSchema = Type.Object({
  version: StringEnum(['4.0', '3.1', '3.0', '2.0']),
  score: Type.Number({ minimum: 0, maximum: 10 }),
  severity: StringEnum(['critical', 'high', 'medium', 'low', 'none']),
  vector: Type.String(),
  source: Type.String(),
  type: StringEnum(['Primary', 'Secondary'])
})

const ReferenceSchema = Type.Object({
  url: Type.String(),
  source: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String()))
})

export const CveDetailSchema = Type.Object({
  id: Type.String(),
  published: Type.String(),
  lastModified: Type.String(),
  vulnStatus: Type.String({ description: 'NVD analysis status, e.g. Analyzed, Modified, Deferred' }),
  description: Type.String(),
  cvss: Type.Union([Type.Number({ minimum: 0, maximum: 10 }), Type.Null()], { description: 'The chosen score (NVD Primary first, newest CVSS version first); null when none exists' }),
  cvssVersion: Type.Union([StringEnum(['4.0', '3.1', '3.0', '2.0']), Type.Null()]),
  cvssVector: nullable(Type.String(), 'Vector of the chosen score'),
  severity: Type.Union([StringEnum(['critical', 'high', 'medium', 'low', 'none']), Type.Null()]),
  metrics: Type.Array(CvssMetricSchema, { description: 'Every CVSS metric NVD holds for the CVE' }),
  cwes: Type.Array(Type.String()),
  references: Type.Array(ReferenceSchema),
  kev: Type.Union([ref(KevSchema), Type.Null()]),
  affectedHosts: Type.Array(Type.String(), { description: 'Addresses with a standing finding of this CVE (neither fixed nor false positive)' }),
  recordSource: StringEnum(CVE_DESCRIBERS.map((d) => d.label), { description: CVE_DESCRIBERS.map((d) => `${d.label}: ${d.description}`).join('; ') })
}, { $id: 'CveDetail', description: 'A CVE from the local NVD index, or from its CVE record where the NVD index lacks it, and the hosts it affects' })
