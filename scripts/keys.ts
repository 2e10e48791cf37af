// Dynamic API keys from the command line: `npm run keys -- create --label ci [--expires 30d]`, `list`, `revoke <id>`.
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig } from '../lib/config'
import { backendKind, openBackends } from '../lib/backends'
import { newApiKey, parseLifetime } from '../lib/api-keys'

const USAGE = `Usage:
  npm run keys -- create --label <label> [--expires <30d|12h|2w>] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke <id>

Needs REDIS_URL: keys live in the shared store that every API instance reads.`

function fail (message: string, code = 2): never {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}

async function main (): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { label: { type: 'string' }, expires: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }
  })
  const [command, ...rest] = positionals
  if (values.help || command === undefined) fail(USAGE, values.help ? 0 : 2)
  const config = loadConfig()
  if (backendKind(config) === 'memory') fail('REDIS_URL is not set. On the embedded default, keys live inside the server process: use POST /admin/keys instead.')
  const backends = await openBackends(config, pino({ level: 'warn' }, pino.destination(2)))
  const store = backends.store
  try {
    switch (command) {
      case 'create': {
        if (!values.label) fail('create needs --label <label>')
        const lifetime = values.expires === undefined ? null : parseLifetime(values.expires)
        if (values.expires !== undefined && lifetime === null) fail(`--expires '${values.expires}' is not a lifetime such as 30d, 12h or 2w`)
        const { key, record } = newApiKey(values.label, lifetime)
        await store.createApiKey(record)
        if (values.json) {
          process.stdout.write(JSON.stringify({ id: record.id, label: record.label, prefix: record.prefix, expiresAt: record.expiresAt, key }) + '\n')
        } else {
          process.stdout.write(`Created key ${record.id} (${record.label})${record.expiresAt ? `, expires ${record.expiresAt}` : ''}.\n` +
            `Store it now; it is not shown again:\n\n  ${key}\n\n`)
        }
        break
      }
      case 'list': {
        const keys = await store.listApiKeys()
        if (values.json) {
          process.stdout.write(JSON.stringify(keys.map(({ hash: _hash, ...k }) => k)) + '\n')
        } else if (keys.length === 0) {
          process.stdout.write('No dynamic keys.\n')
        } else {
          for (const k of keys) {
            process.stdout.write(`${k.id}  ${k.prefix}…  ${k.label}  created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}  expires ${k.expiresAt ?? 'never'}\n`)
          }
        }
        break
      }
      case 'revoke': {
        const id = rest[0]
        if (!id) fail('revoke needs the key id (see `npm run keys -- list`)')
        if (!await store.deleteApiKey(id)) fail(`No key with id '${id}'`, 1)
        process.stdout.write(`Revoked ${id}\n`)
        break
      }
      default:
        fail(`Unknown command '${command}'.\n\n${USAGE}`)
    }
  } finally {
    await backends.close()
  }
}

main().catch((err) => fail(`keys: ${(err as Error).message}`, 1))
