import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigSchema, loadConfig } from '../../lib/config'

const ROOT = join(__dirname, '..', '..')

test('defaults, overrides and environment', async (t) => {
  const c = loadConfig({}, {})
  t.match(c, { PORT: 3000, HOST: '127.0.0.1', REDIS_PREFIX: 'vulnscan', MAX_TARGETS: 256, MAX_HOSTS: 4096, WORKER_ENABLED: true })
  t.equal(c.REDIS_URL, undefined, 'no Redis unless asked: the embedded default')
  t.equal(loadConfig({}, { PORT: '8080', SCAN_DENY: '10.0.0.0/8' }).PORT, 8080, 'numbers from the environment are parsed')
  t.equal(loadConfig({ PORT: 9090 }, { PORT: '8080' }).PORT, 9090, 'overrides win over the environment')
  t.equal(loadConfig({}, { REDIS_URL: '' }).REDIS_URL, undefined, 'an empty variable counts as unset')
})

test('invalid values are refused with a message naming the variable', async (t) => {
  t.throws(() => loadConfig({}, { PORT: 'eighty' }), /PORT/)
  t.throws(() => loadConfig({}, { PORT: '70000' }), /PORT/)
  t.throws(() => loadConfig({}, { LOG_LEVEL: 'loud' }), /LOG_LEVEL/)
  t.throws(() => loadConfig({}, { SERVICE_API_KEY: 'short' }), /SERVICE_API_KEY/)
  t.throws(() => loadConfig({}, { REDIS_PREFIX: 'has space' }), /REDIS_PREFIX/)
  t.throws(() => loadConfig({}, { MAX_HOSTS: '0' }), /MAX_HOSTS/)
})

test('every variable is documented in .env.example and docs/configuration.md (the README links it)', async (t) => {
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8')
  const readme = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8')
  for (const name of Object.keys(ConfigSchema.properties)) {
    t.match(example, new RegExp(`^${name}=`, 'm'), `${name} in .env.example`)
    t.match(readme, new RegExp(`\\| \`${name}\` \\|`), `${name} in the configuration table of docs/configuration.md`)
  }
})
