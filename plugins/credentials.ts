// Decorates `fastify.credentials`: the stored SSH logins (lib/credentials/vault.ts), sealed under CREDENTIALS_KEY, and
// `fastify.secretBox`, the box that seals them (tracker tokens too).
// The scaled deployment refuses to start without the key, or with one that does not open what the store keeps.
import fp from 'fastify-plugin'
import { CredentialVault } from '../lib/credentials/vault'
import { secretBoxFor, type SecretBox } from '../lib/secrets'

declare module 'fastify' {
  interface FastifyInstance {
    credentials: CredentialVault
    secretBox: SecretBox
  }
}

export default fp(async function credentialsPlugin (fastify) {
  const { box, generated } = secretBoxFor(fastify.config, fastify.backends.kind !== 'memory')
  if (generated) fastify.log.debug('CREDENTIALS_KEY is not set: stored credentials are sealed under a key made for this run, and die with it (the embedded default keeps nothing anyway)')
  fastify.decorate('credentials', await CredentialVault.open(fastify.store, box))
  fastify.decorate('secretBox', box)
}, { name: 'credentials', dependencies: ['env', 'backends'] })
