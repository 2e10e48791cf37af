import { Type } from '@sinclair/typebox'
import { ListQueryProperties, pageOf } from './common'

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time', description: 'When the request was answered' }),
  keyId: Type.Union([Type.String(), Type.Null()], { description: "'service' for the infrastructure key or a dynamic key's id (requests without a valid key are counted in GET /admin/audit/refused, not logged; entries from before that change may hold null)" }),
  keyLabel: Type.Union([Type.String(), Type.Null()], { description: "The dynamic key's label at the time" }),
  method: Type.String({ description: 'POST, PATCH, PUT or DELETE' }),
  route: Type.String({ description: 'The route pattern, e.g. `/app/scan/:id`' }),
  targetId: Type.Union([Type.String(), Type.Null()], { description: 'The id acted on (path parameter, or the posted scan id)' }),
  ip: Type.String({ description: 'Client address' }),
  status: Type.Integer({ description: 'Response status' })
}, { $id: 'AuditEntry', additionalProperties: false })

export const PageAuditEntrySchema = pageOf(AuditEntrySchema, 'PageAuditEntry')

export const AuditQuerySchema = Type.Object({
  ...ListQueryProperties,
  keyId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only this key's requests ('service' for the infrastructure key)" })),
  method: Type.Optional(Type.Union([Type.Literal('POST'), Type.Literal('PATCH'), Type.Literal('PUT'), Type.Literal('DELETE')])),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or before this time' })),
  status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'Only entries answered with this status' }))
}, { additionalProperties: false })

export const RefusedCountSchema = Type.Object({
  ip: Type.String({ description: 'Client address (behind TRUST_PROXY, the one the proxy names)' }),
  windowStart: Type.String({ format: 'date-time', description: 'Start of the window counted (AUTH_FAILURE_WINDOW seconds long)' }),
  windowEnd: Type.String({ format: 'date-time', description: 'End of the window (excluded)' }),
  count: Type.Integer({ minimum: 1, description: 'State-changing requests from the address in the window refused for want of a valid key (401, or 429 while locked)' })
}, { $id: 'RefusedCount', additionalProperties: false })

export const PageRefusedCountSchema = pageOf(RefusedCountSchema, 'PageRefusedCount')
