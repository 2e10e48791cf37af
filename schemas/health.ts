import { Type } from '@sinclair/typebox'
import { ref } from './common'
import { dataSourcesSchema } from '../lib/sources/registry'

const WorkersCheck = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')], { description: 'down when no scan worker takes jobs' }),
  count: Type.Integer({ minimum: 0, description: 'Processes taking scan jobs now' }),
  error: Type.Optional(Type.String())
})

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  backend: Type.String({ description: 'redis, postgresql, memory or bullmq' }),
  error: Type.Optional(Type.String({ description: 'Why it is down (never the address of the dependency)' }))
})

// Built from the registry of data sources: one entry per source, the distribution trackers under `distributions`.
export const DataSourcesSchema = dataSourcesSchema()

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
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'What a user should know although the service answers, e.g. that no worker is running' })),
  nvd: Type.Optional(Type.Object({
    cves: Type.Integer({ minimum: 0, description: 'CVE records in the local index' }),
    products: Type.Integer({ minimum: 0, description: 'vendor:product pairs with match criteria' }),
    lastSync: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the last NVD sync completed' })
  }, { description: 'The local NVD index; absent when it could not be read' })),
  dataSources: Type.Optional(ref(DataSourcesSchema))
}, { $id: 'Health' })
