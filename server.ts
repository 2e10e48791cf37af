// HTTP entry point: `npm start` (the API and a scan worker in one process) or `npm run start:api` (the API only).
import Fastify from 'fastify'
import closeWithGrace from 'close-with-grace'
import app, { serverOptions } from './app'
import { loadConfig } from './lib/config'

async function main (): Promise<void> {
  let config
  try {
    // `npm run start:api` passes --no-worker: this process then only serves HTTP.
    config = loadConfig(process.argv.includes('--no-worker') ? { WORKER_ENABLED: false } : {})
  } catch (err) {
    process.stderr.write(`Configuration error: ${(err as Error).message}\n`)
    process.exit(1)
  }
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) fastify.log.error({ err }, 'shutting down after an error')
    else fastify.log.info({ signal }, 'shutting down')
    await fastify.close()
  })

  await fastify.listen({ port: config.PORT, host: config.HOST })
}

main().catch((err) => {
  // A wrong or missing CREDENTIALS_KEY is said in one line, not as a stack.
  process.stderr.write(`vulnscan failed to start: ${(err as Error).name === 'SecretKeyError' ? (err as Error).message : (err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
