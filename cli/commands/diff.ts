// `vulnscan diff <scan-id> [--against <scan-id>]`: what changed since another scan (by default the previous
// completed scan of the same targets).
import Table from 'cli-table3'
import pc from 'picocolors'
import { api, integer, paging, print, printJson } from '../context'
import { colourSeverity } from '../output'
import type { CommandModule } from '../command'
import type { Schemas } from '../../sdk'

type ScanDiff = Schemas['ScanDiff']
type DiffFinding = Schemas['DiffFinding']
type DiffPort = Schemas['DiffPort']
type ServiceVersion = Schemas['ServiceVersion']

function table (head: string[], rows: string[][]): string {
  const t = new Table({ head: head.map((h) => pc.bold(h)), style: { head: [], border: [] }, wordWrap: true })
  t.push(...rows)
  return t.toString()
}

function findingRows (findings: DiffFinding[]): string[][] {
  return findings.map((f) => [colourSeverity(f.severity), f.cvss === null ? pc.dim('n/a') : f.cvss.toFixed(1), f.cveId, f.address, String(f.port),
    [f.product, f.version].filter(Boolean).join(' '), f.status, f.id])
}

const FINDING_HEAD = ['severity', 'CVSS', 'CVE', 'host', 'port', 'product', 'status now', 'id']

function serviceText (s: ServiceVersion | DiffPort): string {
  return [s.service, s.product, s.version].filter(Boolean).join(' ')
}

/** A section per non-empty list, with how many more the page left out. */
function diffText (d: ScanDiff, unchanged: boolean): string {
  const t = d.totals
  const out = [
    `Scan ${d.scanId} compared with ${d.against}`,
    `findings: ${t.newFindings} new, ${t.fixedFindings} fixed, ${t.unchangedFindings} unchanged; ports: ${t.portsOpened} opened, ` +
      `${t.portsClosed} closed; services changed: ${t.servicesChanged}; hosts: ${t.hostsAppeared} appeared, ${t.hostsDown} down`
  ]
  const section = (title: string, total: number, shown: number, body: string): void => {
    if (total === 0 || shown === 0) return
    const more = total > d.offset + shown ? pc.dim(` (${d.offset + 1}-${d.offset + shown} of ${total}: --offset ${d.offset + shown} for more)`) : ''
    out.push('', pc.bold(title) + more, body)
  }
  section('New findings', t.newFindings, d.findings.new.length, table(FINDING_HEAD, findingRows(d.findings.new)))
  section('Fixed findings', t.fixedFindings, d.findings.fixed.length, table(FINDING_HEAD, findingRows(d.findings.fixed)))
  if (unchanged) section('Unchanged findings', t.unchangedFindings, d.findings.unchanged.length, table(FINDING_HEAD, findingRows(d.findings.unchanged)))
  const portRows = (ports: DiffPort[], what: string): string[][] => ports.map((p) => [p.address, String(p.port), what, serviceText(p)])
  const ports = [...portRows(d.ports.opened, pc.green('opened')), ...portRows(d.ports.closed, pc.red('closed'))]
  section('Ports', t.portsOpened + t.portsClosed, ports.length, table(['host', 'port', 'change', 'service'], ports))
  section('Services changed', t.servicesChanged, d.services.changed.length,
    table(['host', 'port', 'before', 'after'], d.services.changed.map((c) => [c.address, String(c.port), serviceText(c.before), serviceText(c.after)])))
  const hosts = [
    ...d.hosts.appeared.map((h) => [h.address, pc.green('appeared'), h.openPorts.join(', ')]),
    ...d.hosts.down.map((h) => [h.address, pc.red('down'), h.openPorts.join(', ')])
  ]
  section('Hosts', t.hostsAppeared + t.hostsDown, hosts.length, table(['host', 'change', 'open ports (when up)'], hosts))
  if (Object.values(t).every((n) => n === 0)) out.push('', 'Nothing changed.')
  return out.join('\n')
}

const diff: CommandModule = (program, kit) => {
  const cmd = program.command('diff')
    .summary('what changed between two scans')
    .description('Compares an ended scan with another: new, fixed and unchanged findings, ports opened and closed, services ' +
      'whose product or version changed, hosts that appeared or went down. Without --against, the previous completed scan ' +
      'of the same targets. Each list shows at most --limit items from --offset; the totals count them all.')
    .argument('<scan-id>')
    .option('--against <scan-id>', 'the scan to compare with (default: the previous completed scan of the same targets)')
    .option('--unchanged', 'list the unchanged findings too (otherwise only counted)')
    .option('--limit <n>', 'items of each list, 1 to 1000 (default: 100)')
    .option('--offset <n>', 'items of each list to skip (default: 0)')
  kit.hint(cmd, 'diff needs one scan id.')
  cmd.action(async (id: string, opts: { against?: string, unchanged?: boolean, limit?: string, offset?: string }) => kit.run(cmd, async (ctx) => {
    const limit = integer('limit', opts.limit, 1, 1000)
    const query = {
      ...paging({ offset: opts.offset }),
      ...(limit !== undefined ? { limit } : {}),
      ...(opts.against !== undefined ? { against: opts.against } : {})
    }
    const { data } = await api(ctx.client.GET('/app/scan/{id}/diff', { params: { path: { id }, query } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, diffText(data, opts.unchanged === true))
    return 0
  }))
}

export default diff
