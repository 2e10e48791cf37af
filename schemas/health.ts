import { Type } from '@sinclair/typebox'
import { ref } from './common'
import { dataSourcesSchema } from '../lib/sources/registry'

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  backend: Type.String({ description: 'redis, memory or bullmq' }),
  error: Type.Optional(Type.String())
})

// Built from the registry of data sources: one entry per source, the distribution trackers under `distributions`.
export const DataSourcesSchema = dataSourcesSchema()

export const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptimeSeconds: Type.Integer({ minimum: 0 }),
  checks: Type.Object({ store: Check, queue: Check }),
  workers: Type.Optional(Type.Integer({ minimum: 0, description: 'Scan workers alive on the queue (this process\'s own included); absent when the queue could not say. With none, posted scans stay queued: the API itself is healthy, so the status is not changed by it' })),
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'What a user should know although the service answers, e.g. that no worker is running' })),
  nvd: Type.Optional(Type.Object({
    cves: Type.Integer({ minimum: 0, description: 'CVE records in the local index' }),
    products: Type.Integer({ minimum: 0, description: 'vendor:product pairs with match criteria' }),
    lastSync: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the last NVD sync completed' })
  }, { description: 'The local NVD index; absent when it could not be read' })),
  dataSources: Type.Optional(ref(DataSourcesSchema))
}, { $id: 'Health' })
