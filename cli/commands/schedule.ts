// `vulnscan schedule list|show|create|update|delete|enable|disable`: scans run at each due time of a cron expression.
import pc from 'picocolors'
import type { Command } from 'commander'
import { inferTarget } from '../../lib/scanner/targets'
import { DEFAULT_PRIORITY, DEFAULT_TEMPLATE, PRIORITY_MAX, PRIORITY_MIN, TEMPLATE_NAMES } from '../../lib/vocabulary'
import { api, integer, oneOf, paging, print, printJson, usage, type Context } from '../context'
import { scheduledScanText, schedulesTable, type Schedule } from '../output'
import type { CommandModule } from '../command'
import { credentialOption } from './credentials'
import { checkedTags, tagOption } from './tags'

type ScheduledScan = Schedule['scan']

/** The scan options `vulnscan scan` takes, so a scheduled scan is written the same way as one posted now. */
function scanOptions (cmd: Command, { update }: { update: boolean }): Command {
  cmd.option('-t, --template <name>', `${TEMPLATE_NAMES.join(' | ')} (default: ${update ? 'unchanged' : DEFAULT_TEMPLATE})`)
    .option('-p, --ports <list>', `ports instead of the template's, e.g. 22,80,8000-8100${update ? ' (\'\' drops the override)' : ''}`)
    .option(`--priority <${PRIORITY_MIN}-${PRIORITY_MAX}>`, `${PRIORITY_MAX} is the most urgent (default: ${update ? 'unchanged' : DEFAULT_PRIORITY})`)
    .option('--udp', 'also scan the template\'s UDP ports (or --udp-ports)')
  if (update) cmd.option('--no-udp', 'TCP only again')
  cmd.option('--udp-ports <list>', `UDP ports instead of the template's, e.g. 53,123,161 (implies --udp)${update ? '; \'\' drops the override' : ''}`)
  // Only the negation on create: commander would otherwise default it to true and send what the user never said.
  if (update) cmd.option('--discovery', 'host discovery first again (the default)')
  cmd.addOption(tagOption('--tag <tag>', `add this tag to every host a run finds up (repeatable)${update ? '; --tag \'\' drops them' : ''}`))
  cmd.addOption(credentialOption(update ? '; --credential \'\' drops them' : ''))
  cmd.addOption(tagOption('--target-tag <tag>', `also scan the hosts carrying this tag at each run (repeatable)${update ? '; --target-tag \'\' drops them' : ''}`))
  return cmd.option('--no-discovery', 'scan every address, without host discovery first (like nmap -Pn)')
}

interface ScanFlags { template?: string, ports?: string, priority?: string, udp?: boolean, udpPorts?: string, discovery?: boolean, tag?: string[], targetTag?: string[], credential?: string[] }

/**
 * The scan flags typed on the command line. A negatable flag (--no-udp, --no-discovery) gets a default from commander;
 * a flag not typed must not be sent, or it would change the scheduled scan behind the user's back.
 */
function typedScanFlags<T extends ScanFlags> (cmd: Command, opts: T): T {
  const typed: T = { ...opts }
  for (const key of ['udp', 'discovery'] as const) if (cmd.getOptionValueSource(key) !== 'cli') delete typed[key]
  return typed
}

const scanFlagsGiven = (f: ScanFlags): boolean => [f.template, f.ports, f.priority, f.udp, f.udpPorts, f.discovery, f.tag, f.targetTag, f.credential].some((v) => v !== undefined)

/**
 * The scan a schedule runs, from targets and flags laid over what it runs now (`base`): PATCH replaces `scan`
 * whole, so changing the ports alone must not drop the targets or the template.
 */
