// A batch job: its hosts scanned (with logins where the scan names credentials), each host matched as its scan
// ends, and the hosts written in batches; then the batch's summary is handed to `finish`. A batch stops within
// `cancelPollMs` of a cancellation and at the scan's time limit; what it scanned before either is kept.
import { scanHosts } from '../scanner/engine'
import { templatePortRunner, templateSet } from '../templates/index'
import { getTemplate } from '../scanner/templates'
import type { ExpandedHost } from '../scanner/targets'
import type { HostResult } from '../domain/hosts'
import type { Template } from '../scanner/types'
import { isTerminal, type BatchSummary, type ScanRecord } from '../store/types'
import { addCredentialed, emptyCredentialed, emptyFindingCounts } from '../store/scan-progress'
import { HOST_PORT } from '../credentialed/packages'
import { matchHost } from './host-match'
import { hostLogins, type HostLogins } from './host-logins'
import { HostWriteBatcher, type PendingWrite } from './write-batcher'
import { PermanentScanError, portsPerHost, type RunnerDeps, type WorkerMatchDeps } from './types'

const PROGRESS_INTERVAL_MS = 300

export interface BatchContext {
  deps: RunnerDeps
  matchDeps: WorkerMatchDeps
  cancelPollMs: number
  writeBatchHosts: number
  writeBatchMs: number
  finish: (scanId: string, batch: number, summary: BatchSummary) => Promise<void>
  rematch: (signal: AbortSignal) => Promise<void>
}

/** A signal that aborts on the job's own abort, at the scan's time limit, and when the scan is cancelled (a state in the store). */
function batchSignal (ctx: BatchContext, scanId: string, jobSignal: AbortSignal): { ac: AbortController, stop: () => void } {
  const { store, config } = ctx.deps
  const ac = new AbortController()
  const timeout = setTimeout(() => ac.abort(new PermanentScanError(`time limit of ${config.SCAN_TIMEOUT} s exceeded`)), config.SCAN_TIMEOUT * 1000)
  const onJobAbort = (): void => ac.abort(jobSignal.reason)
  jobSignal.addEventListener('abort', onJobAbort, { once: true })
  // Cancellation is a state in the store, so it reaches this batch whichever API instance took it.
  const poll = setInterval(() => {
    store.getScan(scanId).then((s) => {
      if (s === null || s.status === 'cancelled') ac.abort(new Error('cancelled'))
    }, () => {})
  }, ctx.cancelPollMs)
  return {
    ac,
    stop: () => {
      clearTimeout(timeout)
      clearInterval(poll)
      jobSignal.removeEventListener('abort', onJobAbort)
    }
  }
}

/** Writes one batch of hosts: the webhook outbox first, then the hosts, then the events of what is new. */
function committer (ctx: BatchContext, scan: ScanRecord, summary: BatchSummary): (batch: PendingWrite[]) => Promise<void> {
  const { store, results, notifier } = ctx.deps
  return async (batch) => {
    // The findings this write may make new go into the webhook outbox first: a crash after the commit and
    // before their events are queued leaves them there for the relay, rather than lost.
    const keys = await notifier?.recordFindings(scan, batch.map((p) => ({ address: p.write.host.address, at: p.write.at, candidates: p.findings }))) ?? []
    const counts = await results.recordHosts(batch.map((p) => p.write))
    // The summary counts what the scan observed as every other view counts it (lib/finding-counts.ts): standing
    // findings after the write, so that a finding a user accepted before is not counted here and left out elsewhere.
    for (const c of counts) for (const [s, n] of Object.entries(c.standing)) summary.findings[s as keyof typeof summary.findings] += n
    const nothingNew: string[] = []
    for (const [i, p] of batch.entries()) {
      const key = keys[i] ?? null
      if (counts[i].newFindings > 0) await notifier?.findingsNew(scan, p.write.host.address, p.write.at, p.findings, key)
      else if (key !== null) nothingNew.push(key)
    }
    if (nothingNew.length > 0) await store.removeOutbox(nothingNew).catch(() => {})
  }
}

interface HostStep {
  ctx: BatchContext
  scan: ScanRecord
  template: Template
  signal: AbortSignal
  summary: BatchSummary
  logins: HostLogins
  writer: HostWriteBatcher
  available: Map<string, boolean>
  unchecked: Set<string>
  /** Wall time of the batch's stages, logged when it ends ('batch timings'). */
  timings: BatchTimings
}

interface BatchTimings { discoveryMs: number, portScanMs: number, detectionMs: number, matchMs: number, writeMs: number, tailMs: number }

/** `fn` with its wall time added to `timings[key]`. */
async function timed<T> (timings: BatchTimings, key: keyof BatchTimings, fn: () => Promise<T>): Promise<T> {
  const at = performance.now()
  try {
    return await fn()
  } finally {
    timings[key] += performance.now() - at
  }
}

