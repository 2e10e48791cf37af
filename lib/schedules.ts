// Schedules: a scan request run at the due times of a cron expression. The timer (lib/queue/*/schedule-timer.ts)
// says when; this file decides what a due time does, through the store's claim, so that each due time starts at
// most one scan whichever process took it, and none while the schedule's previous scan is still in flight.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import type { ScanQueue, ScheduleTimer } from './queue/types'
import type { ScheduledScan, ScheduleRecord, Store } from './store/types'
import { ScanNotQueuedError, submitScan } from './scans'
import { nextRunAfter } from './schedules-cron'
import { DEFAULT_PRIORITY } from './vocabulary'
import { LEGACY_ROLE, roleAllows, SERVICE_PRINCIPAL_ID } from './access'
import { runScope } from './ownership'

export interface ScheduleInput {
  name?: string
  cron: string
  timezone?: string
  enabled?: boolean
  scan: ScheduledScan
}

export const DEFAULT_TIMEZONE = 'UTC'

export function newScheduleRecord (input: ScheduleInput, createdBy: string, keyScope: readonly string[], now = new Date()): ScheduleRecord {
  const at = now.toISOString()
  const enabled = input.enabled ?? true
  const timezone = input.timezone ?? DEFAULT_TIMEZONE
  const next = enabled ? nextRunAfter(input.cron, timezone, now) : null
  return {
    id: randomUUID(),
    runKey: randomBytes(16).toString('base64url'),
    nextRunAt: next === null ? null : next.toISOString(),
    name: input.name ?? '',
    cron: input.cron,
    timezone,
    enabled,
    scan: input.scan,
    createdAt: at,
    updatedAt: at,
    createdBy,
    ...(keyScope.length > 0 ? { keyScope: [...keyScope] } : {}),
    runs: 0,
    skippedTotal: 0,
    skipped: []
  }
}

/** Scan ids in this namespace are the runs of schedules: POST /app/scan refuses them, so no client can take one first. */
export const RESERVED_SCAN_ID_PREFIX = 'schedule.'

export function isReservedScanId (id: string): boolean {
  return id.startsWith(RESERVED_SCAN_ID_PREFIX)
}

/**
 * The scan id of one due time of a schedule: the same in every process, so a retried run finds its scan, in the
 * reserved namespace, and with a tag keyed by the schedule's own secret, so that it cannot be foretold from the
 * schedule's id and next due time. Schedules made before run keys existed are tagged from their id and creation time.
 */
export function scheduledScanId (schedule: Pick<ScheduleRecord, 'id' | 'createdAt' | 'runKey'>, dueAt: Date): string {
  const due = String(dueAt.getTime())
  const tag = schedule.runKey !== undefined
    ? createHmac('sha256', schedule.runKey).update(`${schedule.id}.${due}`).digest('base64url').slice(0, 16)
    : createHash('sha256').update(`${schedule.id}.${schedule.createdAt}.${due}`).digest('base64url').slice(0, 16)
  return `${RESERVED_SCAN_ID_PREFIX}${schedule.id}.${due}.${tag}`
}

/**
 * The next due time as stored (at creation, at each change and after each run: never computed on a read), or,
 * for a schedule stored before due times were kept, computed once here (bounded like every search). Null when
 * disabled or when the expression does not fire within the search horizon.
 */
export function nextRun (schedule: Pick<ScheduleRecord, 'cron' | 'timezone' | 'enabled' | 'nextRunAt'>, now = new Date()): Date | null {
  if (!schedule.enabled) return null
  if (schedule.nextRunAt !== undefined) return schedule.nextRunAt === null ? null : new Date(schedule.nextRunAt)
  return nextRunAfter(schedule.cron, schedule.timezone, now)
}

/** Make the timer hold exactly the enabled schedules of the store (after a restart, or an edit that failed half-way). */
export async function syncScheduleTimer (store: Store, timer: ScheduleTimer): Promise<void> {
  const enabled = new Map<string, ScheduleRecord>()
  for (let offset = 0; ; offset += 500) {
    const page = await store.listSchedules({ limit: 500, offset })
    for (const s of page.items) if (s.enabled) enabled.set(s.id, s)
    if (page.items.length < 500) break
  }
  const registered = new Set(await timer.ids())
  for (const id of registered) if (!enabled.has(id)) await timer.remove(id)
  for (const [id, s] of enabled) if (!registered.has(id)) await timer.upsert(id, s.cron, s.timezone)
}

export interface ScheduleRunnerLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