function scheduledScan (targets: string[], flags: ScanFlags, base?: ScheduledScan): ScheduledScan {
  const template = oneOf('template', flags.template, TEMPLATE_NAMES)
  const priority = integer('priority', flags.priority, PRIORITY_MIN, PRIORITY_MAX)
  const options = {
    ...base?.options,
    ...(template !== undefined ? { template } : {}),
    ...(flags.ports !== undefined ? { ports: flags.ports } : {}),
    // Said outright: the API fills a missing `udp` with false, which would silence the ports given.
    ...(flags.udp !== undefined ? { udp: flags.udp } : flags.udpPorts !== undefined && flags.udpPorts !== '' ? { udp: true } : {}),
    ...(flags.udpPorts !== undefined ? { udpPorts: flags.udpPorts } : {}),
    ...(flags.discovery !== undefined ? { discovery: flags.discovery } : {}),
    ...(flags.credential !== undefined ? { credentials: [...new Set(flags.credential)] } : {})
  }
  if (options.credentials !== undefined && options.credentials.length === 0) delete options.credentials
  if (options.ports === '') delete options.ports
  if (options.udpPorts === '') delete options.udpPorts
  const chosenPriority = priority ?? base?.priority
  // Tags given replace those the schedule has (an empty list drops them); not given, they stay.
  const tags = flags.tag !== undefined ? checkedTags(flags.tag) : base?.tags ?? []
  const targetTags = flags.targetTag !== undefined ? checkedTags(flags.targetTag) : base?.targetTags ?? []
  const chosenTargets = targets.length > 0 ? targets.map((a) => inferTarget(a)) : base?.targets ?? []
  return {
    ...(chosenTargets.length > 0 || targetTags.length === 0 ? { targets: chosenTargets } : {}),
    ...(Object.keys(options).length > 0 ? { options } : {}),
    ...(chosenPriority !== undefined ? { priority: chosenPriority } : {}),
    ...(tags.length > 0 ? { tags } : {}),
    ...(targetTags.length > 0 ? { targetTags } : {})
  }
}

function nonEmpty (name: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw usage(`--${name} must not be empty.`)
  return value
}

/** One line for a schedule: what it is, when it runs next, and its last run. */
function summaryLine (s: Schedule): string {
  const state = s.enabled ? pc.green('enabled') : pc.yellow('disabled')
  const next = s.nextRunAt === null ? 'no next run' : `next run ${s.nextRunAt}`
  return `Schedule ${s.id}${s.name !== '' ? ` (${s.name})` : ''}: ${s.cron} in ${s.timezone}, ${state}, ${next}.`
}

/** How many of the newest scans `schedule show` looks through for the schedule's own (the API has no per-schedule filter). */
const RECENT_SCANS_SEARCHED = 500
const RECENT_SCANS_SHOWN = 10

/** The schedule's scans among the newest RECENT_SCANS_SEARCHED, newest first. */
async function recentScans (ctx: Context, id: string): Promise<Array<{ id: string, status: string, createdAt: string, finishedAt?: string, reason?: string }>> {
  const { data } = await api(ctx.client.GET('/app/scan', { params: { query: { limit: RECENT_SCANS_SEARCHED } } }), ctx.baseUrl)
  return data.items.filter((s) => s.scheduleId === id)
}

function detailText (s: Schedule, scans: Awaited<ReturnType<typeof recentScans>>): string {
  const lines = [
    summaryLine(s),
    `  scans: ${scheduledScanText(s.scan)}`,
    `  created ${s.createdAt}, changed ${s.updatedAt}`,
    `  runs: ${s.runs} started, ${s.skippedTotal} skipped (a run due while the previous scan was still queued or running)`,
    `  last run: ${s.lastRun === null ? 'never' : `due ${s.lastRun.dueAt}, scan ${s.lastRun.scanId}`}`
  ]
  if (s.skipped.length > 0) {
    lines.push('  skipped runs (newest first):')
    for (const k of s.skipped.slice(0, RECENT_SCANS_SHOWN)) lines.push(`    ${k.dueAt} (scan ${k.inFlight} still in flight)`)
  }
  if (scans.length > 0) {
    lines.push(`Recent scans (${Math.min(scans.length, RECENT_SCANS_SHOWN)} of ${scans.length} among the ${RECENT_SCANS_SEARCHED} newest scans):`)
    for (const x of scans.slice(0, RECENT_SCANS_SHOWN)) lines.push(`  ${x.id}  ${x.status.padEnd(9)}  ${x.createdAt}${x.reason ? `  ${x.reason}` : ''}`)
  } else if (s.runs > 0) {
    lines.push(`None of its scans is among the ${RECENT_SCANS_SEARCHED} newest scans: vulnscan status ${s.lastRun?.scanId ?? ''}`)
  }
  return lines.join('\n')
}