/** One scanned host: counted, its login's outcome taken in, matched, and queued for writing. */
async function writeHost (s: HostStep, host: HostResult): Promise<void> {
  const { ctx, scan, template, summary } = s
  const { results, nvd, store, log } = ctx.deps
  if (host.up) summary.hostsUp++
  else summary.hostsDown++
  // Down hosts nobody has seen before are not worth a record; known ones are marked down.
  if (!host.up && !s.writer.holds(host.address) && (await results.getHost(host.address)) === null) return
  const credentialed = await s.logins.result(host)
  const installed = credentialed !== null && 'findings' in credentialed ? credentialed.installed : undefined
  const m = await timed(s.timings, 'matchMs', async () => await matchHost({ matchDeps: ctx.matchDeps, nvd, store }, host, template, s.signal, s.available, installed))
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
      log.warn({ scanId: scan.id, address: host.address, reason: credentialed.failed.reason, message: credentialed.failed.message }, 'credentialed login failed')
    }
  }
  for (const p of m.unchecked) s.unchecked.add(p)
  summary.openPorts += host.ports.filter((p) => p.state === 'open').length
  if (template.udp) summary.openUdpPorts = (summary.openUdpPorts ?? 0) + host.ports.filter((p) => p.state === 'open' && p.protocol === 'udp').length
  const at = new Date().toISOString()
  // The scan's tags go on the hosts it found up, in the same write as what it found there.
  const tags = host.up && scan.tags !== undefined && scan.tags.length > 0 ? { tags: scan.tags } : {}
  await s.writer.add({
    write: {
      scanId: scan.id,
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
}

/** The templates hook of a batch: the configured set, intrusive ones only when the scan asked for them. */
function portTemplates (config: BatchContext['deps']['config'], intrusive: boolean, log: BatchContext['deps']['log']): ReturnType<typeof templatePortRunner> {
  if (config.TEMPLATES_DIR === undefined) return undefined
  try {
    const set = templateSet({ TEMPLATES_DIR: config.TEMPLATES_DIR, TEMPLATES_SIGNING_CERT: config.TEMPLATES_SIGNING_CERT ?? '', TEMPLATES_REQUIRE_SIGNED: config.TEMPLATES_REQUIRE_SIGNED ?? false })
    return templatePortRunner(set.templates, { intrusive })
  } catch (err) {
    log.warn({ err: { message: (err as Error).message } }, 'templates could not be loaded; the scan runs without them')
    return undefined
  }
}

export async function runBatch (ctx: BatchContext, scanId: string, batch: number, hosts: ExpandedHost[], jobSignal: AbortSignal): Promise<void> {
  const { store, nvd, config, log } = ctx.deps
  const scan = await store.getScan(scanId)
  if (scan === null || isTerminal(scan.status)) return
  const template = getTemplate(scan.template, scan.ports, { udp: scan.udp, udpPorts: scan.udpPorts })
  // An nvd:import run by another process since the last batch is matched against from now on.
  if (template.nvd) {
    await nvd.index.refresh().catch((err) => log.warn({ err: { message: (err as Error).message } }, 'reloading the NVD index failed'))
    ctx.matchDeps.sources?.recheck()
  }
  const { ac, stop } = batchSignal(ctx, scanId, jobSignal)
  const summary: BatchSummary = { hostsUp: 0, hostsDown: 0, openPorts: 0, findings: emptyFindingCounts(), uncheckedProducts: [] }
  const credentialIds = scan.credentials ?? []
  if (credentialIds.length > 0) summary.credentialed = emptyCredentialed()
  const timings: BatchTimings = { discoveryMs: 0, portScanMs: 0, detectionMs: 0, matchMs: 0, writeMs: 0, tailMs: 0 }
  const commit = committer(ctx, scan, summary)
  const step: HostStep = {
    ctx,
    scan,
    template,
    signal: ac.signal,
    summary,
    logins: hostLogins({ scanId, credentialIds, credentialed: ctx.deps.credentialed, matchDeps: ctx.matchDeps, nvd, log, signal: ac.signal }),
    writer: new HostWriteBatcher({ hosts: ctx.writeBatchHosts, waitMs: ctx.writeBatchMs, commit: async (b) => { await timed(timings, 'writeMs', async () => { await commit(b) }) } }),
    available: new Map(),
    unchecked: new Set(),
    timings
  }
  let lastReport = 0
  try {
    await scanHosts(hosts, {
      template,
      templates: portTemplates(config, scan.intrusive === true, log),
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
        step.logins.login(h)
        step.writer.then(async () => await writeHost(step, h))
      },
      onStages: (st) => { Object.assign(timings, st) }
    })
    // What matching and writing still had to do once the scan of the network was over.
    await timed(timings, 'tailMs', async () => { await step.writer.settle() })
  } catch (err) {
    // What was scanned before a cancellation is kept, as it was when each host was written at once; a batch
    // still in flight ends before the job does.
    await step.writer.abandon()
    const reason: unknown = ac.signal.reason
    if (ac.signal.aborted && reason instanceof PermanentScanError) throw reason
    if (ac.signal.aborted && !jobSignal.aborted) return
    throw err
  } finally {
    stop()
    step.writer.stop()
  }
  log.info({ scanId, batch, hosts: hosts.length, ...Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)])) }, 'batch timings')
  summary.uncheckedProducts = [...step.unchecked].sort()
  await store.reportBatchProgress(scanId, batch, { hostsDone: hosts.length, portsDone: hosts.length * portsPerHost(template) })
  await ctx.finish(scanId, batch, summary)
  await ctx.rematch(jobSignal)
}
