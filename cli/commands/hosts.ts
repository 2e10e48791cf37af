// `vulnscan hosts`: the hosts scans have seen, with the list's filters.
import { api, integer, oneOf, paging, print, printJson } from '../context'
import { hostsTable } from '../output'
import type { CommandModule } from '../command'
import { checkedTags } from './tags'

const SORTS = ['lastSeen', 'address', 'findings', 'severity'] as const
const MIN_SEVERITIES = ['none', 'low', 'medium', 'high', 'critical'] as const

const hosts: CommandModule = (program, kit) => {
  const cmd = program.command('hosts')
    .summary('list hosts')
    .description('Lists the hosts scans have seen, most recently seen first; filters combine.')
    .option('--search <text>', 'text in the address or a hostname')
    .option('--port <n>', 'only hosts with this TCP port open')
    .option('--service <name>', 'only hosts running this service, e.g. ssh')
    .option('--product <name>', 'only hosts running this product, e.g. OpenSSH')
    .option('--min-severity <level>', `only hosts whose worst standing finding is at least: ${MIN_SEVERITIES.join(' | ')}`)
    .option('--tag <tag>', 'only hosts carrying this tag')
    .option('--findings', 'only hosts with standing findings')
    .option('--no-findings', 'only hosts without')
    .option('--sort <key>', `${SORTS.join(' | ')} (default: lastSeen)`)
    .option('--order <dir>', 'asc | desc')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => kit.run(cmd, async (ctx) => {
    const port = integer('port', opts.port as string | undefined, 1, 65535)
    const minSeverity = oneOf('min-severity', opts.minSeverity as string | undefined, MIN_SEVERITIES)
    const sort = oneOf('sort', opts.sort as string | undefined, SORTS)
    const order = oneOf('order', opts.order as string | undefined, ['asc', 'desc'] as const)
    const query = {
      ...paging(opts as { limit?: string, offset?: string }),
      ...(opts.search !== undefined ? { q: opts.search as string } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(opts.service !== undefined ? { service: opts.service as string } : {}),
      ...(opts.product !== undefined ? { product: opts.product as string } : {}),
      ...(minSeverity ? { minSeverity } : {}),
      ...(opts.tag !== undefined ? { tag: checkedTags([opts.tag as string])[0] } : {}),
      ...(typeof opts.findings === 'boolean' ? { hasFindings: opts.findings } : {}),
      ...(sort ? { sort } : {}),
      ...(order ? { order } : {})
    }
    const { data } = await api(ctx.client.GET('/host', { params: { query } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? (data.total === 0 && Object.keys(query).length === 0 ? 'No hosts yet: run a scan first.' : 'No hosts match.') : `${hostsTable(data.items, ctx.width)}\n${data.items.length} of ${data.total} hosts`)
    return 0
  }))
}

export default hosts