const schedule: CommandModule = (program, kit) => {
  const group = program.command('schedule')
    .summary('scheduled scans: list, show, create, update, delete, enable, disable')
    .description('Scans run at each due time of a cron expression read in a time zone. A run due while the schedule\'s previous scan is still queued or running is skipped and recorded. Each run\'s scan carries scheduleId and has an id in the reserved namespace schedule.<schedule-id>.<due time in ms>.<tag>.')
  kit.hint(group, 'schedule needs one of: list, show, create, update, delete, enable, disable.')

  const list = group.command('list')
    .summary('list schedules with their next run, last run and its scan')
    .description('Lists schedules, newest first: the cron expression and time zone, what they scan, the next due time, the last run and the scan it started.')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  list.action(async (opts: { limit?: string, offset?: string }) => kit.run(list, async (ctx) => {
    const { data } = await api(ctx.client.GET('/app/schedule', { params: { query: paging(opts) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? (data.total === 0 ? 'No schedules: create one with vulnscan schedule create.' : 'No schedules on this page.') : `${schedulesTable(data.items)}\n${data.items.length} of ${data.total} schedules`)
    return 0
  }))

  const show = group.command('show')
    .summary('one schedule: its definition, runs, skipped runs and recent scans')
    .description(`Shows one schedule: what it scans, when, its next and last run, the runs it skipped, and the scans it started among the ${RECENT_SCANS_SEARCHED} newest scans.`)
    .argument('<schedule-id>')
  kit.hint(show, 'schedule show needs one schedule id (vulnscan schedule list shows them).')
  show.action(async (id: string) => kit.run(show, async (ctx) => {
    const { data: s } = await api(ctx.client.GET('/app/schedule/{id}', { params: { path: { id } } }), ctx.baseUrl)
    const scans = s.runs > 0 ? await recentScans(ctx, s.id) : []
    if (ctx.json) printJson(ctx.io, { schedule: s, scans })
    else print(ctx.io, detailText(s, scans))
    return 0
  }))

  const create = scanOptions(group.command('create')
    .summary('schedule a scan: targets as for vulnscan scan, plus --cron and --tz')
    .description('Creates a schedule that posts a scan of the targets at each due time of --cron (5 fields, or 6 with seconds first; @daily, @hourly … too) read in --tz. Targets are written as for vulnscan scan; the scan is checked now, with this key\'s scope, which every run keeps.')
    .argument('[target...]', 'what to scan: addresses, ranges, CIDR blocks or host names (may be left out with --target-tag)')
    .requiredOption('--cron <expression>', 'when to run, e.g. \'0 3 * * 1-5\' (quote it for the shell)')
    .option('--tz <zone>', 'IANA time zone the expression is read in, e.g. Europe/Paris (default: UTC)')
    .option('--name <text>', 'what the schedule is for'), { update: false })
    .option('--disabled', 'create it disabled (enable it later with vulnscan schedule enable)')
    .addHelpText('after', '\nExamples:\n  vulnscan schedule create 10.20.0.0/24 --cron \'0 3 * * 1-5\' --tz Europe/Paris --name nightly --template standard\n  vulnscan schedule create db.example.com --cron @hourly --ports 5432 --priority 4\n')
  kit.hint(create, 'schedule create needs at least one target and --cron, e.g. vulnscan schedule create 10.20.0.0/24 --cron \'0 3 * * *\'')
  create.action(async (targets: string[], opts: ScanFlags & { cron: string, tz?: string, name?: string, disabled?: boolean }) => kit.run(create, async (ctx) => {
    if (targets.length === 0 && (opts.targetTag ?? []).length === 0) throw usage('schedule create needs at least one target or --target-tag, e.g. vulnscan schedule create 10.20.0.0/24 --cron \'0 3 * * *\'')
    const body = {
      cron: opts.cron,
      ...(nonEmpty('tz', opts.tz) !== undefined ? { timezone: opts.tz } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      ...(opts.disabled === true ? { enabled: false } : {}),
      scan: scheduledScan(targets, typedScanFlags(create, opts))
    }
    const { data: s } = await api(ctx.client.POST('/app/schedule', { body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, s)
    else print(ctx.io, `Created ${summaryLine(s).replace(/^S/, 's')}\nSee its runs with: vulnscan schedule show ${s.id}`)
    return 0
  }))

  const update = scanOptions(group.command('update')
    .summary('change a schedule: its cron, time zone, name, or what it scans')
    .description('Changes the given fields; the run history stays. Targets given replace the scheduled targets; each scan option changes only itself, the rest of the scan stays.')
    .argument('<schedule-id>')
    .argument('[target...]', 'new targets (replacing the current ones)')
    .option('--cron <expression>', 'a new cron expression')
    .option('--tz <zone>', 'a new IANA time zone')
    .option('--name <text>', 'a new name'), { update: true })
    .addHelpText('after', '\nExamples:\n  vulnscan schedule update <schedule-id> --cron \'30 2 * * *\' --tz UTC\n  vulnscan schedule update <schedule-id> 10.20.0.0/24 10.30.0.0/24 --template full\n')
  kit.hint(update, 'schedule update needs one schedule id, e.g. vulnscan schedule update <schedule-id> --cron \'0 4 * * *\'')
  update.action(async (id: string, targets: string[], all: ScanFlags & { cron?: string, tz?: string, name?: string }) => kit.run(update, async (ctx) => {
    const opts = typedScanFlags(update, all)
    const scanChanged = targets.length > 0 || scanFlagsGiven(opts)
    if (!scanChanged && opts.cron === undefined && opts.tz === undefined && opts.name === undefined) {
      throw usage('schedule update needs something to change: --cron, --tz, --name, targets, or a scan option (--template, --ports, --priority, --udp, --udp-ports, --discovery, --tag, --target-tag); enable and disable are commands of their own.')
    }
    let scan: ScheduledScan | undefined
    if (scanChanged) {
      // Check the flags before asking the server, then lay them over the scan it runs now.
      scheduledScan([], { template: opts.template, priority: opts.priority }, { targets: [] })
      const { data: current } = await api(ctx.client.GET('/app/schedule/{id}', { params: { path: { id } } }), ctx.baseUrl)
      scan = scheduledScan(targets, opts, current.scan)
    }
    const body = {
      ...(nonEmpty('cron', opts.cron) !== undefined ? { cron: opts.cron } : {}),
      ...(nonEmpty('tz', opts.tz) !== undefined ? { timezone: opts.tz } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      ...(scan !== undefined ? { scan } : {})
    }
    const { data: s } = await api(ctx.client.PATCH('/app/schedule/{id}', { params: { path: { id } }, body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, s)
    else print(ctx.io, `${summaryLine(s)}\n  scans: ${scheduledScanText(s.scan)}`)
    return 0
  }))

  const del = group.command('delete')
    .summary('delete a schedule (the scans it started stay)')
    .description('Deletes a schedule: no further run starts; a scan already started goes on, and the scans it started keep their scheduleId.')
    .argument('<schedule-id>')
  kit.hint(del, 'schedule delete needs one schedule id.')
  del.action(async (id: string) => kit.run(del, async (ctx) => {
    await api(ctx.client.DELETE('/app/schedule/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, { deleted: id })
    else print(ctx.io, `Deleted schedule ${id}; the scans it started stay.`)
    return 0
  }))

  for (const [name, enabled] of [['enable', true], ['disable', false]] as const) {
    const cmd = group.command(name)
      .summary(enabled ? 'enable a schedule: its runs start again from the next due time' : 'disable a schedule: no run starts until it is enabled (a scan already started goes on)')
      .description(enabled
        ? 'Enables a schedule: runs start again from its next due time (due times missed while it was disabled are not made up).'
        : 'Disables a schedule: no run starts until it is enabled again; a scan already started goes on.')
      .argument('<schedule-id>')
    kit.hint(cmd, `schedule ${name} needs one schedule id.`)
    cmd.action(async (id: string) => kit.run(cmd, async (ctx) => {
      const { data: s } = await api(ctx.client.PATCH('/app/schedule/{id}', { params: { path: { id } }, body: { enabled } }), ctx.baseUrl)
      if (ctx.json) printJson(ctx.io, s)
      else print(ctx.io, summaryLine(s))
      return 0
    }))
  }
}

export default schedule
