// The scan worker's job handler. A scan's first job plans it (expands the targets, splits the hosts
// into batches, queues one job per batch); each batch job scans its hosts, matches what it found
// against the NVD index and writes hosts and findings; the batch that finishes last completes the scan.
import { expandTargets, parseScope, type ExpandedHost } from '../scanner/targets'
import { scanHosts } from '../scanner/engine'
import { getTemplate } from '../scanner/templates'
import type { HostResult, PortResult, Template, Transport } from '../scanner/types'
import type { NvdService } from '../nvd/service'
import { DeferJobError, type QueueJob, type ScanQueue } from '../queue/types'
import { DEPENDENCY_ROLE, outageOf, outageReason, withoutAddresses } from '../outage'
import type { HostScanWrite, NewFinding, ResultsStore } from '../store/results-types'
import { isTerminal, type BatchSummary, type ScanSummary, type Store } from '../store/types'
import { hostRecordToResult } from '../store/host-result'
import { addSummaries, emptyFindingCounts } from '../store/scan-progress'
import { matchService, productsOf } from '../match/service'
import { exposureVerdict } from '../match/exposures'
import type { SourceStore } from '../sources/source-store'
import { withReadCache } from '../sources/read-cache'
import { dataSources } from '../sources/registry'
import { scopeFor } from '../access'
import { scopeOf } from '../ownership'
import type { Notifier } from '../webhooks/events'
import type { CredentialedScanning } from '../credentialed/scanning'
import type { CollectOutcome } from '../credentialed/collect'
import { packageFamilyOf } from '../credentialed/families'
import { HOST_PORT, installedSources, matchPackages, type InstalledSource } from '../credentialed/packages'
import { sourceRuleFor, type DistroFamily, type DistroPackage } from '../distro/package'
import { addCredentialed, emptyCredentialed } from '../store/scan-progress'

/** What matching one host concluded: its findings, and per transport the ports whose CVE and check findings it settles. */
interface Matched {
  findings: NewFinding[]
  settled: number[]
  settledUdp: number[]
  settledChecks: number[]
  settledUdpChecks: number[]
  unchecked: string[]
}

export interface ScanJobData {
  scanId: string
  /** Absent on the planning job. */
  batch?: number
  hosts?: ExpandedHost[]
}

export interface RunnerConfig {
  MAX_HOSTS: number
  SCAN_ALLOW: string
  SCAN_DENY: string
  SCAN_CONCURRENCY: number
  SCAN_HOST_CONCURRENCY: number
  SCAN_BATCH_HOSTS: number
  SCAN_TIMEOUT: number
  /** Seconds between sweeps for orphaned scans; also how old a scan must be to count as one (default 60). */
  SCAN_SWEEP_INTERVAL?: number
}

