import { Type } from '@sinclair/typebox'
import { OFFSET_MAX, ref, StringEnum } from './common'
import { FINDING_STATUSES } from '../lib/vocabulary'

const SEVERITIES: ['critical', 'high', 'medium', 'low', 'none', 'unknown'] = ['critical', 'high', 'medium', 'low', 'none', 'unknown']
const STATUSES = [...FINDING_STATUSES]

const ADDRESS = Type.String({ description: 'The host\'s IP address' })
const PORT = Type.Integer({ minimum: 1, maximum: 65535 })

/** The scan id pattern of POST /app/scan, for a query parameter that names a scan. */
export const ScanIdProperty = { minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' }

const serviceFields = {
  service: Type.Optional(Type.String({ description: 'Protocol, e.g. ssh' })),
  product: Type.Optional(Type.String()),
  version: Type.Optional(Type.String())
}

export const ServiceVersionSchema = Type.Object(serviceFields, { $id: 'ServiceVersion', additionalProperties: false })

export const DiffFindingSchema = Type.Object({
  id: Type.String({ description: 'Finding id (GET /vulnerability/finding/{id} … and PATCH decide it)' }),
  address: ADDRESS,
  port: PORT,
  cveId: Type.String(),
  severity: StringEnum(SEVERITIES),
  cvss: Type.Union([Type.Number(), Type.Null()], { description: 'null when the CVE has no CVSS score (never 0 for a missing one)' }),
  status: StringEnum(STATUSES, { description: 'The finding\'s status now (a finding fixed in the diff is usually `fixed`)' }),
  product: Type.Optional(Type.String({ description: 'The product on the port, as the scan that observed the finding saw it' })),
  version: Type.Optional(Type.String())
}, { $id: 'DiffFinding', additionalProperties: false })

export const DiffPortSchema = Type.Object({ address: ADDRESS, port: PORT, ...serviceFields }, { $id: 'DiffPort', additionalProperties: false })

export const ServiceChangeSchema = Type.Object({
  address: ADDRESS,
  port: PORT,
  before: ref(ServiceVersionSchema),
  after: ref(ServiceVersionSchema)
}, { $id: 'ServiceChange', additionalProperties: false })

export const DiffHostSchema = Type.Object({
  address: ADDRESS,
  openPorts: Type.Array(PORT, { description: 'Open ports: as this scan saw them for a host that appeared, as the other scan did for a host that went down' })
}, { $id: 'DiffHost', additionalProperties: false })

const count = (description: string): ReturnType<typeof Type.Integer> => Type.Integer({ minimum: 0, description })

export const ScanDiffSchema = Type.Object({
  scanId: Type.String({ description: 'The scan compared' }),
  against: Type.String({ description: 'The scan it is compared with: `against`, or the previous completed scan of the same targets' }),
  limit: Type.Integer({ minimum: 1, description: 'Most items of each list in this response' }),
  offset: Type.Integer({ minimum: 0, description: 'Items skipped at the start of each list' }),
  totals: Type.Object({
    newFindings: count('Findings this scan observed and the other did not'),
    fixedFindings: count('Findings the other scan observed on a host and port this scan covered and settled, and this one did not'),
    unchangedFindings: count('Findings both scans observed'),
    portsOpened: count('Ports open now that the other scan covered and did not find open'),
    portsClosed: count('Ports the other scan found open that this scan covered and did not'),
    servicesChanged: count('Ports open in both scans whose service, product or version changed'),
    hostsAppeared: count('Hosts up now that the other scan did not see up'),
    hostsDown: count('Hosts up in the other scan that this scan saw down')
  }, { additionalProperties: false, description: 'Every list\'s full length' }),
  findings: Type.Object({
    new: Type.Array(ref(DiffFindingSchema)),
    fixed: Type.Array(ref(DiffFindingSchema)),
    unchanged: Type.Array(ref(DiffFindingSchema))
  }, { additionalProperties: false, description: 'Most severe first (severity, then CVSS), then by address, port and CVE' }),
  ports: Type.Object({
    opened: Type.Array(ref(DiffPortSchema)),
    closed: Type.Array(ref(DiffPortSchema), { description: 'With the service the other scan saw on the port' })
  }, { additionalProperties: false, description: 'By address, then port; only hosts up in both scans' }),
  services: Type.Object({
    changed: Type.Array(ref(ServiceChangeSchema))
  }, { additionalProperties: false }),
  hosts: Type.Object({
    appeared: Type.Array(ref(DiffHostSchema)),
    down: Type.Array(ref(DiffHostSchema))
  }, { additionalProperties: false })
}, {
  $id: 'ScanDiff',
  additionalProperties: false,
  examples: [{
    scanId: 'nightly.1767229200000',
    against: 'nightly.1767142800000',
    limit: 100,
    offset: 0,
    totals: { newFindings: 1, fixedFindings: 1, unchangedFindings: 0, portsOpened: 0, portsClosed: 1, servicesChanged: 1, hostsAppeared: 0, hostsDown: 0 },
    findings: {
      new: [{ id: '3f9a1c0d2e4b5a6978877665', address: '10.20.0.5', port: 22, cveId: 'CVE-2024-6387', severity: 'high', cvss: 8.1, status: 'open', product: 'OpenSSH', version: '9.6p1' }],
      fixed: [{ id: '9be0f1a2c3d4e5f601122334', address: '10.20.0.5', port: 6379, cveId: 'CVE-2022-0543', severity: 'critical', cvss: 10, status: 'fixed', product: 'Redis', version: '6.0.5' }],
      unchanged: []
    },
    ports: { opened: [], closed: [{ address: '10.20.0.5', port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }] },
    services: { changed: [{ address: '10.20.0.5', port: 22, before: { service: 'ssh', product: 'OpenSSH', version: '9.2p1' }, after: { service: 'ssh', product: 'OpenSSH', version: '9.6p1' } }] },
    hosts: { appeared: [], down: [] }
  }]
})

export const ScanDiffQuerySchema = Type.Object({
  against: Type.Optional(Type.String({ ...ScanIdProperty, description: 'The scan to compare with; default: the previous completed scan of the same targets' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Most items of each list' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: OFFSET_MAX, default: 0, description: 'Items to skip at the start of each list' }))
}, { additionalProperties: false })
