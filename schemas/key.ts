import { Type } from '@sinclair/typebox'
import { pageOf, ref } from './common'
import { ROLES } from '../lib/access'

export const RoleSchema = Type.Union(ROLES.map((r) => Type.Literal(r)), {
  $id: 'Role',
  description: '`reader`: read only. `operator`: also post and cancel scans, decide findings, delete hosts. ' +
    '`admin`: everything the infrastructure key can do, key management and the audit log included. ' +
    'A key made before roles existed is an `operator`.'
})

const ScopeSchema = Type.Array(Type.String({ minLength: 1, maxLength: 50, description: 'A CIDR block or an address' }), {
  maxItems: 256,
  description: 'What the key may scan, within the global SCAN_ALLOW/SCAN_DENY lists. Empty: the global lists alone.'
})

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  label: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it; not usable on its own' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  role: ref(RoleSchema),
  scope: ScopeSchema
}, { $id: 'ApiKey' })

export const ApiKeyCreatedSchema = Type.Composite([ApiKeySchema, Type.Object({
  key: Type.String({ description: 'The key itself. Shown only in this response: store it now.' })
})], { $id: 'ApiKeyCreated' })

export const ApiKeyCreateSchema = Type.Object({
  label: Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for, e.g. `ci`' }),
  expiresIn: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}[smhdw]$', description: 'Lifetime such as `30d`, `12h`, `2w`; no expiry when absent' })),
  role: Type.Optional(ref(RoleSchema)),
  scope: Type.Optional(ScopeSchema)
}, { $id: 'ApiKeyCreate', additionalProperties: false })

export const ApiKeyPatchSchema = Type.Object({
  role: Type.Optional(ref(RoleSchema)),
  scope: Type.Optional(ScopeSchema)
}, { $id: 'ApiKeyPatch', additionalProperties: false, minProperties: 1 })

export const PageApiKeySchema = pageOf(ApiKeySchema, 'PageApiKey')

export const ApiKeyIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 })
})
