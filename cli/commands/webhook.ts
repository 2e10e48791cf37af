// `vulnscan webhook list|show|create|update|delete|test|deliveries|retry`: where scan and finding events are posted
// (the infrastructure key or an admin key).
import { Option, type Command } from 'commander'
import pc from 'picocolors'
import { WEBHOOK_EVENTS, WEBHOOK_FORMATS } from '../../lib/vocabulary'
import { api, CliError, EXIT, oneOf, paging, print, printJson, usage } from '../context'
import { CONFIDENCES, deliveriesTable, webhookFilterText, webhooksTable, type Webhook, type WebhookDelivery } from '../output'
import type { CommandModule } from '../command'

type Filter = Webhook['filter']

/** The severities a webhook filter takes (the API's list: `none` lets every finding through, `unknown` is not one). */
const MIN_SEVERITIES = ['critical', 'high', 'medium', 'low', 'none'] as const satisfies ReadonlyArray<NonNullable<Filter['minSeverity']>>

/** `--event scan.failed,finding.new` or the option repeated. */
const eventOption = (description: string): Option => new Option('-e, --event <event>', description)
  .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')])

function events (given: string[] | undefined): Array<typeof WEBHOOK_EVENTS[number]> | undefined {
  if (given === undefined) return undefined
  if (given.length === 0) throw usage(`--event needs at least one of: ${WEBHOOK_EVENTS.join(', ')}`)
  return [...new Set(given.map((e) => oneOf('event', e, WEBHOOK_EVENTS) as typeof WEBHOOK_EVENTS[number]))]
}

function filterOptions (cmd: Command, { update }: { update: boolean }): Command {
  cmd.option('--min-severity <level>', `finding.new: only findings of this severity or worse: ${MIN_SEVERITIES.join(' | ')}`)
    .option('--kev-only', 'finding.new: only findings on CISA\'s Known Exploited Vulnerabilities list')
  if (update) cmd.option('--no-kev-only', 'finding.new: findings on the KEV list or not')
  cmd.option('--min-confidence <level>', `finding.new: only findings of this confidence or higher: ${CONFIDENCES.join(' | ')}, or a confidence score 0-100 to reach`)
  if (update) cmd.option('--clear-filter', 'start from an empty filter (every new finding) before the filter options above')
  return cmd.option('--format <format>', `${WEBHOOK_FORMATS.join(' | ')}: the WebhookEvent JSON body, or a Slack-compatible {"text": …} message${update ? '' : ' (default: json)'}`)
    .option('--description <text>', 'what the webhook is for')
}

function scoreFlag (text: string): number {
  const n = Number(text.trim())
  if (n > 100) throw usage(`--min-confidence must be one of ${CONFIDENCES.join(', ')} or a score from 0 to 100 (got '${text}').`)
  return n
}

interface FilterFlags { minSeverity?: string, kevOnly?: boolean, minConfidence?: string, clearFilter?: boolean }

/** The filter from the flags, laid over `base`: PATCH replaces the filter whole, so one flag must not drop the others. */
function filterFrom (flags: FilterFlags, base: Filter = {}): Filter | undefined {
  const minSeverity = oneOf('min-severity', flags.minSeverity, MIN_SEVERITIES)
  const minConfidence = flags.minConfidence !== undefined && /^\d{1,3}$/.test(flags.minConfidence.trim())
    ? scoreFlag(flags.minConfidence)
    : oneOf('min-confidence', flags.minConfidence, CONFIDENCES)
  if (minSeverity === undefined && minConfidence === undefined && flags.kevOnly === undefined && flags.clearFilter !== true) return undefined
  const filter: Filter = { ...(flags.clearFilter === true ? {} : base) }
  if (minSeverity !== undefined) filter.minSeverity = minSeverity
  if (minConfidence !== undefined) filter.minConfidence = minConfidence
  if (flags.kevOnly === true) filter.kevOnly = true
  if (flags.kevOnly === false) delete filter.kevOnly
  return filter
}

