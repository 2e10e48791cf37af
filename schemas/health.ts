import { Type } from '@sinclair/typebox'
import { ref } from './common'

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  backend: Type.String({ description: 'redis, postgresql, memory or bullmq' }),
  error: Type.Optional(Type.String({ description: 'Why it is down (never the address of the dependency)' }))
})

const WorkersCheck = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')], { description: 'down when no scan worker takes jobs' }),
  count: Type.Integer({ minimum: 0, description: 'Processes taking scan jobs now' }),
  error: Type.Optional(Type.String())
})

const nullableDate = (description: string) => Type.Union([Type.String(), Type.Null()], { description })
const DistroStatus = Type.Union([Type.Object({
  importedAt: Type.String({ description: 'When the tracker data was imported' }),
  packages: Type.Integer({ minimum: 0, description: 'Source packages with entries' }),
  cves: Type.Integer({ minimum: 0, description: 'Package and CVE entries' })
}), Type.Null()], { description: 'null when never imported' })

export const DataSourcesSchema = Type.Object({
  nvd: Type.Object({
    cves: Type.Integer({ minimum: 0, description: 'CVE records in the local NVD index' }),
    products: Type.Integer({ minimum: 0, description: 'vendor:product pairs with match criteria' }),
    lastSync: nullableDate('When the last NVD sync completed'),
    authoritativeAsOf: nullableDate('Set by a complete full sync or feed import: products absent from the index have no known CVEs, and nothing is fetched on demand')
  }),
  cve5: Type.Object({
    records: Type.Integer({ minimum: 0, description: 'CVE JSON 5 records (CNA and CISA ADP affected data)' }),
    newestUpdated: nullableDate('The newest record update imported'),
    importedAt: nullableDate('When records were last imported')
  }),
  distributions: Type.Object({ debian: DistroStatus, ubuntu: DistroStatus }, { description: 'Distribution security trackers (backported fixes)' }),
  kev: Type.Union([Type.Object({
    catalogVersion: nullableDate('CISA KEV catalog version'),
    dateReleased: nullableDate('When CISA released it'),
    count: Type.Integer({ minimum: 0 })
  }), Type.Null()], { description: 'CISA Known Exploited Vulnerabilities catalog; null when never imported' }),
  epss: Type.Union([Type.Object({
    modelVersion: nullableDate('EPSS model version'),
    scoreDate: nullableDate('The day the scores were computed'),
    count: Type.Integer({ minimum: 0 })
  }), Type.Null()], { description: 'FIRST EPSS scores; null when never imported' })
}, { $id: 'DataSources', description: 'The vulnerability data findings are matched against, and how current each source is' })

export const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptimeSeconds: Type.Integer({ minimum: 0 }),
  checks: Type.Object({
    store: Check,
    queue: Check,
    results: Check,
    workers: WorkersCheck
  }),
  nvd: Type.Optional(Type.Object({
    cves: Type.Integer({ minimum: 0, description: 'CVE records in the local index' }),
    products: Type.Integer({ minimum: 0, description: 'vendor:product pairs with match criteria' }),
    lastSync: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the last NVD sync completed' })
  }, { description: 'The local NVD index; absent when it could not be read' })),
  dataSources: Type.Optional(ref(DataSourcesSchema))
}, { $id: 'Health' })
