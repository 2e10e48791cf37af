// `vulnscan integrations list|show|create|update|delete|sync|deliveries`: issue trackers (Jira, GitHub, GitLab) kept in
// step with findings (the infrastructure key or an admin key). Tokens are read from the environment or standard
// input, never from the command line, and never shown.
import type { Command } from 'commander'
import { api, oneOf, paging, print, printJson, usage, type Context } from '../context'
import type { CommandModule } from '../command'

const KINDS = ['github', 'gitlab', 'jira-cloud', 'jira-dc'] as const
const GROUPINGS = ['finding', 'host', 'cve'] as const
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none'] as const

interface Integration { id: string, name: string, kind: string, url: string, project: string, grouping: string, enabled: boolean, description: string, filter: Record<string, unknown> }

async function readStdin (ctx: Context): Promise<string> {
  const stdin = (ctx.io as { stdin?: NodeJS.ReadableStream }).stdin ?? process.stdin
  const chunks: Buffer[] = []
  for await (const c of stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string))
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

interface TokenFlags { tokenEnv?: string, tokenStdin?: boolean }

async function tokenOf (flags: TokenFlags, ctx: Context): Promise<string | undefined> {
  if (flags.tokenEnv !== undefined && flags.tokenStdin === true) throw usage('give --token-env or --token-stdin, not both.')
  if (flags.tokenStdin === true) return await readStdin(ctx)
  if (flags.tokenEnv === undefined) return undefined
  const value = process.env[flags.tokenEnv]
  if (value === undefined || value === '') throw usage(`--token-env ${flags.tokenEnv}: that environment variable is not set.`)
  return value
}

interface Flags extends TokenFlags { project?: string, user?: string, issueType?: string, minSeverity?: string, minEpss?: string, kevOnly?: boolean, tag?: string[], description?: string }

function fields (cmd: Command): Command {
  return cmd.option('--token-env <name>', 'read the token from this environment variable')
    .option('--token-stdin', 'read the token from standard input')
    .option('--user <email>', 'jira-cloud: the e-mail address the API token belongs to')
    .option('--issue-type <name>', 'jira: the issue type tickets are created as (default: Bug)')
    .option('--min-severity <level>', `only findings of this severity or worse: ${SEVERITIES.join(' | ')}`)
    .option('--min-epss <score>', 'only findings whose EPSS score is at least this (0 to 1)')
    .option('--kev-only', 'only findings on CISA\'s KEV list')
    .option('--tag <tag>', 'only findings on hosts carrying this tag (repeat for several)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--description <text>', 'what the integration is for')
}

function filterOf (f: Flags): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  const sev = oneOf('min-severity', f.minSeverity, SEVERITIES)
  if (sev !== undefined) out.minSeverity = sev
  if (f.minEpss !== undefined) {
    const n = Number(f.minEpss)
    if (!Number.isFinite(n) || n < 0 || n > 1) throw usage(`--min-epss must be a number from 0 to 1 (got '${f.minEpss}').`)
    out.minEpss = n
  }
  if (f.kevOnly === true) out.kevOnly = true
  if (f.tag !== undefined) out.tags = f.tag
  return Object.keys(out).length === 0 ? undefined : out
}

const line = (i: Integration): string => `${i.name} (${i.id}): ${i.kind} ${i.url} ${i.project}, one ticket per ${i.grouping}, ${i.enabled ? 'enabled' : 'disabled'}${i.description !== '' ? `; ${i.description}` : ''}`

