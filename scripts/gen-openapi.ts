// Writes openapi.yaml from the routes' schemas: `npm run openapi`. A test fails when the file is stale.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import app, { serverOptions } from '../app'
import { loadConfig } from '../lib/config'

/** The OpenAPI document as YAML, built on the embedded default with a fixed config so it is reproducible. */
export async function generateOpenApi (): Promise<string> {
  const config = loadConfig({ SERVICE_API_KEY: 'openapi-generation-only-key', LOG_LEVEL: 'silent', WORKER_ENABLED: false, NVD_INDEX_FILE: '' }, {})
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })
  await fastify.ready()
  const yaml = fastify.swagger({ yaml: true })
  await fastify.close()
  return yaml
}

if (require.main === module) {
  generateOpenApi().then((yaml) => {
    const file = join(__dirname, '..', 'openapi.yaml')
    writeFileSync(file, yaml)
    process.stdout.write(`wrote openapi.yaml (${yaml.length} bytes)\n`)
  }).catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`)
    process.exit(1)
  })
}
