import { Type } from '@sinclair/typebox'
import { ListQueryProperties, pageOf } from './common'

export const AuditEntrySchema = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time', description: 'When the request was answered' }),
  keyId: Type.Union([Type.String(), Type.Null()], { description: "'service' for the infrastructure key, a dynamic key's id, or null when no valid key was given" }),
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