function describe (w: Webhook): string {
  const filter = webhookFilterText(w.filter)
  return `Webhook ${w.id} → ${w.url}: ${w.events.join(', ')}${filter !== '' ? ` (finding.new: ${filter})` : ''}, ${w.format}, ${w.enabled ? pc.green('enabled') : pc.yellow('disabled')}${w.description !== '' ? `; ${w.description}` : ''}`
}

function deliveryText (d: Omit<WebhookDelivery, 'id'> & { id?: string }): string {
  return d.ok
    ? `answered ${String(d.statusCode)} in ${d.durationMs} ms`
    : `failed after ${d.durationMs} ms: ${d.error ?? (d.statusCode !== null ? `answered ${d.statusCode}` : 'no answer')}`
}

const LATEST_DELIVERIES_SHOWN = 5

const webhook: CommandModule = (program, kit) => {
  const group = program.command('webhook')
    .summary('webhooks: list, show, create, update, delete, test, deliveries, retry')
    .description('Webhooks post scan.completed, scan.failed, scan.cancelled and finding.new events, signed with HMAC-SHA256 (X-Vulnscan-Signature-256) with a secret shown once, at creation. Needs the infrastructure key or an admin key.')
  kit.hint(group, 'webhook needs one of: list, show, create, update, delete, test, deliveries, retry.')

  const list = group.command('list')
    .summary('list webhooks (never their secrets)')
    .description('Lists webhooks, newest first: URL, events, filter, format; never their secrets.')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  list.action(async (opts: { limit?: string, offset?: string }) => kit.run(list, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/webhook', { params: { query: paging(opts) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? (data.total === 0 ? 'No webhooks: create one with vulnscan webhook create.' : 'No webhooks on this page.') : `${webhooksTable(data.items)}\n${data.items.length} of ${data.total} webhooks`)
    return 0
  }))

  const show = group.command('show')
    .summary('one webhook and its latest deliveries')
    .description(`Shows one webhook (never its secret) and its latest ${LATEST_DELIVERIES_SHOWN} delivery attempts.`)
    .argument('<webhook-id>')
  kit.hint(show, 'webhook show needs one webhook id (vulnscan webhook list shows them).')
  show.action(async (id: string) => kit.run(show, async (ctx) => {
    const { data: w } = await api(ctx.client.GET('/admin/webhook/{id}', { params: { path: { id } } }), ctx.baseUrl)
    const { data: log } = await api(ctx.client.GET('/admin/webhook/{id}/deliveries', { params: { path: { id }, query: { limit: LATEST_DELIVERIES_SHOWN } } }), ctx.baseUrl)
    if (ctx.json) {
      printJson(ctx.io, { webhook: w, deliveries: log.items })
      return 0
    }
    print(ctx.io, `${describe(w)}\n  created ${w.createdAt}, changed ${w.updatedAt}`)
    print(ctx.io, log.items.length === 0 ? 'No deliveries yet (try vulnscan webhook test).' : `${deliveriesTable(log.items)}\n${log.items.length} of ${log.total} delivery attempts (vulnscan webhook deliveries ${w.id} lists them all)`)
    return 0
  }))

  const create = filterOptions(group.command('create')
    .summary('create a webhook (its signing secret is shown once)')
    .description('Creates a webhook posting the --event events to <url>. Private, loopback and other special addresses are refused unless the server\'s WEBHOOK_ALLOW names them. The signing secret is printed once and never again: store it now.')
    .argument('<url>', 'http or https URL the events are posted to (not --url, which is the service\'s address)')
    .addOption(eventOption(`${WEBHOOK_EVENTS.join(' | ')}; comma-separated or repeated (required)`)), { update: false })
    .option('--disabled', 'create it disabled (vulnscan webhook update <id> --enable later)')
    .addHelpText('after', '\nExamples:\n  vulnscan webhook create https://hooks.example.com/vulnscan --event scan.failed --event finding.new --min-severity high\n  vulnscan webhook create https://hooks.slack.com/services/T000/B000/XXXX --event finding.new --kev-only --format slack\n')
  kit.hint(create, 'webhook create needs the URL to post to, e.g. vulnscan webhook create https://hooks.example.com/vulnscan --event scan.failed (--url is the service\'s address, not the webhook\'s)')
  create.action(async (url: string, opts: FilterFlags & { event?: string[], format?: string, description?: string, disabled?: boolean }) => kit.run(create, async (ctx) => {
    const chosen = events(opts.event)
    if (chosen === undefined) throw usage(`webhook create needs --event: ${WEBHOOK_EVENTS.join(', ')} (comma-separated or repeated).`)
    const format = oneOf('format', opts.format, WEBHOOK_FORMATS)
    const filter = filterFrom(opts)
    const body = {
      url,
      events: chosen,
      ...(filter !== undefined ? { filter } : {}),
      ...(format !== undefined ? { format } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.disabled === true ? { enabled: false } : {})
    }
    const { data: w } = await api(ctx.client.POST('/admin/webhook', { body }), ctx.baseUrl)
    if (ctx.json) {
      printJson(ctx.io, w)
      // The JSON goes to a file or a pipe; the warning to the person who runs it.
      ctx.io.stderr.write('The secret in this output is shown only once: store it now.\n')
    } else {
      print(ctx.io, `Created ${describe(w).replace(/^W/, 'w')}.\nIts signing secret is shown only now: store it, it cannot be read again.\n\n  ${w.secret}\n\nCheck it with: vulnscan webhook test ${w.id}`)
    }
    return 0
  }))

  const update = filterOptions(group.command('update')
    .summary('change a webhook: URL, events, filter, format, enabled')
    .description('Changes the given fields; the secret stays. The filter options change only themselves (--clear-filter starts from none); --event replaces the events.')
    .argument('<webhook-id>')
    .option('--webhook-url <url>', 'a new URL to post to (checked as at creation)')
    .addOption(eventOption(`the new events: ${WEBHOOK_EVENTS.join(' | ')}; comma-separated or repeated`)), { update: true })
    .addOption(new Option('--enable', 'deliver events again').conflicts('disable'))
    .addOption(new Option('--disable', 'stop delivering events (the webhook stays)'))
    .addHelpText('after', '\nExamples:\n  vulnscan webhook update <webhook-id> --min-severity critical --no-kev-only\n  vulnscan webhook update <webhook-id> --event scan.completed,scan.failed --disable\n')
  kit.hint(update, 'webhook update needs one webhook id, e.g. vulnscan webhook update <webhook-id> --disable')
  update.action(async (id: string, opts: FilterFlags & { webhookUrl?: string, event?: string[], format?: string, description?: string, enable?: boolean, disable?: boolean }) => kit.run(update, async (ctx) => {
    const chosen = events(opts.event)
    const format = oneOf('format', opts.format, WEBHOOK_FORMATS)
    // Checked before the filter needs the current webhook.
    filterFrom({ ...opts, kevOnly: undefined, clearFilter: undefined })
    const filterGiven = opts.minSeverity !== undefined || opts.minConfidence !== undefined || opts.kevOnly !== undefined || opts.clearFilter === true
    const enabled = opts.enable === true ? true : opts.disable === true ? false : undefined
    if (!filterGiven && chosen === undefined && format === undefined && opts.webhookUrl === undefined && opts.description === undefined && enabled === undefined) {
      throw usage('webhook update needs something to change: --webhook-url, --event, --min-severity, --kev-only, --min-confidence, --clear-filter, --format, --description, --enable or --disable.')
    }
    const base = filterGiven && opts.clearFilter !== true ? (await api(ctx.client.GET('/admin/webhook/{id}', { params: { path: { id } } }), ctx.baseUrl)).data.filter : {}
    const filter = filterGiven ? filterFrom(opts, base) : undefined
    const body = {
      ...(opts.webhookUrl !== undefined ? { url: opts.webhookUrl } : {}),
      ...(chosen !== undefined ? { events: chosen } : {}),
      ...(filter !== undefined ? { filter } : {}),
      ...(format !== undefined ? { format } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(enabled !== undefined ? { enabled } : {})
    }
    const { data: w } = await api(ctx.client.PATCH('/admin/webhook/{id}', { params: { path: { id } }, body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, w)
    else print(ctx.io, `${describe(w)}.`)
    return 0
  }))

  const del = group.command('delete')
    .summary('delete a webhook with its delivery log')
    .description('Deletes a webhook with its delivery log; deliveries still queued are dropped.')
    .argument('<webhook-id>')
  kit.hint(del, 'webhook delete needs one webhook id.')
  del.action(async (id: string) => kit.run(del, async (ctx) => {
    await api(ctx.client.DELETE('/admin/webhook/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, { deleted: id })
    else print(ctx.io, `Deleted webhook ${id} and its delivery log.`)
    return 0
  }))

  const test = group.command('test')
    .summary('send a signed test delivery now (exit 3 when it fails)')
    .description('Posts a signed webhook.test event to the webhook now, once, in its format, and says how it went; the attempt is in the delivery log. Exits 3 when the receiver did not answer 2xx or the address was refused.')
    .argument('<webhook-id>')
  kit.hint(test, 'webhook test needs one webhook id.')
  test.action(async (id: string) => kit.run(test, async (ctx) => {
    const { data: d } = await api(ctx.client.POST('/admin/webhook/{id}/test', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, d)
    if (!d.ok) throw new CliError(`Test delivery to webhook ${id} ${deliveryText(d)}`, EXIT.API)
    if (!ctx.json) print(ctx.io, `Test delivery to webhook ${id} ${deliveryText(d)} (event ${d.eventId}).`)
    return 0
  }))

  const deliveries = group.command('deliveries')
    .summary('a webhook\'s delivery log, newest first')
    .description('Lists a webhook\'s delivery attempts, newest first (the server keeps the latest 200): time, event, attempt, status or error, duration, and whether another attempt follows.')
    .argument('<webhook-id>')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
    .option('--failed', 'only the deliveries that failed for good, kept for `vulnscan webhook retry`')
  kit.hint(deliveries, 'webhook deliveries needs one webhook id.')
  deliveries.action(async (id: string, opts: { limit?: string, offset?: string, failed?: boolean }) => kit.run(deliveries, async (ctx) => {
    const query = { ...paging(opts), ...(opts.failed === true ? { failed: true } : {}) }
    const { data } = await api(ctx.client.GET('/admin/webhook/{id}/deliveries', { params: { path: { id }, query } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else if (opts.failed === true) print(ctx.io, data.items.length === 0 ? 'No failed deliveries are kept.' : `${deliveriesTable(data.items)}\n${data.total} failed deliveries kept (vulnscan webhook retry ${id} <event id> sends one again)`)
    else print(ctx.io, data.items.length === 0 ? 'No deliveries yet (try vulnscan webhook test).' : `${deliveriesTable(data.items)}\n${data.items.length} of ${data.total} delivery attempts`)
    return 0
  }))

  const retry = group.command('retry')
    .summary('send a delivery that failed for good again')
    .description('Queues a delivery that failed for good (vulnscan webhook deliveries --failed lists them) again, with the same body and delivery id.')
    .argument('<webhook-id>')
    .argument('<delivery-id>', 'the event id of the failed delivery')
  kit.hint(retry, 'webhook retry needs a webhook id and a delivery id.')
  retry.action(async (id: string, delivery: string) => kit.run(retry, async (ctx) => {
    const { data } = await api(ctx.client.POST('/admin/webhook/{id}/deliveries/{delivery}/retry', { params: { path: { id, delivery } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Queued ${data.event} delivery ${data.delivery} to webhook ${id} again.`)
    return 0
  }))
}

export default webhook
