// One-shot local scan: runs the engine directly, without the service or Redis.
// npm run scan -- <target…> [--template quick] [--ports 22,80] [--json]

import { parseArgs } from 'node:util'
import Table from 'cli-table3'
import pc from 'picocolors'
import { runScan } from '../lib/scanner/engine'
import { inferTarget, parseScope, scopeError, validateTarget } from '../lib/scanner/targets'
import { getTemplate, TEMPLATE_NAMES } from '../lib/scanner/templates'
import { DEFAULT_TEMPLATE } from '../lib/vocabulary'
import type { HostResult } from '../lib/domain/hosts'
import type { ScanProgress, Target } from '../lib/scanner/types'

const USAGE = `Usage: npm run scan -- <target…> [options]

Targets: an IP address (10.0.0.5, ::1), a range (10.0.0.1-10.0.0.20), a CIDR block
(192.168.1.0/28) or a host name (db.example.com).

Options:
  -t, --template <name>    ${TEMPLATE_NAMES.join(' | ')} (default: quick)
  -p, --ports <list>       ports to scan instead of the template's, e.g. 22,80,8000-8100
      --json               print the result as JSON
      --max-hosts <n>      refuse targets that expand to more hosts (default: 4096)
      --allow <cidrs>      scan only inside these blocks (comma-separated)
      --deny <cidrs>       never scan these blocks (comma-separated)
      --concurrency <n>    connects in flight at once
  -h, --help               show this text

Exit status: 0 when the scan ran, 1 when it failed, 2 on bad usage.`

class UsageError extends Error {}
class Interrupted extends Error {}

function positiveInt (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer, not '${value}'`)
  return Number(value)
}

function describe (h: HostResult): string {
  const open = h.ports.filter((p) => p.state === 'open').length
  const filtered = h.ports.filter((p) => p.state === 'filtered').length
  const name = h.hostnames.length > 0 ? ` (${h.hostnames.join(', ')})` : ''
  const state = h.up ? pc.green('up') : pc.red('down')
  const rtt = h.rttMs !== undefined ? `, rtt ${h.rttMs} ms` : ''
  return `${h.address}${name}: ${state}${rtt}; ${open} open, ${filtered} filtered, ${h.closedCount} closed`
}

function table (hosts: HostResult[]): string {
  const t = new Table({ head: ['host', 'port', 'state', 'service', 'product', 'version', 'CPE'], style: { head: [], border: [] } })
  for (const h of hosts) {
    for (const p of h.ports) {
      const s = p.service
      t.push([h.address, `${p.port}/tcp`, p.state === 'open' ? pc.green(p.state) : pc.yellow(p.state),
        s?.service ?? '', s?.product ?? '', [s?.version, s?.distro].filter(Boolean).join(' '), (s?.cpe ?? []).join('\n')])
    }
  }
  return t.toString()
}

async function main (): Promise<number> {
  let args
  try {
    args = parseArgs({
      allowPositionals: true,
      options: {
        template: { type: 'string', short: 't', default: DEFAULT_TEMPLATE },
        ports: { type: 'string', short: 'p' },
        json: { type: 'boolean', default: false },
        'max-hosts': { type: 'string' },
        allow: { type: 'string', default: '' },
        deny: { type: 'string', default: '' },
        concurrency: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false }
      }
    })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const { values, positionals } = args
  if (values.help === true) {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  if (positionals.length === 0) throw new UsageError('no target given')

  let template
  try {
    template = getTemplate(values.template ?? DEFAULT_TEMPLATE, values.ports)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const maxHosts = positiveInt('max-hosts', values['max-hosts']) ?? 4096
  const concurrency = positiveInt('concurrency', values.concurrency)
  let scope
  try {
    scope = parseScope(values.allow ?? '', values.deny ?? '')
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const targets: Target[] = positionals.map(inferTarget)
  for (const t of targets) {
    const problem = validateTarget(t, { maxHosts }) ?? scopeError(t, scope)
    if (problem !== null) throw new UsageError(`${t.value}: ${problem}`)
  }

  const ac = new AbortController()
  const onSigint = (): void => { ac.abort(new Interrupted('interrupted')) }
  process.once('SIGINT', onSigint)

  // Progress on stderr, on a terminal only, so stdout stays clean for pipes and --json.
  const live = process.stderr.isTTY && values.json !== true
  const started = performance.now()
  let last = ''
  const onProgress = (p: ScanProgress): void => {
    if (!live) return
    const pct = p.portsTotal === 0 ? 100 : Math.floor((100 * p.portsDone) / p.portsTotal)
    const line = `scanning: ports ${pct}% (${p.portsDone}/${p.portsTotal}), hosts ${p.hostsDone}/${p.hostsTotal}`
    if (line !== last) {
      last = line
      process.stderr.write(`\r${line}\x1b[K`)
    }
  }
  try {
    const { hosts, excluded } = await runScan(targets, { maxHosts, scope, template, concurrency, signal: ac.signal, onProgress })
    if (live) process.stderr.write('\r\x1b[K')
    if (values.json === true) {
      process.stdout.write(JSON.stringify({ template: template.name, hosts, excluded }, null, 2) + '\n')
      return 0
    }
    for (const e of excluded) process.stdout.write(pc.yellow(`excluded ${e.address}: ${e.reason}`) + '\n')
    for (const h of hosts) process.stdout.write(describe(h) + '\n')
    if (hosts.some((h) => h.ports.length > 0)) process.stdout.write(table(hosts) + '\n')
    const seconds = ((performance.now() - started) / 1000).toFixed(2)
    process.stdout.write(`${hosts.length} host(s), ${template.ports.length} port(s) each, template ${template.name}, ${seconds} s\n`)
    return 0
  } finally {
    process.off('SIGINT', onSigint)
  }
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K')
  process.stderr.write(`error: ${err.message}\n`)
  if (err instanceof UsageError) {
    process.stderr.write(`\n${USAGE}\n`)
    process.exitCode = 2
  } else if (err instanceof Interrupted) {
    process.exitCode = 130
  } else {
    process.exitCode = 1
  }
})
