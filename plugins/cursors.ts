// Decorates `fastify.cursors`: signs and reads the keyset cursors of GET /host and GET /vulnerability (lib/list-cursor.ts)
// under a key of the deployment, so that every API process reads the cursors any of them made.
import fp from 'fastify-plugin'
import { CursorCodec, cursorKey } from '../lib/list-cursor'

declare module 'fastify' {
  interface FastifyInstance {
    cursors: CursorCodec
  }
}

export default fp(async function cursorsPlugin (fastify) {
  fastify.decorate('cursors', new CursorCodec(cursorKey(fastify.config)))
}, { name: 'cursors', dependencies: ['env'] })