/** What one due time does: claim it in the store, then start its scan (or record it skipped). */
export function createScheduleRunner (deps: { store: Store, queue: ScanQueue, timer: ScheduleTimer, log: ScheduleRunnerLogger }): (scheduleId: string, dueAt: Date) => Promise<void> {
  const { store, queue, timer, log } = deps
  // A failure is said here and thrown on: BullMQ tries the due time again, and the claim makes that safe.
  return async (scheduleId, dueAt) => {
    try {
      await runDue(scheduleId, dueAt)
    } catch (err) {
      log.warn({ scheduleId, dueAt: dueAt.toISOString(), err: { message: (err as Error).message } }, 'scheduled run failed')
      throw err
    }
  }

  async function runDue (scheduleId: string, dueAt: Date): Promise<void> {
    const current = await store.getSchedule(scheduleId)
    if (current === null) {
      await timer.remove(scheduleId)
      return
    }
    const owner = await ownerNow(store, current.createdBy)
    // The scope the run is held to: what the schedule was given, narrowed by what its owner may scan now.
    const scope = 'refused' in owner ? null : runScope(current.keyScope, owner.scope)
    if ('refused' in owner || scope === null) {
      const why = 'refused' in owner ? owner.refused : `the API key ${current.createdBy} that made the schedule may no longer scan any address the schedule was given`
      log.warn({ scheduleId, dueAt: dueAt.toISOString(), createdBy: current.createdBy }, `scheduled run refused: ${why}`)
      await noteNext(current, dueAt)
      return
    }
    const scanId = scheduledScanId(current, dueAt)
    const missed = missedSince(current, dueAt)
    const claim = await store.claimScheduleRun(scheduleId, dueAt, scanId, missed)
    if (missed.length > 0 && (claim.outcome === 'run' || claim.outcome === 'skipped')) {
      log.warn({ scheduleId, dueAt: dueAt.toISOString(), missed: missed.length, first: missed[0].toISOString() },
        'scheduled runs missed while no worker ran: the first runs late, the later ones are recorded skipped')
    }
    if (claim.outcome === 'run' || claim.outcome === 'skipped') await noteNext(claim.schedule, dueAt)
    switch (claim.outcome) {
      case 'gone':
        // Deleted while its timer was armed: the timer goes too.
        await timer.remove(scheduleId)
        return
      case 'disabled':
      case 'stale':
        return
      case 'skipped':
        log.warn({ scheduleId, dueAt: dueAt.toISOString(), inFlight: claim.inFlight }, 'scheduled run skipped: the previous scan is still in flight')
        return
    }
    const s = claim.schedule
    const submitted = await submitScan({ store, queue }, {
      id: scanId, targets: s.scan.targets, options: s.scan.options, priority: s.scan.priority ?? DEFAULT_PRIORITY, tags: s.scan.tags, targetTags: s.scan.targetTags
    }, { owner: s.createdBy, keyScope: scope, scheduleId: s.id },
    // The id is reserved and keyed, so no client could have taken it; a scan that is not this run's is never adopted.
    // Also on a retried claim: an add that failed before is made good, one that succeeded is a no-op.
    (existing) => existing.scheduleId === s.id && existing.createdBy === s.createdBy
    ).catch((err) => { throw err instanceof ScanNotQueuedError ? err.cause : err })
    if (submitted.outcome === 'taken') {
      log.warn({ scheduleId, scanId, createdBy: submitted.scan.createdBy }, 'scheduled run refused: its scan id is taken by a scan that is not this run\'s')
      return
    }
    if (submitted.outcome === 'created') log.info({ scheduleId, scanId, dueAt: dueAt.toISOString() }, 'scheduled scan started')
  }

  /** Keep the next due time after `dueAt` with the schedule, so that reads never compute it. */
  async function noteNext (s: ScheduleRecord, dueAt: Date): Promise<void> {
    const next = s.enabled ? nextRunAfter(s.cron, s.timezone, dueAt) : null
    await store.setScheduleNext(s.id, next === null ? null : next.toISOString(), s.updatedAt)
  }
}

/** Most due times recorded as missed at once, and most looked at (a per-second schedule down for a day has 86,400). */
const MISSED_RECORDED = 50
const MISSED_LOOKED_AT = 1000

/** A due time taken this much later than it was due was missed by the workers, not merely delayed by load. */
const MISSED_AFTER_MS = 60_000

/**
 * The due times after `dueAt` that passed while no worker ran: the timer keeps one job for a schedule, so a due time
 * taken late means every later one up to now made no job at all. `dueAt` itself runs (late); these are recorded
 * skipped (no_worker). Only due times more than a minute old count: a busy worker that takes a due time a few
 * seconds late has missed nothing (the timer's next job is still coming).
 */
export function missedSince (schedule: Pick<ScheduleRecord, 'cron' | 'timezone'>, dueAt: Date, now = new Date()): Date[] {
  const out: Date[] = []
  const before = now.getTime() - MISSED_AFTER_MS
  let t = nextRunAfter(schedule.cron, schedule.timezone, dueAt)
  for (let looked = 0; t !== null && t.getTime() <= before && looked < MISSED_LOOKED_AT; looked++) {
    out.push(t)
    t = nextRunAfter(schedule.cron, schedule.timezone, t)
  }
  return out.slice(0, MISSED_RECORDED)
}

/**
 * Whether the key that made a schedule may still start its scans, and with what scope now: refused when it was
 * revoked, has expired or is now below the operator role. Read at every due time, so that a revocation stops the
 * runs and a narrowed scope narrows them at once.
 */
export async function ownerNow (store: Pick<Store, 'listApiKeys'>, createdBy: string, now = Date.now()): Promise<{ scope: string[] } | { refused: string }> {
  if (createdBy === SERVICE_PRINCIPAL_ID) return { scope: [] }
  const key = (await store.listApiKeys()).find((k) => k.id === createdBy)
  if (key === undefined) return { refused: `the API key ${createdBy} that made the schedule is revoked` }
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) return { refused: `the API key ${createdBy} that made the schedule has expired` }
  const role = key.role ?? LEGACY_ROLE
  if (!roleAllows(role, 'operator')) return { refused: `the API key ${createdBy} that made the schedule is now '${role}', which may not start scans` }
  return { scope: key.scope ?? [] }
}
