// `vulnscan audit`: who changed what, when, from where (the infrastructure key or an admin key).
import { api, integer, oneOf, paging, print, printJson, usage } from '../context'
import { auditTable, refusedTable } from '../output'
import type { CommandModule } from '../command'

const METHODS = ['POST', 'PATCH', 'PUT', 'DELETE'] as const

function when (name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const t = Date.parse(value)
  if (Number.isNaN(t)) throw usage(`--${name} must be a date or time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z, not '${value}'`)
  return new Date(t).toISOString()
}

const audit: CommandModule = (program, kit) => {
  const cmd = program.command('audit')
    .summary('the audit log: every state-changing request, newest first')
    .description('Lists the audit log, newest first: who (key id and label), what (method, route, target), when, from which address, and the answer\'s status.')
    .option('--key-id <id>', 'only this key\'s requests (\'service\' for the infrastructure key)')
    .option('--method <method>', METHODS.join(' | '))
    .option('--since <time>', 'entries at or after this time')
    .option('--until <time>', 'entries at or before this time')
    .option('--status <code>', 'only entries answered with this HTTP status')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  cmd.action(async (opts: Record<string, string | undefined>) => kit.run(cmd, async (ctx) => {
    const method = oneOf('method', opts.method?.toUpperCase(), METHODS)
    const status = integer('status', opts.status, 100, 599)
    const since = when('since', opts.since)
    const until = when('until', opts.until)
    const query = {
      ...paging(opts),
      ...(opts.keyId !== undefined ? { keyId: opts.keyId } : {}),
      ...(method ? { method } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      ...(status !== undefined ? { status } : {})
    }
    const { data } = await api(ctx.client.GET('/admin/audit', { params: { query } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? 'No audit entries.' : `${auditTable(data.items)}\n${data.items.length} of ${data.total} entries`)
    return 0
  }))
  const refused = cmd.command('refused')
    .summary('requests refused for want of a valid key, counted per address and window')
    .description('Counts of state-changing requests refused for want of a valid key (401, or 429 while an address is locked), per client address and window, newest window first. They are counted, not logged one by one.')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  refused.action(async (opts: Record<string, string | undefined>) => kit.run(refused, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/audit/refused', { params: { query: paging(opts) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? 'No refused requests.' : `${refusedTable(data.items)}\n${data.items.length} of ${data.total} counters`)
    return 0
  }))
}

export default audit
