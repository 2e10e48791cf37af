import { Type } from '@sinclair/typebox'
import { ListQueryProperties, pageOf, ref } from './common'

const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'

export const PinnedHostKeySchema = Type.Object({
  host: Type.String({ minLength: 1, maxLength: 64, description: 'The host\'s IP address' }),
  fingerprint: Type.String({ minLength: 1, maxLength: 16384, description: '`SHA256:<base64>` as `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` prints it, or the public key line itself' })
}, { $id: 'PinnedHostKey', additionalProperties: false, description: 'The host key a credential accepts from one host; hosts without one are trusted on first use' })

const ScopeProperty = Type.Array(Type.String({ minLength: 1, maxLength: 50, description: 'A CIDR block or an address' }), {
  maxItems: 256,
  description: 'Where the credential may be used: a scan naming it must have every literal target inside, and the worker logs in to no host outside it. Empty: wherever the scan may go'
})
const UsernameProperty = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._][A-Za-z0-9._-]*$', description: 'The account to log in as; an account with no privileges suffices (no sudo is ever run)' })
const PrivateKeyProperty = Type.String({ minLength: 1, maxLength: 16384, description: 'An OpenSSH or PEM private key (ed25519, ECDSA or RSA). Write-only: never returned' })
const PasswordProperty = Type.String({ minLength: 1, maxLength: 1024, description: 'A password, where the host allows password logins. Write-only: never returned' })
const PassphraseProperty = Type.String({ minLength: 1, maxLength: 1024, description: 'The private key\'s passphrase, if it has one. Write-only: never returned' })
const PortProperty = Type.Integer({ minimum: 1, maximum: 65535, description: 'SSH port (default 22)' })
const HostKeysProperty = Type.Array(ref(PinnedHostKeySchema), { maxItems: 4096, description: 'Pinned host keys: these hosts must show this key; others are trusted on first use (the key of the first login is recorded, and a later change fails the login)' })
const DescriptionProperty = Type.String({ maxLength: 200, description: 'What the credential is for' })

export const CredentialCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: NAME_PATTERN, description: 'Unique name; scans may name the credential by it' }),
  type: Type.Literal('ssh', { description: 'The only kind for now: an SSH login' }),
  username: UsernameProperty,
  privateKey: Type.Optional(PrivateKeyProperty),
  password: Type.Optional(PasswordProperty),
  passphrase: Type.Optional(PassphraseProperty),
  port: Type.Optional(PortProperty),
  hostKeys: Type.Optional(HostKeysProperty),
  scope: Type.Optional(ScopeProperty),
  description: Type.Optional(DescriptionProperty)
}, {
  $id: 'CredentialCreate',
  additionalProperties: false,
  description: 'Exactly one of `privateKey` and `password`.',
  examples: [{ name: 'debian-fleet', type: 'ssh', username: 'vulnscan', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\n…\n-----END OPENSSH PRIVATE KEY-----\n', scope: ['10.0.0.0/16'] }]
})

export const CredentialPatchSchema = Type.Object({
  username: Type.Optional(UsernameProperty),
  privateKey: Type.Optional(PrivateKeyProperty),
  password: Type.Optional(PasswordProperty),
  passphrase: Type.Optional(PassphraseProperty),
  port: Type.Optional(PortProperty),
  hostKeys: Type.Optional(HostKeysProperty),
  scope: Type.Optional(ScopeProperty),
  description: Type.Optional(DescriptionProperty)
}, {
  $id: 'CredentialPatch',
  additionalProperties: false,
  minProperties: 1,
  description: 'The fields to change. A new `privateKey` or `password` replaces the secret (rotation); `hostKeys` and `scope` are replaced whole.',
  examples: [{ privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\n…\n-----END OPENSSH PRIVATE KEY-----\n' }]
})

export const CredentialSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.Literal('ssh'),
  username: Type.String(),
  auth: Type.Union([Type.Literal('privateKey'), Type.Literal('password')], { description: 'Which secret it holds (the secret itself is never returned)' }),
  port: Type.Integer(),
  hostKeys: Type.Array(ref(PinnedHostKeySchema)),
  scope: Type.Array(Type.String()),
  description: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  secretUpdatedAt: Type.String({ format: 'date-time', description: 'When the secret was last set' })
}, { $id: 'Credential', description: 'A stored SSH login, without its secret' })

export const PageCredentialSchema = pageOf(CredentialSchema, 'PageCredential')

export const CredentialListQuerySchema = Type.Object(ListQueryProperties, { additionalProperties: false })

export const CredentialIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$', description: 'The credential\'s id or name' })
})

export const CredentialRotationSchema = Type.Object({
  resealed: Type.Integer({ minimum: 0, description: 'Secrets sealed again under the current key' }),
  current: Type.Integer({ minimum: 0, description: 'Secrets that were under the current key already' })
}, { $id: 'CredentialRotation', description: 'What a key rotation sealed again' })
