// `vulnscan`, the command-line client of the REST API, built on the typed SDK (sdk/).
// Exit status: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error.
import { parseArgs } from 'node:util'
import { Presets, SingleBar } from 'cli-progress'
import pc from 'picocolors'
import { createVulnscanClient, type operations, type VulnscanClient } from '../sdk'
import { inferTarget } from '../lib/scanner/targets'
import {
  DEFAULT_FINDING_SORT, DEFAULT_PRIORITY, DEFAULT_TEMPLATE, FINDING_SORTS, FINDING_STATUSES, GATE_STATUSES, PRIORITY_MAX, PRIORITY_MIN,
  SCAN_STATUSES, TEMPLATE_NAMES
} from '../lib/vocabulary'
import {
  colourSeverity, dataSourcesText, findingsTable, hostsTable, keysTable, portsTable, SEVERITIES, severityCounts, severityRank,
  type Finding, type Scan, type Severity
} from './output'

export const EXIT = { OK: 0, FINDINGS: 1, USAGE: 2, API: 3 } as const

export const USAGE = `Usage: vulnscan <command> [options]

Commands:
  scan <target…>            post a scan; targets are addresses (10.0.0.5, ::1), ranges
                            (10.0.0.1-10.0.0.20), CIDR blocks (192.168.1.0/28) or host names
      -t, --template <name>   ${TEMPLATE_NAMES.join(' | ')} (default: ${DEFAULT_TEMPLATE})
      -p, --ports <list>      ports instead of the template's, e.g. 22,80,8000-8100
      --priority <${PRIORITY_MIN}-${PRIORITY_MAX}>        ${PRIORITY_MAX} is the most urgent (default: ${DEFAULT_PRIORITY})
      --id <id>               your own scan id (re-posting the same id and body is a no-op)
      -w, --wait              follow the scan with a progress bar, then print its findings
      --timeout <seconds>     with --wait: give up after this long (exit 3)
  status <scan-id>          show a scan (add --wait to follow it to the end)
  scans [--status <state>]  list scans, newest first
  hosts                     list hosts
  host <address>            one host: its ports and its findings
  vulns                     list findings (open, fixed, reopened, accepted and false positives)
      --severity <level>      only this severity: critical | high | medium | low | none | unknown
      --kev                   only CVEs in CISA's Known Exploited Vulnerabilities catalogue
      --min-epss <0-1>        only findings whose EPSS score is at least this
      --status <status>       only this status: ${FINDING_STATUSES.join(' | ')}
                              (fixed_by_distribution and potential are listed only when asked)
      --sort <key>            ${FINDING_SORTS.join(' | ')} (default: ${DEFAULT_FINDING_SORT}); risk: KEV
                              (ransomware use first), then EPSS, then CVSS
      --host <address>        only findings on this host
      --csv                   the server's CSV export instead of a table (every row unless --limit)
  cve <CVE-id>              a CVE from the local NVD index and the hosts it affects
  keys create --label <l> [--expires <30d|12h|2w>]   create a dynamic API key (shown once)
  keys list                 list dynamic API keys
  keys revoke <id>          revoke a dynamic API key
  health                    service health (needs no key)

Options for every command:
  --url <url>               service URL (default: $VULNSCAN_URL, else http://127.0.0.1:3000)
  --key <key>               API key (default: $VULNSCAN_API_KEY)
  --json                    print the API's JSON instead of tables
  --fail-on <level>         exit 1 when a listed finding (${GATE_STATUSES.join(' or ')}) is at or above
                            critical | high | medium | low; findings without a CVSS score
                            (severity none or unknown), backported fixes and potential
                            findings never trigger it; a waited-for scan with products the
                            NVD could not check exits 3, never 0
  --limit <n>, --offset <n> paging for lists (default: 50, 0)
  --request-timeout <s>     give up on a request the server does not answer (default: 60)
  -h, --help                show this text

Exit status: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error.`

