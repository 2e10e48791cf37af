// `vulnscan keys create|list|update|revoke`: dynamic API keys (the infrastructure key or an admin key).
import { Option } from 'commander'
import { ROLES } from '../../lib/access'
import { api, oneOf, paging, print, printJson, usage } from '../context'
import { keysTable } from '../output'
import type { CommandModule } from '../command'

/** `--scope 10.0.0.0/8,192.168.0.0/16` or the option repeated; `--scope ''` clears it. */
const scopeOption = (): Option => new Option('--scope <cidrs>', 'what the key may scan: CIDRs, comma-separated or repeated (\'\' for the global lists alone)')
  .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')])

const keys: CommandModule = (program, kit) => {
  const group = program.command('keys')
    .summary('dynamic API keys: create, list, update, revoke')
    .description('Dynamic API keys, stored only as hashes: the key is shown once, at creation. Needs the infrastructure key or an admin key.')
  kit.hint(group, 'keys needs create, list or revoke (or update, to change a key\'s role or scope).')

  const create = group.command('create')
    .summary('create a dynamic API key (shown once)')
    .description('Creates a dynamic API key. It is printed once and never again: store it now.')
    .option('--label <label>', 'what the key is for, e.g. ci')
    .option('--expires <30d|12h|2w>', 'lifetime (default: never expires)')
    .option('--role <role>', `${ROLES.join(' | ')} (default: operator)`)
    .addOption(scopeOption())
  create.action(async (opts: { label?: string, expires?: string, role?: string, scope?: string[] }) => kit.run(create, async (ctx) => {
    if (opts.label === undefined || opts.label === '') throw usage('keys create needs --label <label>.')
    const role = oneOf('role', opts.role, ROLES)
    const body = { label: opts.label, ...(opts.expires ? { expiresIn: opts.expires } : {}), ...(role ? { role } : {}), ...(opts.scope ? { scope: opts.scope } : {}) }
    const { data } = await api(ctx.client.POST('/admin/keys', { body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Created key ${data.id} (${data.label}, ${data.role}${data.scope.length > 0 ? `, scope ${data.scope.join(', ')}` : ''})${data.expiresAt ? `, expires ${data.expiresAt}` : ''}.\nStore it now; it is not shown again:\n\n  ${data.key}\n`)
    return 0
  }))

  const list = group.command('list')
    .summary('list dynamic API keys')
    .description('Lists dynamic API keys: prefix, role, scope and dates, never the key.')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  list.action(async (opts: { limit?: string, offset?: string }) => kit.run(list, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/keys', { params: { query: paging(opts) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? 'No dynamic keys.' : `${keysTable(data.items, ctx.width)}\n${data.items.length} of ${data.total} keys`)
    return 0
  }))

  const update = group.command('update')
    .summary('change a key\'s role or scope')
    .description('Changes a dynamic key\'s role or scope; it takes effect on the next request, on every API instance.')
    .argument('<key-id>')
    .option('--role <role>', ROLES.join(' | '))
    .addOption(scopeOption())
  kit.hint(update, 'keys update needs one key id.')
  update.action(async (id: string, opts: { role?: string, scope?: string[] }) => kit.run(update, async (ctx) => {
    const role = oneOf('role', opts.role, ROLES)
    if (role === undefined && opts.scope === undefined) throw usage('keys update needs --role or --scope.')
    const { data } = await api(ctx.client.PATCH('/admin/keys/{id}', { params: { path: { id } }, body: { ...(role ? { role } : {}), ...(opts.scope ? { scope: opts.scope } : {}) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Key ${data.id} (${data.label}): role ${data.role}, scope ${data.scope.length === 0 ? 'the global lists' : data.scope.join(', ')}.`)
    return 0
  }))

  const revoke = group.command('revoke')
    .summary('revoke a dynamic API key')
    .description('Revokes a dynamic API key; it is refused from the very next request, on every API instance.')
    .argument('<key-id>')
  kit.hint(revoke, 'keys revoke needs one key id.')
  revoke.action(async (id: string) => kit.run(revoke, async (ctx) => {
    await api(ctx.client.DELETE('/admin/keys/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, { revoked: id })
    else print(ctx.io, `Revoked key ${id}.`)
    return 0
  }))
}

export default keys
