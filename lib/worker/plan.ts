// Planning a scan (its first job): the targets expanded (tagged hosts added, the scope lists and the key's scope
// applied), the hosts split into batches, one job queued per batch, and the scan marked running with its totals.
import { expandTargets, type ExpandedHost, type Scope } from '../scanner/targets'
import { getTemplate } from '../scanner/templates'
import type { Template } from '../scanner/types'
import { isTerminal } from '../store/types'
import { addSummaries } from '../store/scan-progress'
import { scopeFor } from '../access'
import { scopeOf } from '../ownership'
import { batchJobId, PermanentScanError, portsPerHost, type RunnerDeps, type ScanJobData } from './types'

export async function planScan (deps: Pick<RunnerDeps, 'store' | 'results' | 'queue' | 'config' | 'log'>, scope: Scope, scanId: string): Promise<void> {
  const { store, results, queue, config, log } = deps
  const scan = await store.getScan(scanId)
  if (scan === null || isTerminal(scan.status)) return
  let template: Template
  let hosts: ExpandedHost[]
  let excluded: { address: string, reason: string }[]
  // The hosts tagged now (outside the try: a results database that fails for a moment is retried, not fatal).
  const targets = [...scan.targets]
  const targetTags = scan.targetTags ?? []
  if (targetTags.length > 0) {
    // Tagged hosts outside the key's scope are neither scanned nor named in the summary: the key may not read them.
    const own = scopeOf(scan.keyScope ?? [])
    for (const address of await results.hostsWithTags(targetTags)) if (own === null || own.allows(address)) targets.push({ value: address, type: 'single_ip' })
    if (targets.length === 0) {
      throw new PermanentScanError(`targetTags: no known host carries ${targetTags.length === 1 ? 'the tag' : 'any of the tags'} ${targetTags.join(', ')}, and the scan names no targets`)
    }
  }
  try {
    template = getTemplate(scan.template, scan.ports, { udp: scan.udp, udpPorts: scan.udpPorts })
    // Tagged hosts are targets like the others: the scope lists and the key's scope leave out those outside them.
    ;({ hosts, excluded } = await expandTargets(targets, { maxHosts: config.MAX_HOSTS, scope: scopeFor(scope, scan.keyScope) }))
  } catch (err) {
    throw new PermanentScanError((err as Error).message)
  }
  if (hosts.length === 0) throw new PermanentScanError('No address to scan: every resolved address is outside the scan scope')
  const batches: ExpandedHost[][] = []
  for (let i = 0; i < hosts.length; i += config.SCAN_BATCH_HOSTS) batches.push(hosts.slice(i, i + config.SCAN_BATCH_HOSTS))
  const summary = { ...addSummaries([], excluded) }
  const r = await store.updateScan(scanId, {
    status: 'running',
    startedAt: scan.startedAt ?? new Date().toISOString(),
    hostsTotal: hosts.length,
    portsTotal: hosts.length * portsPerHost(template),
    batches: batches.length,
    summary
  })
  if (r === null) {
    log.error({ scanId }, 'scan vanished while it was planned: nothing to run')
    return
  }
  // Ended meanwhile (cancelled): nothing to run.
  if (!r.applied) return
  for (const [i, batchHosts] of batches.entries()) {
    await queue.add<ScanJobData>(batchJobId(scanId, i), { scanId, batch: i, hosts: batchHosts }, scan.priority)
  }
  log.info({ scanId, hosts: hosts.length, batches: batches.length, ports: template.ports.length, udpPorts: template.udp ? template.udpPorts.length : 0 }, 'scan planned')
}
