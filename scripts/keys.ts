// Dynamic API keys from the command line: `npm run keys -- create --label ci [--expires 30d] [--role reader] [--scope 10.1.0.0/16]`,
// `update <id> [--role] [--scope]`, `list`, `revoke <id>`.
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig } from '../lib/config'
import { backendKind, openBackends } from '../lib/backends'
import { newApiKey, parseLifetime } from '../lib/api-keys'
import { isRole, LEGACY_ROLE, parseKeyScope, ROLES, type Role } from '../lib/access'

const USAGE = `Usage:
  npm run keys -- create --label <label> [--expires <30d|12h|2w>] [--role <reader|operator|admin>] [--scope <cidr,...>] [--json]
  npm run keys -- update <id> [--role <reader|operator|admin>] [--scope <cidr,...>] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke <id>

--role defaults to operator. --scope lists the CIDRs the key may scan, within SCAN_ALLOW/SCAN_DENY;
--scope '' removes the key's own list. A change or revocation reaches every API instance at its next request.

Needs REDIS_URL: keys live in the shared store that every API instance reads.`

function fail (message: string, code = 2): never {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}

function optionRole (value: string | undefined): Role | undefined {
  if (value === undefined) return undefined
  if (!isRole(value)) fail(`--role '${value}' is not one of ${ROLES.join(', ')}`)
  return value
}

function optionScope (value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  try {
    return parseKeyScope(value.split(',').filter((e) => e.trim() !== ''))
  } catch (err) {
    fail(`--scope: ${(err as Error).message}`)
  }
}

function describeScope (scope: string[] | undefined): string {
  return scope !== undefined && scope.length > 0 ? ` scope ${scope.join(',')}` : ''
}

async function main (): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { label: { type: 'string' }, expires: { type: 'string' }, role: { type: 'string' }, scope: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }
  })
  const [command, ...rest] = positionals
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  if (command === undefined) fail(USAGE, 2)
  const role = optionRole(values.role)
  const scope = optionScope(values.scope)
  const config = loadConfig()
  if (backendKind(config) === 'memory') fail('REDIS_URL is not set. On the embedded default, keys live inside the server process: use POST /admin/keys instead.')
  const backends = await openBackends(config, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  const store = backends.store
  try {
    switch (command) {
      case 'create': {
        if (!values.label) fail('create needs --label <label>')
        const lifetime = values.expires === undefined ? null : parseLifetime(values.expires)
        if (values.expires !== undefined && lifetime === null) fail(`--expires '${values.expires}' is not a lifetime such as 30d, 12h or 2w`)
        const { key, record } = newApiKey(values.label, lifetime)
        record.role = role ?? 'operator'
        if (scope !== undefined) record.scope = scope
        await store.createApiKey(record)
        if (values.json) {
          process.stdout.write(JSON.stringify({ id: record.id, label: record.label, prefix: record.prefix, expiresAt: record.expiresAt, role: record.role, scope: record.scope ?? [], key }) + '\n')
        } else {
          process.stdout.write(`Created ${record.role} key ${record.id} (${record.label})${record.expiresAt ? `, expires ${record.expiresAt}` : ''}${describeScope(record.scope)}.\n` +
            `Store it now; it is not shown again:\n\n  ${key}\n\n`)
        }
        break
      }
      case 'list': {
        const keys = await store.listApiKeys()
        if (values.json) {
          process.stdout.write(JSON.stringify(keys.map(({ hash: _hash, ...k }) => ({ ...k, role: k.role ?? LEGACY_ROLE, scope: k.scope ?? [] }))) + '\n')
        } else if (keys.length === 0) {
          process.stdout.write('No dynamic keys.\n')
        } else {
          for (const k of keys) {
            process.stdout.write(`${k.id}  ${k.prefix}…  ${k.label}  ${k.role ?? LEGACY_ROLE}${describeScope(k.scope)}  created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}  expires ${k.expiresAt ?? 'never'}\n`)
          }
        }
        break
      }
      case 'update': {
        const id = rest[0]
        if (!id) fail('update needs the key id (see `npm run keys -- list`)')
        if (role === undefined && scope === undefined) fail('update needs --role or --scope')
        const updated = await store.updateApiKey(id, { role, scope })
        if (updated === null) fail(`No key with id '${id}'`, 1)
        if (values.json) {
          process.stdout.write(JSON.stringify({ id: updated.id, label: updated.label, role: updated.role ?? LEGACY_ROLE, scope: updated.scope ?? [] }) + '\n')
        } else {
          process.stdout.write(`Updated ${id}: ${updated.role ?? LEGACY_ROLE}${describeScope(updated.scope)}\n`)
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
