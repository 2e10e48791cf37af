// Limits open connections per client address (HTTP_MAX_CONNECTIONS_PER_ADDRESS; TRUST_PROXY addresses exempt) beside
// the total the server takes (HTTP_MAX_CONNECTIONS); decorates nothing.
import fp from 'fastify-plugin'
import { ConnectionLimiter } from '../lib/connection-limit'
import { trustedProxies } from '../lib/config'

export default fp(async function connectionsPlugin (fastify) {
  const trusted = trustedProxies(fastify.config)
  let limiter: ConnectionLimiter
  try {
    limiter = new ConnectionLimiter(fastify.config.HTTP_MAX_CONNECTIONS_PER_ADDRESS, trusted === false ? [] : trusted)
  } catch (err) {
    throw new Error(`TRUST_PROXY: ${(err as Error).message}`)
  }
  // Refused before any byte is read, as connections beyond the total are.
  fastify.server.on('connection', (socket) => {
    if (!limiter.admit(socket)) socket.destroy()
  })
}, { name: 'connections', dependencies: ['env'] })