/** An error that ends the CLI with a message on stderr and a given exit status. */
export class CliError extends Error {
  constructor (message: string, readonly exitCode: number) {
    super(message)
  }
}

const usage = (message: string): CliError => new CliError(`${message}\nRun 'vulnscan --help' for usage.`, EXIT.USAGE)

const OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  'fail-on': { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  template: { type: 'string', short: 't' },
  ports: { type: 'string', short: 'p' },
  priority: { type: 'string' },
  id: { type: 'string' },
  wait: { type: 'boolean', short: 'w' },
  timeout: { type: 'string' },
  status: { type: 'string' },
  severity: { type: 'string' },
  kev: { type: 'boolean' },
  'min-epss': { type: 'string' },
  sort: { type: 'string' },
  host: { type: 'string' },
  csv: { type: 'boolean' },
  label: { type: 'string' },
  expires: { type: 'string' },
  'request-timeout': { type: 'string' }
} as const

type OptionName = keyof typeof OPTIONS
type Values = { [K in OptionName]?: typeof OPTIONS[K]['type'] extends 'boolean' ? boolean : string }

const GLOBAL: OptionName[] = ['url', 'key', 'json', 'fail-on', 'help', 'request-timeout']
// Which options each command takes besides the global ones; anything else is a usage error, not ignored.
const COMMAND_OPTIONS: Record<string, OptionName[]> = {
  scan: ['template', 'ports', 'priority', 'id', 'wait', 'timeout'],
  status: ['wait', 'timeout'],
  scans: ['status', 'limit', 'offset'],
  hosts: ['limit', 'offset'],
  host: [],
  vulns: ['severity', 'kev', 'min-epss', 'status', 'sort', 'host', 'csv', 'limit', 'offset'],
  cve: [],
  keys: ['label', 'expires', 'limit', 'offset'],
  health: []
}

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  env: Record<string, string | undefined>
}

function integer (name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw usage(`--${name} must be an integer from ${min} to ${max}, not '${value}'`)
  return Number(value)
}

function oneOf<T extends string> (name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if (!allowed.includes(value as T)) throw usage(`--${name} must be one of: ${allowed.join(', ')} (got '${value}')`)
  return value as T
}

interface ApiResult<T> { data?: T, error?: unknown, response: Response }

/** A fetch that gives up when the answer's headers take longer than `ms`: a server that accepts and never answers must not hang a CI job. */
function withDeadline (ms: number): typeof globalThis.fetch {
  return async (input, init) => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms)
    try {
      return await globalThis.fetch(new Request(input as Request, { ...init, signal: controller.signal }))
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Awaits an SDK call and turns every failure into a CliError with a message a person can act on. */
async function api<T> (call: Promise<ApiResult<T>>, baseUrl: string): Promise<{ data: T, response: Response }> {
  let result: ApiResult<T>
  try {
    result = await call
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw new CliError(`vulnscan at ${baseUrl} did not answer within the request timeout`, EXIT.API)
    const cause = (err as { cause?: { code?: string, message?: string } }).cause
    const why = cause?.code ?? cause?.message ?? (err as Error).message
    throw new CliError(`Cannot reach vulnscan at ${baseUrl}: ${why}`, EXIT.API)
  }
  const { response } = result
  if (response.ok) return { data: result.data as T, response }
  const body = result.error as { error?: unknown } | undefined
  const text = typeof body?.error === 'string' ? body.error : `${response.status} ${response.statusText}`
  if (response.status === 401) {
    throw new CliError(`The API key was refused (401 ${text}). Pass a valid key with --key or VULNSCAN_API_KEY.`, EXIT.API)
  }
  // The server says what is wrong with what was typed: a usage error, with the server's own words.
  if (response.status === 400) throw new CliError(`Rejected: ${text}`, EXIT.USAGE)
  throw new CliError(`vulnscan answered ${response.status}: ${text}`, EXIT.API)
}

function print (io: Io, text: string): void {
  io.stdout.write(text.endsWith('\n') ? text : text + '\n')
}

function printJson (io: Io, value: unknown): void {
  print(io, JSON.stringify(value, null, 2))
}

/** The findings that make --fail-on trip: open or reopened (not fixed, backported, potential, accepted or false positives). */
function failing (findings: Finding[], failOn: Severity | undefined): Finding[] {
  if (failOn === undefined) return []
  const floor = severityRank(failOn)
  return findings.filter((f) => GATE_STATUSES.includes(f.status) && severityRank(f.severity) >= floor)
}

/** An EPSS threshold from the command line: a probability from 0 to 1. */
function probability (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(value) || !Number.isFinite(n)) throw usage(`--${name} must be a number from 0 to 1, not '${value}'`)
  return n
}