const integrations: CommandModule = (program, kit) => {
  const group = program.command('integrations')
    .summary('issue trackers: list, show, create, update, delete, sync, deliveries')
    .description('Issue trackers (GitHub, GitLab, Jira Cloud and Data Center) kept in step with findings: tickets opened, updated, closed and reopened after each scan. Needs the infrastructure key or an admin key.')
  kit.hint(group, 'integrations needs one of: list, show, create, update, delete, sync, deliveries.')

  const list = group.command('list').summary('list integrations (never their tokens)')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)').option('--offset <n>', 'items to skip (default: 0)')
  list.action(async (opts: { limit?: string, offset?: string }) => kit.run(list, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/integrations', { params: { query: paging(opts) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? 'No integrations: create one with vulnscan integrations create.' : `${data.items.map(line).join('\n')}\n${data.items.length} of ${data.total} integrations`)
    return 0
  }))

  const show = group.command('show').summary('one integration').argument('<integration-id>')
  kit.hint(show, 'integrations show needs one integration id (vulnscan integrations list shows them).')
  show.action(async (id: string) => kit.run(show, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/integrations/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, line(data))
    return 0
  }))

  const create = fields(group.command('create').summary('connect a tracker (the token is read from --token-env or --token-stdin)')
    .argument('<name>').argument('<kind>', KINDS.join(' | ')).argument('<tracker-url>', 'the tracker\'s API base, e.g. https://api.github.com')
    .requiredOption('--project <project>', 'github: owner/repo; gitlab: id or group/project; jira: the project key')
    .option('--group-by <grouping>', `${GROUPINGS.join(' | ')} (default: finding)`))
    .addHelpText('after', '\nExample:\n  GH_TOKEN=… vulnscan integrations create sec github https://api.github.com --project example/security --token-env GH_TOKEN --min-severity high\n')
  kit.hint(create, 'integrations create needs a name, a kind and the tracker URL, with --project and --token-env or --token-stdin.')
  create.action(async (name: string, kind: string, url: string, opts: Flags & { groupBy?: string }) => kit.run(create, async (ctx) => {
    const token = await tokenOf(opts, ctx)
    if (token === undefined) throw usage('integrations create needs --token-env <name> or --token-stdin.')
    const filter = filterOf(opts)
    const body = {
      name, kind: oneOf('kind', kind, KINDS) as typeof KINDS[number], url, project: opts.project ?? '', token,
      ...(opts.user !== undefined ? { username: opts.user } : {}),
      ...(opts.issueType !== undefined ? { issueType: opts.issueType } : {}),
      ...(filter !== undefined ? { filter } : {}),
      ...(opts.groupBy !== undefined ? { grouping: oneOf('group-by', opts.groupBy, GROUPINGS) as typeof GROUPINGS[number] } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {})
    }
    const { data } = await api(ctx.client.POST('/admin/integrations', { body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Created ${line(data)}`)
    return 0
  }))

  const update = fields(group.command('update').summary('change an integration, or replace its token').argument('<integration-id>')
    .option('--project <project>', 'the project').option('--enable', 'enable it').option('--disable', 'disable it'))
  kit.hint(update, 'integrations update needs an integration id and what to change.')
  update.action(async (id: string, opts: Flags & { enable?: boolean, disable?: boolean }) => kit.run(update, async (ctx) => {
    const token = await tokenOf(opts, ctx)
    const filter = filterOf(opts)
    const body = {
      ...(token !== undefined ? { token } : {}),
      ...(opts.project !== undefined ? { project: opts.project } : {}),
      ...(opts.user !== undefined ? { username: opts.user } : {}),
      ...(opts.issueType !== undefined ? { issueType: opts.issueType } : {}),
      ...(filter !== undefined ? { filter } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.enable === true ? { enabled: true } : opts.disable === true ? { enabled: false } : {})
    }
    if (Object.keys(body).length === 0) throw usage('integrations update needs something to change.')
    const { data } = await api(ctx.client.PATCH('/admin/integrations/{id}', { params: { path: { id } }, body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Changed ${line(data)}`)
    return 0
  }))

  const del = group.command('delete').summary('delete an integration (its tickets stay on the tracker)').argument('<integration-id>')
  kit.hint(del, 'integrations delete needs an integration id.')
  del.action(async (id: string) => kit.run(del, async (ctx) => {
    await api(ctx.client.DELETE('/admin/integrations/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, { deleted: id })
    else print(ctx.io, `Deleted integration ${id}`)
    return 0
  }))

  const sync = group.command('sync').summary('sync an integration now').argument('<integration-id>')
  kit.hint(sync, 'integrations sync needs an integration id.')
  sync.action(async (id: string) => kit.run(sync, async (ctx) => {
    const { data } = await api(ctx.client.POST('/admin/integrations/{id}/sync', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Sync queued (${data.request}); vulnscan integrations deliveries ${id} shows what is sent`)
    return 0
  }))

  const deliveries = group.command('deliveries').summary('what was sent to the tracker').argument('<integration-id>')
    .option('--failed', 'only the failed requests').option('--limit <n>', 'page size, 1 to 500 (default: 50)').option('--offset <n>', 'items to skip (default: 0)')
  kit.hint(deliveries, 'integrations deliveries needs an integration id.')
  deliveries.action(async (id: string, opts: { failed?: boolean, limit?: string, offset?: string }) => kit.run(deliveries, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/integrations/{id}/deliveries', { params: { path: { id }, query: { ...paging(opts), ...(opts.failed === true ? { failed: true } : {}) } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? 'Nothing sent yet.' : data.items.map((d) => `${d.at} ${d.action} ${d.method} ${d.path} try ${d.attempt}: ${d.ok ? `answered ${String(d.statusCode)}` : `failed: ${d.error ?? ''}${d.willRetry ? ' (tried again)' : ''}`}`).join('\n'))
    return 0
  }))
}

export default integrations
