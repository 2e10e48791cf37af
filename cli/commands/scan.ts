// `vulnscan scan <target…>`: post a scan, and with --wait follow it to the end and judge its findings.
import { inferTarget } from '../../lib/scanner/targets'
import { DEFAULT_PRIORITY, DEFAULT_TEMPLATE, PRIORITY_MAX, PRIORITY_MIN, TEMPLATE_NAMES } from '../../lib/vocabulary'
import { api, integer, oneOf, print, printJson, usage } from '../context'
import { finishScan } from '../findings'
import { followScan } from '../follow'
import { gateOptions, readGate } from '../gate'
import type { CommandModule } from '../command'
import { checkedTags, tagOption } from './tags'
import { credentialOption } from './credentials'

/** The port-list syntax the API accepts for `udpPorts`: checked here so that a typo is a usage error (exit 2). */
const PORT_LIST = /^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$/

const scan: CommandModule = (program, kit) => {
  const cmd = program.command('scan')
    .summary('post a scan; targets are addresses (10.0.0.5, ::1), ranges (10.0.0.1-10.0.0.20), CIDR blocks (192.168.1.0/28) or host names')
    .description('Posts a scan. Targets are addresses (10.0.0.5, ::1), ranges (10.0.0.1-10.0.0.20), CIDR blocks (192.168.1.0/28) or host names; their type is inferred from their syntax.')
    .argument('[target...]', 'what to scan (may be left out with --target-tag)')
    .option('-t, --template <name>', `${TEMPLATE_NAMES.join(' | ')} (default: ${DEFAULT_TEMPLATE})`)
    .option('-p, --ports <list>', 'ports instead of the template\'s, e.g. 22,80,8000-8100')
    .option('--udp', 'also scan UDP: the template\'s UDP ports (20 common ones; 50 for standard and full)')
    .option('--udp-ports <list>', 'UDP ports instead of the template\'s, e.g. 53,123,161 (implies --udp)')
    .option('--no-discovery', 'scan every address, even those that answer no discovery probe (like nmap -Pn)')
    .option(`--priority <${PRIORITY_MIN}-${PRIORITY_MAX}>`, `${PRIORITY_MAX} is the most urgent (default: ${DEFAULT_PRIORITY})`)
    .option('--id <id>', 'your own scan id (re-posting the same id and body is a no-op)')
    .addOption(credentialOption())
    .addOption(tagOption('--tag <tag>', 'add this tag to every host the scan finds up (repeatable)'))
    .addOption(tagOption('--target-tag <tag>', 'also scan the known hosts carrying this tag, looked up when the scan starts (repeatable)'))
    .option('-w, --wait', 'follow the scan to its end (a progress line on a terminal), then print its findings')
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 3; the scan goes on)')
    .option('--ids', 'with --wait: add the finding ids (for vulnscan decide) to the table')
  for (const o of gateOptions()) cmd.addOption(o)
  kit.hint(cmd, 'scan needs at least one target, e.g. vulnscan scan 127.0.0.1')
  cmd.action(async (targets: string[], opts: Record<string, string | boolean | undefined>) => kit.run(cmd, async (ctx) => {
    const template = oneOf('template', opts.template as string | undefined, TEMPLATE_NAMES)
    const priority = integer('priority', opts.priority as string | undefined, PRIORITY_MIN, PRIORITY_MAX)
    const timeout = integer('timeout', opts.timeout as string | undefined, 1, 7 * 24 * 3600)
    const gate = readGate(opts as { failOn?: string, minConfidence?: string })
    if (timeout !== undefined && opts.wait !== true) throw usage('--timeout only applies with --wait.')
    const tags = (opts.tag ?? []) as unknown as string[]
    const targetTags = (opts.targetTag ?? []) as unknown as string[]
    if (targets.length === 0 && targetTags.length === 0) throw usage('scan needs at least one target or --target-tag, e.g. vulnscan scan 127.0.0.1')
    const ports = opts.ports as string | undefined
    const udpPorts = opts.udpPorts as string | undefined
    if (udpPorts !== undefined && !PORT_LIST.test(udpPorts)) throw usage(`--udp-ports must be a port list such as 53,123,161-162, not '${udpPorts}'.`)
    const chosen = {
      ...(template ? { template } : {}),
      ...(ports ? { ports } : {}),
      ...(opts.udp === true || udpPorts !== undefined ? { udp: true } : {}),
      ...(udpPorts !== undefined ? { udpPorts } : {}),
      // Commander sets `discovery` to false for --no-discovery and true otherwise: only a switch-off is sent.
      ...(opts.discovery === false ? { discovery: false } : {}),
      ...(((opts.credential ?? []) as unknown as string[]).length > 0 ? { credentials: [...new Set(opts.credential as unknown as string[])] } : {})
    }
    const options = Object.keys(chosen).length > 0 ? chosen : undefined
    const body = {
      ...(opts.id !== undefined ? { id: opts.id as string } : {}),
      ...(targets.length > 0 ? { targets: targets.map((a) => inferTarget(a)) } : {}),
      ...(tags.length > 0 ? { tags: checkedTags(tags) } : {}),
      ...(targetTags.length > 0 ? { targetTags: checkedTags(targetTags) } : {}),
      ...(options ? { options } : {}),
      ...(priority !== undefined ? { priority } : {})
    }
    const { data: ack } = await api(ctx.client.POST('/app/scan', { body }), ctx.baseUrl)
    if (opts.wait !== true) {
      if (ctx.json) printJson(ctx.io, ack)
      else print(ctx.io, `Scan ${ack.id} queued. Follow it with: vulnscan status ${ack.id} --wait`)
      return 0
    }
    if (!ctx.json) ctx.io.stderr.write(`Scan ${ack.id} queued.\n`)
    const done = await followScan(ctx, ack.id, { timeoutSeconds: timeout, quiet: ctx.json })
    return await finishScan(ctx, done, gate, opts.ids === true)
  }))
}

export default scan