function verdict (io: Io, findings: Finding[], failOn: Severity | undefined, json: boolean): number {
  const bad = failing(findings, failOn)
  if (bad.length === 0) return EXIT.OK
  if (!json) io.stderr.write(pc.red(`${bad.length} finding${bad.length === 1 ? '' : 's'} at or above ${failOn}: failing (exit 1).\n`))
  return EXIT.FINDINGS
}

/** GET /vulnerability answers JSON or CSV by Accept; asked without text/csv it must be JSON. */
function jsonPage<T extends object> ({ data }: { data: T | string }): T {
  if (typeof data === 'string') throw new CliError('vulnscan answered CSV where JSON was asked for', EXIT.API)
  return data
}

/** Every page of a list, for the totals --fail-on needs (bounded: at most `cap` items). */
type FindingQuery = Omit<NonNullable<operations['listFindings']['parameters']['query']>, 'limit' | 'offset'>

async function allFindings (client: VulnscanClient, baseUrl: string, query: FindingQuery, cap = 100_000): Promise<{ items: Finding[], total: number }> {
  const items: Finding[] = []
  let total = 0
  for (let offset = 0; offset < cap; offset += 500) {
    const data = jsonPage(await api(client.GET('/vulnerability', { params: { query: { ...query, limit: 500, offset } } }), baseUrl))
    items.push(...data.items)
    total = data.total
    if (data.items.length < 500 || items.length >= total) break
  }
  return { items, total }
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled'])

/** Follows a scan until it ends: a progress bar on a terminal, a line per state change otherwise. */
async function follow (io: Io, client: VulnscanClient, baseUrl: string, id: string, timeoutSeconds: number | undefined, quiet: boolean): Promise<Scan> {
  const deadline = timeoutSeconds === undefined ? Infinity : Date.now() + timeoutSeconds * 1000
  const bar = !quiet && io.stderr.isTTY === true
    ? new SingleBar({ stream: io.stderr, format: `${id} [{bar}] {percentage}% | {status} | hosts {hostsDone}/{hostsTotal} | ports {portsDone}/{portsTotal}`, hideCursor: true, clearOnComplete: false }, Presets.shades_classic)
    : null
  let lastStatus = ''
  try {
    bar?.start(100, 0, { status: 'queued', hostsDone: 0, hostsTotal: '?', portsDone: 0, portsTotal: '?' })
    for (;;) {
      const { data: scan } = await api(client.GET('/app/scan/{id}', { params: { path: { id } } }), baseUrl)
      const p = scan.progress
      bar?.update(Math.floor(p.percent), { status: scan.status, hostsDone: p.hostsDone, hostsTotal: p.hostsTotal, portsDone: p.portsDone, portsTotal: p.portsTotal })
      if (bar === null && !quiet && scan.status !== lastStatus) io.stderr.write(`scan ${id}: ${scan.status}\n`)
      lastStatus = scan.status
      if (TERMINAL.has(scan.status)) return scan
      if (Date.now() >= deadline) throw new CliError(`Scan ${id} did not finish within ${timeoutSeconds} s (it is still ${scan.status}; follow it with 'vulnscan status ${id} --wait')`, EXIT.API)
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  } finally {
    bar?.stop()
  }
}

async function finishScan (io: Io, client: VulnscanClient, baseUrl: string, scan: Scan, values: Values, failOn: Severity | undefined): Promise<number> {
  if (scan.status !== 'completed') {
    if (values.json) printJson(io, { scan })
    throw new CliError(`Scan ${scan.id} ${scan.status}${scan.reason ? `: ${scan.reason}` : ''}`, EXIT.API)
  }
  // Findings are kept per host and port across scans; this scan's are those it saw last.
  const items = (await allFindings(client, baseUrl, {})).items.filter((f) => f.lastScanId === scan.id)
  if (values.json) {
    printJson(io, { scan, findings: items })
  } else {
    const s = scan.summary
    if (s) print(io, `Scan ${scan.id} completed: ${s.hostsUp} host${s.hostsUp === 1 ? '' : 's'} up, ${s.openPorts} open port${s.openPorts === 1 ? '' : 's'}.`)
    if (s && s.uncheckedProducts.length > 0) print(io, pc.yellow(`Not checked against the NVD (unreachable): ${s.uncheckedProducts.join(', ')}`))
    // What the scan matched but does not count: backported fixes and products shown without a version.
    for (const [status, what] of [['fixed_by_distribution', 'fixed by the distribution (backported)'], ['potential', 'potential (product seen without a version)']] as const) {
      const n = (await allFindings(client, baseUrl, { status })).items.filter((f) => f.lastScanId === scan.id).length
      if (n > 0) print(io, pc.dim(`${n} more CVE${n === 1 ? '' : 's'} ${what}, not counted: vulnscan vulns --status ${status}`))
    }
    if (items.length === 0) print(io, 'No findings.')
    else print(io, `${findingsTable(items)}\n${items.length} finding${items.length === 1 ? '' : 's'}: ${severityCounts(items)}`)
  }
  const result = verdict(io, items, failOn, values.json === true)
  // A gate must not pass what it could not check: with the NVD unreachable, "no findings" proves nothing.
  if (result === EXIT.OK && failOn !== undefined && scan.summary !== undefined && scan.summary.uncheckedProducts.length > 0) {
    throw new CliError(`--fail-on ${failOn} cannot pass scan ${scan.id}: ${scan.summary.uncheckedProducts.length} product(s) could not be checked against the NVD (${scan.summary.uncheckedProducts.join(', ')}). Check the NVD settings and re-run.`, EXIT.API)
  }
  return result
}

export async function run (argv: string[], io: Io): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (err) {
    throw usage((err as Error).message)
  }
  const values = parsed.values as Values
  const [command, ...args] = parsed.positionals
  if (values.help === true) {
    print(io, USAGE)
    return EXIT.OK
  }
  if (command === undefined) throw usage('No command given.')
  const allowed = COMMAND_OPTIONS[command]
  if (allowed === undefined) throw usage(`Unknown command '${command}'.`)
  for (const name of Object.keys(values) as OptionName[]) {
    if (!GLOBAL.includes(name) && !allowed.includes(name)) throw usage(`'${command}' does not take --${name}.`)
  }

  const baseUrl = (values.url ?? io.env.VULNSCAN_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '')
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) throw usage(`--url must be an http:// or https:// URL, not '${baseUrl}'`)
  const apiKey = values.key ?? io.env.VULNSCAN_API_KEY
  if (command !== 'health' && (apiKey === undefined || apiKey === '')) throw usage('No API key: pass --key <key> or set VULNSCAN_API_KEY.')
  const failOn = oneOf('fail-on', values['fail-on'], SEVERITIES)
  const limit = integer('limit', values.limit, 1, 500)
  const offset = integer('offset', values.offset, 0, Number.MAX_SAFE_INTEGER)
  const requestTimeout = integer('request-timeout', values['request-timeout'], 1, 3600) ?? 60
  const client = createVulnscanClient({ baseUrl, apiKey, fetch: withDeadline(requestTimeout * 1000) })
  const json = values.json === true

  switch (command) {
    case 'health': {
      if (args.length > 0) throw usage('health takes no arguments.')
      let result
      try {
        result = await client.GET('/health')
      } catch (err) {
        if ((err as Error).name === 'TimeoutError') throw new CliError(`vulnscan at ${baseUrl} did not answer within the request timeout`, EXIT.API)
        throw new CliError(`Cannot reach vulnscan at ${baseUrl}: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`, EXIT.API)
      }
      // 503 is a documented answer here (degraded), so it is shown, then reported through the exit status.
      const health = result.data ?? (result.response.status === 503 ? result.error as unknown as typeof result.data : undefined)
      if (health === undefined) throw new CliError(`vulnscan answered ${result.response.status} on /health`, EXIT.API)
      if (json) printJson(io, health)
      else {
        const nvd = health.nvd ? `; NVD index: ${health.nvd.cves} CVEs, last sync ${health.nvd.lastSync ?? 'never'}` : ''
        print(io, `${health.status === 'ok' ? pc.green('ok') : pc.red(health.status)} (version ${health.version}; store ${health.checks.store.backend}: ${health.checks.store.status}; queue ${health.checks.queue.backend}: ${health.checks.queue.status}${nvd})`)
        if (health.dataSources) print(io, dataSourcesText(health.dataSources))
      }
      return health.status === 'ok' ? EXIT.OK : EXIT.API
    }

    case 'scan': {
      if (args.length === 0) throw usage('scan needs at least one target, e.g. vulnscan scan 127.0.0.1')
      const template = oneOf('template', values.template, TEMPLATE_NAMES)
      const priority = integer('priority', values.priority, PRIORITY_MIN, PRIORITY_MAX)
      const timeout = integer('timeout', values.timeout, 1, 7 * 24 * 3600)
      if (timeout !== undefined && values.wait !== true) throw usage('--timeout only applies with --wait.')
      const options = template !== undefined || values.ports !== undefined ? { ...(template ? { template } : {}), ...(values.ports ? { ports: values.ports } : {}) } : undefined
      const body = {
        ...(values.id !== undefined ? { id: values.id } : {}),
        targets: args.map((a) => inferTarget(a)),
        ...(options ? { options } : {}),
        ...(priority !== undefined ? { priority } : {})
      }
      const { data: ack } = await api(client.POST('/app/scan', { body }), baseUrl)
      if (values.wait !== true) {
        if (json) printJson(io, ack)
        else print(io, `Scan ${ack.id} queued. Follow it with: vulnscan status ${ack.id} --wait`)
        return EXIT.OK
      }
      if (!json) io.stderr.write(`Scan ${ack.id} queued.\n`)
      const scan = await follow(io, client, baseUrl, ack.id, timeout, json)
      return await finishScan(io, client, baseUrl, scan, values, failOn)
    }

    case 'status': {
      if (args.length !== 1) throw usage('status needs one scan id.')
      const timeout = integer('timeout', values.timeout, 1, 7 * 24 * 3600)
      if (values.wait === true) {
        const scan = await follow(io, client, baseUrl, args[0], timeout, json)
        return await finishScan(io, client, baseUrl, scan, values, failOn)
      }
      const { data: scan } = await api(client.GET('/app/scan/{id}', { params: { path: { id: args[0] } } }), baseUrl)
      if (json) printJson(io, scan)
      else print(io, `Scan ${scan.id}: ${scan.status}, ${scan.progress.percent}% (hosts ${scan.progress.hostsDone}/${scan.progress.hostsTotal}, ports ${scan.progress.portsDone}/${scan.progress.portsTotal})${scan.reason ? `; ${scan.reason}` : ''}`)
      return EXIT.OK
    }

    case 'scans': {
      if (args.length > 0) throw usage('scans takes no arguments.')
      const status = oneOf('status', values.status, SCAN_STATUSES)
      const { data } = await api(client.GET('/app/scan', { params: { query: { status, limit, offset } } }), baseUrl)
      if (json) printJson(io, data)
      else {
        for (const s of data.items) print(io, `${s.id}  ${s.status.padEnd(9)}  ${String(s.progress.percent).padStart(3)}%  ${s.template.padEnd(9)}  p${s.priority}  ${s.createdAt}  ${s.targets.map((t) => t.value).join(' ')}`)
        print(io, `${data.items.length} of ${data.total} scans`)
      }
      return EXIT.OK
    }

    case 'hosts': {
      if (args.length > 0) throw usage('hosts takes no arguments.')
      const { data } = await api(client.GET('/host', { params: { query: { limit, offset } } }), baseUrl)
      if (json) printJson(io, data)
      else print(io, data.items.length === 0 ? 'No hosts yet: run a scan first.' : `${hostsTable(data.items)}\n${data.items.length} of ${data.total} hosts`)
      return EXIT.OK
    }

    case 'host': {
      if (args.length !== 1) throw usage('host needs one address, e.g. vulnscan host 127.0.0.1')
      const address = args[0]
      const { data: host } = await api(client.GET('/host/{address}', { params: { path: { address } } }), baseUrl)
      const { data: page } = await api(client.GET('/host/{address}/vulnerability', { params: { path: { address }, query: { limit: 500 } } }), baseUrl)
      if (json) {
        printJson(io, { host, findings: page.items })
      } else {
        print(io, `${pc.bold(host.address)}${host.hostnames.length > 0 ? ` (${host.hostnames.join(', ')})` : ''}: ${host.up ? pc.green('up') : pc.red('down')}, last seen ${host.lastSeen} by scan ${host.lastScanId}`)
        print(io, portsTable(host))
        print(io, page.items.length === 0 ? 'No findings.' : `${findingsTable(page.items)}\n${page.items.length} of ${page.total} findings: ${severityCounts(page.items)}`)
      }
      return verdict(io, page.items, failOn, json)
    }

    case 'vulns': {
      if (args.length > 0) throw usage('vulns takes no arguments; filter with --severity, --kev, --min-epss, --status or --host.')
      const severity = oneOf('severity', values.severity, [...SEVERITIES, 'none', 'unknown'] as const)
      const status = oneOf('status', values.status, FINDING_STATUSES)
      const sort = oneOf('sort', values.sort, FINDING_SORTS)
      const minEpss = probability('min-epss', values['min-epss'])
      const query = {
        ...(severity ? { severity } : {}),
        ...(values.kev === true ? { kev: true } : {}),
        ...(minEpss !== undefined ? { minEpss } : {}),
        ...(status ? { status } : {}),
        ...(sort ? { sort } : {}),
        ...(values.host ? { host: values.host } : {})
      }
      // --fail-on judges every matching finding, not just the page shown.
      const judged = failOn === undefined ? [] : (await allFindings(client, baseUrl, query)).items
      if (values.csv === true) {
        if (json) throw usage('--csv and --json exclude each other.')
        // The server writes the CSV (every matching row unless --limit is given); it is passed on untouched.
        const { data } = await api(client.GET('/vulnerability', { params: { query: { ...query, limit, offset } }, headers: { accept: 'text/csv' }, parseAs: 'text' }), baseUrl)
        io.stdout.write(data)
        return verdict(io, judged, failOn, true)
      }
      const shown = jsonPage(await api(client.GET('/vulnerability', { params: { query: { ...query, limit, offset } } }), baseUrl))
      if (json) printJson(io, shown)
      else print(io, shown.items.length === 0 ? 'No findings.' : `${findingsTable(shown.items)}\n${shown.items.length} of ${shown.total} findings: ${severityCounts(shown.items)}`)
      return verdict(io, judged, failOn, json)
    }

    case 'cve': {
      if (args.length !== 1) throw usage('cve needs one CVE id, e.g. vulnscan cve CVE-2023-28366')
      const { data: cve } = await api(client.GET('/vulnerability/{cveId}', { params: { path: { cveId: args[0] } } }), baseUrl)
      if (json) {
        printJson(io, cve)
        return EXIT.OK
      }
      const score = cve.cvss === null ? pc.dim('no CVSS score') : `CVSS ${cve.cvss.toFixed(1)} (${cve.cvssVersion ?? '?'})`
      print(io, `${pc.bold(cve.id)}  ${colourSeverity(cve.severity)}  ${score}${cve.kev ? `  ${pc.bold(pc.red('KEV'))} since ${cve.kev.dateAdded}` : ''}`)
      print(io, `${cve.vulnStatus}; published ${cve.published}, last modified ${cve.lastModified}`)
      if (cve.cvssVector) print(io, cve.cvssVector)
      if (cve.cwes.length > 0) print(io, `Weaknesses: ${cve.cwes.join(', ')}`)
      print(io, `\n${cve.description}\n`)
      if (cve.kev?.requiredAction) print(io, `Required action (CISA): ${cve.kev.requiredAction}\n`)
      print(io, cve.affectedHosts.length === 0 ? 'Affects no scanned host.' : `Affected hosts (${cve.affectedHosts.length}): ${cve.affectedHosts.join(', ')}`)
      // NVD lists a URL once per source that submitted it; a person needs it once.
      const urls = [...new Set(cve.references.map((r) => r.url))]
      for (const url of urls.slice(0, 10)) print(io, `  ${url}`)
      if (urls.length > 10) print(io, `  … ${urls.length - 10} more (--json lists all)`)
      return EXIT.OK
    }

    case 'keys': {
      const [sub, ...rest] = args
      if (sub === 'create') {
        if (rest.length > 0) throw usage('keys create takes no arguments; give --label.')
        if (values.label === undefined || values.label === '') throw usage('keys create needs --label <label>.')
        const { data } = await api(client.POST('/admin/keys', { body: { label: values.label, ...(values.expires ? { expiresIn: values.expires } : {}) } }), baseUrl)
        if (json) printJson(io, data)
        else print(io, `Created key ${data.id} (${data.label})${data.expiresAt ? `, expires ${data.expiresAt}` : ''}.\nStore it now; it is not shown again:\n\n  ${data.key}\n`)
        return EXIT.OK
      }
      if (sub === 'list') {
        if (rest.length > 0) throw usage('keys list takes no arguments.')
        const { data } = await api(client.GET('/admin/keys', { params: { query: { limit, offset } } }), baseUrl)
        if (json) printJson(io, data)
        else print(io, data.items.length === 0 ? 'No dynamic keys.' : `${keysTable(data.items)}\n${data.items.length} of ${data.total} keys`)
        return EXIT.OK
      }
      if (sub === 'revoke') {
        if (rest.length !== 1) throw usage('keys revoke needs one key id.')
        await api(client.DELETE('/admin/keys/{id}', { params: { path: { id: rest[0] } } }), baseUrl)
        if (json) printJson(io, { revoked: rest[0] })
        else print(io, `Revoked key ${rest[0]}.`)
        return EXIT.OK
      }
      throw usage(sub === undefined ? 'keys needs create, list or revoke.' : `Unknown keys command '${sub}'.`)
    }
  }
  throw usage(`Unknown command '${command}'.`)
}

/** The process entry: runs, prints a CliError's message, and sets the exit status. */
export async function main (argv: string[] = process.argv.slice(2)): Promise<void> {
  const io: Io = { stdout: process.stdout, stderr: process.stderr, env: process.env }
  let code: number
  try {
    code = await run(argv, io)
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`vulnscan: ${err.message}\n`)
      code = err.exitCode
    } else {
      process.stderr.write(`vulnscan: unexpected error: ${(err as Error).stack ?? String(err)}\n`)
      code = EXIT.API
    }
  }
  process.exitCode = code
}