export interface RunnerLogger {
  debug?(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface RunnerDeps {
  store: Store
  results: ResultsStore
  queue: ScanQueue
  nvd: NvdService
  /** CVE JSON 5 records, distribution trackers, KEV and EPSS; null matches on the NVD alone. */
  sources?: SourceStore | null
  config: RunnerConfig
  log: RunnerLogger
  /** Attempts a job gets before its failure is final (BullMQ's `attempts`; 1 in process). */
  attempts: number
  /** How often a running batch checks whether its scan was cancelled. */
  cancelPollMs?: number
  /** Told when a scan ends and when a host write finds new findings (webhooks); it never throws. */
  notifier?: Notifier
  /** Most hosts written in one recordHosts call (default 64). */
  writeBatchHosts?: number
  /** Longest a scanned host waits for its batch to fill before it is written anyway (default 250 ms). */
  writeBatchMs?: number
  /** Logs in to the hosts of scans that name credentials; absent: such scans say every login failed. */
  credentialed?: CredentialedScanning | null
}

/** What a credentialed login found installed, for deciding the banner findings of the same packages. */
interface InstalledContext {
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

/** A failure that retrying cannot mend (bad targets, a scan gone): the scan fails at once. */
export class PermanentScanError extends Error {
  override readonly name = 'PermanentScanError'
}

export function batchJobId (scanId: string, batch: number): string {
  // '#' cannot occur in scan ids, so batch ids never collide with a scan's own id.
  return `${scanId}#b${batch}`
}

const PROGRESS_INTERVAL_MS = 300

/** TCP and UDP ports scanned on each host, as progress counts them. */
function portsPerHost (t: Template): number {
  return new Set(t.ports).size + (t.udp ? new Set(t.udpPorts).size : 0)
}

export interface ScanRunner {
  handle(job: QueueJob<ScanJobData>, signal: AbortSignal): Promise<void>
  /** A job failed for good outside the handler (e.g. its worker died too often): fail its scan. */
  onFinalFailure(logicalId: string, data: unknown, reason: string): Promise<void>
  /**
   * Mend scans that outages left without a way forward: a queued scan with no job (its record was stored, the job's
   * write was lost) gets its job; a scan whose planning or batch job failed for good while the failure could not be
   * recorded ends as that failure says. Returns how many scans it mended.
   */
  sweep(): Promise<number>
}

/** Starts `runner.sweep()` every SCAN_SWEEP_INTERVAL seconds; returns the stop function. */
export function startSweeper (runner: ScanRunner, config: { SCAN_SWEEP_INTERVAL: number }, log: RunnerLogger): () => void {
  let running = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    runner.sweep()
      .catch((err) => log.debug?.({ err: { message: (err as Error).message } }, 'scan sweep put off'))
      .finally(() => { running = false })
  }, config.SCAN_SWEEP_INTERVAL * 1000)
  timer.unref()
  return () => clearInterval(timer)
}

export function createScanRunner (deps: RunnerDeps): ScanRunner {
  const { store, results, queue, nvd, config, log } = deps
  // Ports running the same product read the same source entries: kept until an import moves the store's revision.
  const matchDeps = { nvd: nvd.index, sources: deps.sources === undefined || deps.sources === null ? null : withReadCache(deps.sources) }

  /** One port's findings, from every source; aliases the NVD could not supply are skipped, not fatal. */
  async function portFindings (address: string, port: PortResult, unavailable?: ReadonlySet<string>, installed?: InstalledContext): Promise<NewFinding[]> {
    if (port.service === undefined) return []
    const pkg = installed === undefined ? null : installedPackageOf(port.service, installed)
    const m = await matchService(port.service, matchDeps, { unavailable, ...(pkg !== null ? { distroPackage: pkg } : {}) })
    return m.verdicts.map((v) => ({ ...v, address, port: port.port, protocol: port.protocol }))
  }
  const scope = parseScope(config.SCAN_ALLOW, config.SCAN_DENY)
  const cancelPollMs = deps.cancelPollMs ?? 500
  const writeBatchHosts = Math.max(1, deps.writeBatchHosts ?? 64)
  const writeBatchMs = deps.writeBatchMs ?? 250

  async function fail (scanId: string, reason: string): Promise<void> {
    const r = await store.updateScan(scanId, { status: 'failed', reason, finishedAt: new Date().toISOString() })
    if (r?.applied === true) {
      log.warn({ scanId, reason }, 'scan failed')
      await deps.notifier?.scanEnded(r.scan)
    }
  }

  async function plan (scanId: string): Promise<void> {
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

  /**
   * Match each open port's CPE names; ports whose products the NVD could not supply stay unsettled.
   * `available` remembers, for the batch, which vendor:product the NVD could supply, so that hosts
   * running the same products do not ask again.
   */
  async function match (host: HostResult, template: Template, signal: AbortSignal, available: Map<string, boolean>, installed?: InstalledContext): Promise<Matched> {
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
      const ensured = await nvd.ensure(todo, signal)
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
      findings.push(...await portFindings(host.address, port, failed, installed))
      if (missing.length === 0) (port.protocol === 'udp' ? settledUdp : settled).push(port.port)
    }
    if (unchecked.size > 0) await store.addPendingProducts([...unchecked].map((product) => ({ product, address: host.address })))
    return { findings: [...findings, ...checkFindings], settled, settledUdp, settledChecks, settledUdpChecks, unchecked: [...unchecked] }
  }

  /**
   * Products a scan could not check (the NVD was unreachable) are matched once the index can supply
   * them: the hosts' stored services are matched again and their findings written, as of when they
   * were seen.
   */
  async function rematchPending (signal: AbortSignal): Promise<void> {
    const pending = await store.pendingProducts()
    if (pending.size === 0) return
    const refs = [...pending.keys()].map((k) => ({ vendor: k.slice(0, k.indexOf(':')), product: k.slice(k.indexOf(':') + 1) }))
    const ensured = await nvd.ensure(refs, signal)
    const failed = new Set(ensured.failed.map((p) => `${p.vendor}:${p.product}`))
    for (const [key, addresses] of pending) {
      if (failed.has(key)) continue
      for (const address of addresses) {
        const stored = await results.getHost(address)
        if (stored !== null) {
          const host = hostRecordToResult(stored)
          const ports = host.ports.filter((p) => p.state === 'open' && p.service !== undefined &&
            productsOf(p.service).some((x) => `${x.vendor}:${x.product}` === key))
          const findings: NewFinding[] = []
          for (const port of ports) findings.push(...await portFindings(address, port))
          await results.recordHost({
            scanId: stored.lastScanId,
            at: stored.lastSeen,
            host,
            scannedPorts: [],
            findings,
            settledPorts: ports.filter((p) => p.protocol !== 'udp').map((p) => p.port),
            settledUdpPorts: ports.filter((p) => p.protocol === 'udp').map((p) => p.port)
          })
          log.info({ address, product: key, findings: findings.length }, 'matched a product the NVD could not supply before')
        }
        await store.clearPendingProduct(key, [address])
      }
    }
  }

  let rematching: Promise<void> | null = null
  /** One re-match at a time per process; callers share the one in flight. */
  function rematchOnce (signal: AbortSignal): Promise<void> {
    rematching ??= rematchPending(signal)
      .catch((err) => log.warn({ err: { message: (err as Error).message } }, 're-matching pending products failed'))
      .finally(() => { rematching = null })
    return rematching
  }

  async function runBatch (scanId: string, batch: number, hosts: ExpandedHost[], jobSignal: AbortSignal): Promise<void> {
    const scan = await store.getScan(scanId)
    if (scan === null || isTerminal(scan.status)) return
    const template = getTemplate(scan.template, scan.ports, { udp: scan.udp, udpPorts: scan.udpPorts })
    // An nvd:import run by another process since the last batch is matched against from now on.
    if (template.nvd) {
      await nvd.index.refresh().catch((err) => log.warn({ err: { message: (err as Error).message } }, 'reloading the NVD index failed'))
      matchDeps.sources?.recheck()
    }
    const ac = new AbortController()
    const timeout = setTimeout(() => ac.abort(new PermanentScanError(`time limit of ${config.SCAN_TIMEOUT} s exceeded`)), config.SCAN_TIMEOUT * 1000)
    const onJobAbort = (): void => ac.abort(jobSignal.reason)
    jobSignal.addEventListener('abort', onJobAbort, { once: true })
    // Cancellation is a state in the store, so it reaches this batch whichever API instance took it.
    const poll = setInterval(() => {
      store.getScan(scanId).then((s) => {
        if (s === null || s.status === 'cancelled') ac.abort(new Error('cancelled'))
      }, () => {})
    }, cancelPollMs)

    const summary: BatchSummary = { hostsUp: 0, hostsDown: 0, openPorts: 0, findings: emptyFindingCounts(), uncheckedProducts: [] }
    const credentialIds = scan.credentials ?? []
    if (credentialIds.length > 0) summary.credentialed = emptyCredentialed()
    // Logins start as each host's port scan ends, beside its detection; its write waits for them.
    const logins = new Map<string, Promise<CollectOutcome>>()
    const login = (host: HostResult): void => {
      if (credentialIds.length === 0 || !host.up || logins.has(host.address)) return
      const outcome = deps.credentialed === undefined || deps.credentialed === null
        ? Promise.resolve<CollectOutcome>({ ok: false, reason: 'unsupported', message: 'this worker was started without credentialed scanning', credentialId: null })
        : deps.credentialed.collect(host.address, credentialIds, ac.signal)
          .catch((err: Error): CollectOutcome => ({ ok: false, reason: 'error', message: err.message, credentialId: null }))
      logins.set(host.address, outcome)
    }
    /** The package findings of a host whose login succeeded, and what it has installed; or why there are none. */
    const credentialedResult = async (host: HostResult): Promise<{ findings: NewFinding[], installed?: InstalledContext } | { failed: { reason: string, message: string } } | null> => {
      const pending = logins.get(host.address)
      if (pending === undefined) return null
      const outcome = await pending
      if (!outcome.ok) return { failed: { reason: outcome.reason, message: outcome.message } }
      const inv = outcome.inventory
      const family = packageFamilyOf(inv.os)
      if (family === null) return { failed: { reason: 'unsupported', message: `no distribution tracker decides ${inv.os.prettyName ?? inv.os.id} packages yet (${inv.packages.length} read)` } }
      if (matchDeps.sources === null) return { failed: { reason: 'unsupported', message: 'this worker has no distribution tracker data to decide packages by' } }
      const m = await matchPackages(host.address, inv, family, { sources: matchDeps.sources, cves: async (ids) => await nvd.index.getMany(ids) })
      for (const note of m.notes) log.info({ scanId, address: host.address }, note)
      const release = family.release(inv.os, inv)
      const dpkg = family.family === 'debian' || family.family === 'ubuntu'
      const installed = dpkg && release !== null
        ? { family: family.family as DistroFamily, release, sources: new Map(installedSources(inv, family).sources.map((x) => [x.source, x])) }
        : undefined
      return { findings: m.findings, ...(installed !== undefined ? { installed } : {}) }
    }
    const unchecked = new Set<string>()
    const available = new Map<string, boolean>()
    let lastReport = 0
    // Hosts are written in batches (one transaction each on PostgreSQL) in the order they were scanned: a batch goes
    // when it holds writeBatchHosts hosts or its first host has waited writeBatchMs. The job ends only once every
    // batch has committed, so a host is never acknowledged before its findings are stored; a failed batch fails
    // the job, and the retry writes the same hosts again (the writes are idempotent). One batch is in flight while
    // the next one is matched and filled, so that the database's transaction and this process's matching overlap;
    // a batch goes only once the one before it has committed, so batches still commit in scan order.
    interface Pending { write: HostScanWrite, findings: NewFinding[] }
    const pending: Pending[] = []
    let writing: Pending[] = []
    let inFlight = Promise.resolve()
    let flushTimer: NodeJS.Timeout | null = null
    let writes = Promise.resolve()
    // A failure is kept for the job's final await; until then it must not count as an unhandled rejection.
    const then = (fn: () => Promise<void>): void => {
      writes = writes.then(fn)
      writes.catch(() => {})
    }
    const flush = async (): Promise<void> => {
      if (flushTimer !== null) clearTimeout(flushTimer)
      flushTimer = null
      if (pending.length === 0) return
      // The batch before this one fails this flush if it failed, and so the job.
      await inFlight
      const batch = pending.splice(0)
      writing = batch
      inFlight = (async () => {
        // The findings this write may make new go into the webhook outbox first: a crash after the commit and
        // before their events are queued leaves them there for the relay, rather than lost.
        const keys = await deps.notifier?.recordFindings(scan, batch.map((p) => ({ address: p.write.host.address, at: p.write.at, candidates: p.findings }))) ?? []
        const counts = await results.recordHosts(batch.map((p) => p.write))
        // The summary counts what the scan observed as every other view counts it (lib/finding-counts.ts): standing
        // findings after the write, so that a finding a user accepted before is not counted here and left out elsewhere.
        for (const c of counts) for (const [s, n] of Object.entries(c.standing)) summary.findings[s as keyof typeof summary.findings] += n
        const nothingNew: string[] = []
        for (const [i, p] of batch.entries()) {
          const key = keys[i] ?? null
          if (counts[i].newFindings > 0) await deps.notifier?.findingsNew(scan, p.write.host.address, p.write.at, p.findings, key)
          else if (key !== null) nothingNew.push(key)
        }
        if (nothingNew.length > 0) await store.removeOutbox(nothingNew).catch(() => {})
      })()
      inFlight.catch(() => {})
    }
    /** Every host written and committed. */
    const drain = async (): Promise<void> => {
      await flush()
      await inFlight
    }
    const writeHost = async (host: HostResult): Promise<void> => {
      if (host.up) summary.hostsUp++
      else summary.hostsDown++
      // Down hosts nobody has seen before are not worth a record; known ones are marked down.
      if (!host.up && ![...pending, ...writing].some((p) => p.write.host.address === host.address) && (await results.getHost(host.address)) === null) return
      const credentialed = await credentialedResult(host)
      const installed = credentialed !== null && 'findings' in credentialed ? credentialed.installed : undefined
      const m = await match(host, template, ac.signal, available, installed)
      if (credentialed !== null && summary.credentialed !== undefined) {
        const ok = 'findings' in credentialed
        summary.credentialed = addCredentialed(summary.credentialed, {
          attempted: 1,
          succeeded: ok ? 1 : 0,
          failed: ok ? {} : { [credentialed.failed.reason]: 1 },
          hosts: ok ? [] : [{ address: host.address, ...credentialed.failed }]
        })
        // The package list settles the host's package findings only when it was read: a failed login leaves them as they were.
        if (ok) {
          m.findings.push(...credentialed.findings)
          m.settled.push(HOST_PORT)
        } else {
          log.warn({ scanId, address: host.address, reason: credentialed.failed.reason, message: credentialed.failed.message }, 'credentialed login failed')
        }
      }
      for (const p of m.unchecked) unchecked.add(p)
      summary.openPorts += host.ports.filter((p) => p.state === 'open').length
      if (template.udp) summary.openUdpPorts = (summary.openUdpPorts ?? 0) + host.ports.filter((p) => p.state === 'open' && p.protocol === 'udp').length
      const at = new Date().toISOString()
      // The scan's tags go on the hosts it found up, in the same write as what it found there.
      const tags = host.up && scan.tags !== undefined && scan.tags.length > 0 ? { tags: scan.tags } : {}
      pending.push({
        write: {
          scanId,
          at,
          host,
          scannedPorts: template.ports,
          ...(template.udp ? { scannedUdpPorts: template.udpPorts } : {}),
          findings: m.findings,
          settledPorts: m.settled,
          settledUdpPorts: m.settledUdp,
          settledChecks: m.settledChecks,
          settledUdpChecks: m.settledUdpChecks,
          ...tags
        },
        findings: m.findings
      })
      if (pending.length >= writeBatchHosts) await flush()
      else flushTimer ??= setTimeout(() => then(flush), writeBatchMs)
    }
    try {
      await scanHosts(hosts, {
        template,
        signal: ac.signal,
        concurrency: config.SCAN_CONCURRENCY,
        perHostConcurrency: config.SCAN_HOST_CONCURRENCY,
        discovery: scan.discovery,
        intrusive: scan.intrusive === true,
        onProgress: (p) => {
          const now = Date.now()
          if (now - lastReport < PROGRESS_INTERVAL_MS) return
          lastReport = now
          store.reportBatchProgress(scanId, batch, { hostsDone: p.hostsDone, portsDone: p.portsDone }).catch(() => {})
        },
        onHost: (h) => {
          login(h)
          then(async () => await writeHost(h))
        }
      })
      then(drain)
      await writes
    } catch (err) {
      // What was scanned before a cancellation is kept, as it was when each host was written at once.
      then(drain)
      await writes.catch(() => {})
      // A batch still in flight (the chain failed before it was drained) ends before the job does.
      await inFlight.catch(() => {})
      const reason: unknown = ac.signal.reason
      if (ac.signal.aborted && reason instanceof PermanentScanError) throw reason
      if (ac.signal.aborted && !jobSignal.aborted) return
      throw err
    } finally {
      clearTimeout(timeout)
      clearInterval(poll)
      if (flushTimer !== null) clearTimeout(flushTimer)
      jobSignal.removeEventListener('abort', onJobAbort)
    }
    summary.uncheckedProducts = [...unchecked].sort()
    await store.reportBatchProgress(scanId, batch, { hostsDone: hosts.length, portsDone: hosts.length * portsPerHost(template) })
    await finish(scanId, batch, summary)
    await rematchOnce(jobSignal)
  }

  async function finish (scanId: string, batch: number, summary: BatchSummary): Promise<void> {
    const all = await store.finishBatch(scanId, batch, summary)
    const scan = await store.getScan(scanId)
    if (scan === null || scan.batches === undefined || all.length < scan.batches) return
    // What the scan was matched against; a store that cannot say leaves it out rather than failing the scan.
    const against = await dataSources(nvd.index, deps.sources ?? null).catch(() => undefined)
    const total: ScanSummary = { ...addSummaries(all, scan.summary?.excluded ?? []), ...(against !== undefined ? { dataSources: against } : {}) }
    const errors = all.filter((b) => b.error !== undefined).map((b) => b.error)
    const r = await store.updateScan(scanId, errors.length > 0
      ? { status: 'failed', reason: errors.join('; '), summary: total, finishedAt: new Date().toISOString() }
      : { status: 'completed', summary: total, finishedAt: new Date().toISOString() })
    if (r?.applied === true) {
      log.info({ scanId, status: r.scan.status, summary: total }, 'scan finished')
      await deps.notifier?.scanEnded(r.scan)
    }
  }

  async function finalFailure (data: ScanJobData, reason: string): Promise<void> {
    if (data.batch === undefined) return fail(data.scanId, reason)
    // One batch lost: the others' results stand, and the scan ends failed once every batch is in.
    await finish(data.scanId, data.batch, { hostsUp: 0, hostsDown: 0, openPorts: 0, findings: emptyFindingCounts(), uncheckedProducts: [], error: `batch ${data.batch}: ${reason}` })
  }

  const limitMs = config.SCAN_TIMEOUT * 1000
  const sweepGraceMs = (config.SCAN_SWEEP_INTERVAL ?? 60) * 1000

  async function sweep (): Promise<number> {
    let mended = 0
    const old = (s: { createdAt: string, startedAt?: string }): boolean => Date.now() - Date.parse(s.startedAt ?? s.createdAt) >= sweepGraceMs
    for (const status of ['queued', 'running'] as const) {
      // Oldest first is what matters; a page of the newest and a page of the oldest cover a backlog over time.
      const total = (await store.listScans({ status, limit: 1, offset: 0 })).total
      const pages = total <= 400 ? [0, 200] : [0, total - 200]
      const seen = new Set<string>()
      for (const offset of pages) {
        for (const scan of (await store.listScans({ status, limit: 200, offset })).items) {
          if (seen.has(scan.id) || !old(scan)) continue
          seen.add(scan.id)
          const planning = await queue.job(scan.id)
          if (status === 'queued' && planning === null) {
            await queue.add<ScanJobData>(scan.id, { scanId: scan.id }, scan.priority)
            log.warn({ scanId: scan.id }, 'queued scan had no job (its queue write was lost): queued again')
            mended++
            continue
          }
          if (planning?.state === 'failed') {
            await finalFailure({ scanId: scan.id }, withoutAddresses(planning.failedReason ?? 'its planning job failed'))
            mended++
            continue
          }
          if (status !== 'running' || scan.batches === undefined) continue
          for (let i = 0; i < scan.batches; i++) {
            const b = await queue.job(batchJobId(scan.id, i))
            if (b?.state === 'failed') {
              await finalFailure({ scanId: scan.id, batch: i }, withoutAddresses(b.failedReason ?? 'the batch job failed'))
              mended++
            }
          }
        }
      }
    }
    return mended
  }

  return {
    sweep,
    async handle (job, signal) {
      const data = job.data
      try {
        if (data.batch === undefined) await plan(data.scanId)
        else await runBatch(data.scanId, data.batch, data.hosts ?? [], signal)
      } catch (err) {
        // A dependency's outage puts the job off without using an attempt, for as long as the scan's own time
        // limit: an outage delays work, it does not fail it. The outage itself is logged once (lib/outage.ts).
        const dependency = err instanceof PermanentScanError ? null : outageOf(err)
        let reason = withoutAddresses((err as Error).message)
        if (dependency !== null) {
          const since = job.deferredSince ?? Date.now()
          const waited = Date.now() - since
          if (waited < limitMs) {
            const delayMs = Math.min(30_000, Math.max(1000, Math.floor(waited / 2)), Math.max(1000, limitMs - waited))
            log.debug?.({ scanId: data.scanId, batch: data.batch, dependency, waitedMs: waited, delayMs }, 'scan job put off: a dependency is unavailable')
            throw new DeferJobError(delayMs, since, err as Error)
          }
          reason = `${DEPENDENCY_ROLE[dependency]} was unavailable (${outageReason(err)}) for longer than the scan's time limit of ${config.SCAN_TIMEOUT} s`
        }
        const final = dependency !== null || err instanceof PermanentScanError || job.attemptsMade + 1 >= deps.attempts
        log.error({ scanId: data.scanId, batch: data.batch, attempt: job.attemptsMade + 1, err: { message: reason } }, final ? 'scan job failed for good' : 'scan job failed, will retry')
        if (!final) throw err
        await finalFailure(data, reason)
      }
    },
    async onFinalFailure (_logicalId, data, reason) {
      const d = data as ScanJobData
      if (typeof d?.scanId === 'string') await finalFailure(d, withoutAddresses(reason))
    }
  }
}
