import { Type } from '@sinclair/typebox'

const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  backend: Type.String({ description: 'redis, memory or bullmq' }),
  error: Type.Optional(Type.String())
})

export const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptimeSeconds: Type.Integer({ minimum: 0 }),
  checks: Type.Object({ store: Check, queue: Check })
}, { $id: 'Health' })
