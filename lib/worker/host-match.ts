// Matching one scanned host: each open port's CPE names against the NVD index and the other sources, the exposure
// checks' verdicts, and which ports (per transport) the write may settle. A host read over SSH has its banner
// findings decided by the package it has installed.
import type { HostResult, PortResult, Transport } from '../domain/hosts'
import type { Template } from '../scanner/types'
import type { NewFinding } from '../domain/findings'
import type { Store } from '../store/types'
import type { NvdService } from '../nvd/service'
import { matchService, productsOf } from '../match/service'
import { exposureVerdict } from '../match/exposures'
import type { InstalledSource } from '../credentialed/packages'
import { sourceRuleFor, type DistroFamily, type DistroPackage } from '../distro/package'
import type { WorkerMatchDeps } from './types'

/** What matching one host concluded: its findings, and per transport the ports whose CVE and check findings it settles. */
export interface Matched {
  findings: NewFinding[]
  settled: number[]
  settledUdp: number[]
  settledChecks: number[]
  settledUdpChecks: number[]
  unchecked: string[]
}

/** What a credentialed login found installed, for deciding the banner findings of the same packages. */
export interface InstalledContext {
  family: DistroFamily
  release: string
  sources: Map<string, InstalledSource>
}

/**
 * The distribution package behind a detected service, as the host's package list has it: a banner's CVE findings
 * on a host scanned with credentials are decided by what is installed, not by what the banner shows.
 */
function installedPackageOf (service: NonNullable<PortResult['service']>, ctx: InstalledContext): DistroPackage | null {
  const rule = sourceRuleFor(service.product)
  const source = rule?.source(service.version, ctx.family, ctx.release) ?? null
  const installed = source === null ? undefined : ctx.sources.get(source)
  if (source === null || installed === undefined) return null
  return { family: ctx.family, release: ctx.release, source, version: installed.version, evidence: `installed package (credentialed scan): ${source} ${installed.version}` }
}

/** One port's findings, from every source; aliases the NVD could not supply are skipped, not fatal. */
export async function portFindings (matchDeps: WorkerMatchDeps, address: string, port: PortResult, unavailable?: ReadonlySet<string>, installed?: InstalledContext): Promise<NewFinding[]> {
  if (port.service === undefined) return []
  const pkg = installed === undefined ? null : installedPackageOf(port.service, installed)
  const m = await matchService(port.service, matchDeps, { unavailable, ...(pkg !== null ? { distroPackage: pkg } : {}) })
  return m.verdicts.map((v) => ({ ...v, address, port: port.port, protocol: port.protocol }))
}

/**
 * Match each open port's CPE names; ports whose products the NVD could not supply stay unsettled.
 * `available` remembers, for the batch, which vendor:product the NVD could supply, so that hosts
 * running the same products do not ask again.
 */
export async function matchHost (
  deps: { matchDeps: WorkerMatchDeps, nvd: NvdService, store: Pick<Store, 'addPendingProducts'> },
  host: HostResult, template: Template, signal: AbortSignal, available: Map<string, boolean>, installed?: InstalledContext
): Promise<Matched> {
  const open = host.ports.filter((p) => p.state === 'open')
  // A port found closed now has no service left, so its old findings are fixed. A port is its number and its
  // transport: TCP 53 found closed says nothing of UDP 53, and a UDP port that stayed silent (open|filtered) settles nothing.
  const present = (protocol: Transport): Set<number> => new Set(host.ports.filter((p) => p.protocol === protocol && p.state !== 'closed').map((p) => p.port))
  const tcpPresent = present('tcp')
  const udpPresent = present('udp')
  const settled = template.ports.filter((p) => !tcpPresent.has(p))
  const settledUdp = template.udp ? template.udpPorts.filter((p) => !udpPresent.has(p)) : []
  // Exposure checks settle their own findings: on closed ports, and on open ports where every check concluded.
  const checkFindings = open.flatMap((p) => (p.exposures ?? []).map((e) => ({ ...exposureVerdict(e, p.service), address: host.address, port: p.port, protocol: p.protocol })))
  const checkedOn = (protocol: Transport): number[] => open.filter((p) => p.protocol === protocol && p.checked === true).map((p) => p.port)
  const settledChecks = [...settled, ...checkedOn('tcp')]
  const settledUdpChecks = [...settledUdp, ...checkedOn('udp')]
  if (!template.nvd) return { findings: checkFindings, settled: [], settledUdp: [], settledChecks, settledUdpChecks, unchecked: [] }
  const todo = open.flatMap((p) => p.service ? productsOf(p.service) : []).filter((p) => !available.has(`${p.vendor}:${p.product}`))
  if (todo.length > 0) {
    const ensured = await deps.nvd.ensure(todo, signal)
    for (const p of todo) available.set(`${p.vendor}:${p.product}`, true)
    for (const p of ensured.failed) available.set(`${p.vendor}:${p.product}`, false)
  }
  const failed = new Set([...available].filter(([, ok]) => !ok).map(([key]) => key))
  const findings: NewFinding[] = []
  const unchecked = new Set<string>()
  for (const port of open) {
    const service = port.service
    if (!service || service.cpe.length === 0) continue
    // An alias the NVD could not supply hides nothing the others match: the port is matched on what is
    // known, and left unsettled so that no finding the missing alias may hold is marked fixed.
    const missing = productsOf(service).filter((p) => failed.has(`${p.vendor}:${p.product}`))
    for (const p of missing) unchecked.add(`${p.vendor}:${p.product}`)
    findings.push(...await portFindings(deps.matchDeps, host.address, port, failed, installed))
    if (missing.length === 0) (port.protocol === 'udp' ? settledUdp : settled).push(port.port)
  }
  if (unchecked.size > 0) await deps.store.addPendingProducts([...unchecked].map((product) => ({ product, address: host.address })))
  return { findings: [...findings, ...checkFindings], settled, settledUdp, settledChecks, settledUdpChecks, unchecked: [...unchecked] }
}
