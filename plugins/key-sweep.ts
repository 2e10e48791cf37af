// Deletes expired dynamic API keys on a timer, so that nobody has to read a key for it to go; decorates nothing.
import fp from 'fastify-plugin'

export default fp(async function keySweepPlugin (fastify) {
  const sweep = (): void => {
    fastify.store.purgeExpiredApiKeys()
      .then((n) => { if (n > 0) fastify.log.info({ keys: n }, 'expired API keys deleted') })
      .catch((err) => fastify.log.warn({ err }, 'expired API key sweep failed'))
  }
  const timer = setInterval(sweep, fastify.config.KEY_SWEEP_INTERVAL * 1000)
  timer.unref()
  fastify.addHook('onReady', async () => { sweep() })
  fastify.addHook('onClose', async () => { clearInterval(timer) })
}, { name: 'key-sweep', dependencies: ['env', 'backends'] })
