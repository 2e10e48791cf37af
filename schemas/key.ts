import { Type } from '@sinclair/typebox'
import { pageOf } from './common'

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  label: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it; not usable on its own' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()])
}, { $id: 'ApiKey' })

export const ApiKeyCreatedSchema = Type.Composite([ApiKeySchema, Type.Object({
  key: Type.String({ description: 'The key itself. Shown only in this response: store it now.' })
})], { $id: 'ApiKeyCreated' })

export const ApiKeyCreateSchema = Type.Object({
  label: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for, e.g. `ci`' }),
  expiresIn: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}[smhdw]$', description: 'Lifetime such as `30d`, `12h`, `2w`; no expiry when absent' }))
}, { $id: 'ApiKeyCreate', additionalProperties: false })

export const PageApiKeySchema = pageOf(ApiKeySchema, 'PageApiKey')

export const ApiKeyIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 })
})
