import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { describeError } from '../../../lib/outage'
import { errors, paging, ref, reply } from '../../../schemas/common'
import { PageScheduleSchema, ScheduleCreateSchema, ScheduleIdParamsSchema, ScheduleListQuerySchema, SchedulePatchSchema, ScheduleSchema } from '../../../schemas/schedule'
import { CredentialError, CredentialScopeError, KeyScopeError, NotFoundError, ScheduleError, SchedulerUnavailableError, ScopeError, TargetError, TooManySchedulesError } from '../../../lib/errors'
import { CredentialInputError } from '../../../lib/credentials/vault'
import { scanLimits, scanRequestProblem } from '../../../lib/scans'
import { keyScopeProblem } from '../../../lib/access'
import { cronProblem, nextRunAfter } from '../../../lib/schedules-cron'
import { newScheduleRecord, nextRun } from '../../../lib/schedules'
import type { ScheduledScan, ScheduleRecord } from '../../../lib/store/types'
import type { FastifyBaseLogger } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { Principal } from '../../../plugins/auth'

/** What leaves the server about a schedule: no creator key, no key scope; the next due time computed now. */
function publicSchedule (s: ScheduleRecord): Static<typeof ScheduleSchema> {
  const next = nextRun(s)
  return {
    id: s.id,
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    enabled: s.enabled,
    scan: s.scan,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    nextRunAt: next === null ? null : next.toISOString(),
    lastRun: s.lastRun ?? null,
    runs: s.runs,
    skippedTotal: s.skippedTotal,
    skipped: s.skipped
  }
}

const schedules: FastifyPluginAsyncTypebox = async (fastify) => {
  const limits = scanLimits(fastify.config)

  /** The same checks as POST /app/scan, under `scan.`, with the scope of the key that sends it. */
  const checkScan = async (scan: ScheduledScan, principal: Principal | null): Promise<ScheduledScan> => {
    const problem = scanRequestProblem(scan, limits)
    if (problem !== null) throw problem.scope ? new ScopeError(`scan.${problem.message}`) : new TargetError(`scan.${problem.message}`)
    const outside = keyScopeProblem(scan.targets ?? [], principal?.scope ?? [])
    if (outside !== null) throw new KeyScopeError(`scan: ${outside}`)
    // Credentials named by name are kept by id: a later rename or a new credential of that name changes no schedule.
    const credentials = await fastify.credentials.forScan(scan.options?.credentials, scan.targets ?? []).catch((err) => {
      if (err instanceof CredentialInputError) throw err.kind === 'scope' ? new CredentialScopeError(`scan.${err.message}`) : new CredentialError(`scan.${err.message}`)
      throw err
    })
    return credentials === undefined ? scan : { ...scan, options: { ...scan.options, credentials } }
  }

  const cronLimits = { minIntervalSeconds: fastify.config.SCHEDULE_MIN_INTERVAL }
  const checkCron = (cron: string, timezone: string): void => {
    const problem = cronProblem(cron, timezone, cronLimits)
    if (problem !== null) throw new ScheduleError(problem)
  }

  /** Each key may keep SCHEDULE_MAX_PER_KEY schedules: every due time of each costs the workers a search and a scan. */
  const checkCount = async (owner: string): Promise<void> => {
    const max = fastify.config.SCHEDULE_MAX_PER_KEY
    const { total } = await fastify.store.listSchedules({ limit: 0, offset: 0, where: (s) => s.createdBy === owner })
    if (total >= max) throw new TooManySchedulesError(`This key already has ${total} schedules, the most it may keep (SCHEDULE_MAX_PER_KEY); delete one first`)
  }

  /** Bring the timer in line with a stored schedule; the store has it already, so a worker start makes it good. */
  const arm = async (s: ScheduleRecord | null, id: string, log: FastifyBaseLogger): Promise<void> => {
    try {
      if (s !== null && s.enabled) await fastify.backends.scheduler.upsert(s.id, s.cron, s.timezone)
      else await fastify.backends.scheduler.remove(id)
    } catch (err) {
      log.error({ error: describeError(err), scheduleId: id }, 'could not update the schedule timer')
      throw new SchedulerUnavailableError()
    }
  }

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'createSchedule',
      tags: ['schedules'],
      summary: 'Create a schedule',
      description: 'A scan (checked as POST /app/scan checks it, with the scope of this key, which every run keeps) started at ' +
        'each due time of a cron expression read in a time zone. A run that comes due while the previous run\'s scan is still ' +
        'queued or running is skipped and recorded. Each run\'s scan carries `scheduleId` and has an id in the reserved ' +
        '`schedule.` namespace. The schedule belongs to this key: each run is held to the scope it was given narrowed by this ' +
        'key\'s scope at that time, and stops when the key is revoked or loses the operator role. Runs must be ' +
        'SCHEDULE_MIN_INTERVAL seconds apart at least and the expression must fire within four years (400 otherwise); a key ' +
        'keeps at most SCHEDULE_MAX_PER_KEY schedules (409 beyond).',
      body: ref(ScheduleCreateSchema),
      response: { 201: reply(ScheduleSchema, 'The schedule, with its next due time'), ...errors(400, 401, 403, 409, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const body = request.body
    const timezone = body.timezone ?? 'UTC'
    checkCron(body.cron, timezone)
    const scan = await checkScan(body.scan, request.principal)
    await checkCount(request.principal?.id ?? 'unknown')
    const record = newScheduleRecord({ ...body, scan, timezone }, request.principal?.id ?? 'unknown', request.principal?.scope ?? [])
    await fastify.store.createSchedule(record)
    request.auditTarget = record.id
    await arm(record, record.id, request.log)
    request.log.info({ scheduleId: record.id, cron: record.cron, timezone: record.timezone }, 'schedule created')
    return reply.code(201).send(publicSchedule(record))
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'listSchedules',
      tags: ['schedules'],
      summary: 'List schedules',
      description: 'Newest first. A key with a scope sees the schedules it made and those whose targets lie in its scope.',
      querystring: ScheduleListQuerySchema,
      response: { 200: reply(PageScheduleSchema, 'A page of schedules'), ...errors(400, 401, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const where = fastify.owned.filter(request, 'schedule')
    const page = await fastify.store.listSchedules({ limit, offset, ...(where === null ? {} : { where }) })
    return { items: page.items.map(publicSchedule), total: page.total, limit, offset }
  })

  fastify.get('/:id', {
    schema: {
      operationId: 'getSchedule',
      tags: ['schedules'],
      summary: 'Get a schedule',
      description: 'Its definition, next due time, last run with its scan id, and the runs it skipped.',
      params: ScheduleIdParamsSchema,
      response: { 200: reply(ScheduleSchema, 'The schedule'), ...errors(400, 401, 404, 429, 503) }
    }
  }, async (request) => publicSchedule(await fastify.owned.read(request, 'schedule', request.params.id)))

  fastify.patch('/:id', {
    schema: {
      operationId: 'updateSchedule',
      tags: ['schedules'],
      summary: 'Change a schedule',
      description: 'Changes the given fields (`scan` is replaced whole, checked with the scope of this key, which its runs keep from ' +
        'then on); the run history ' +
        'stays. `enabled: false` stops the runs; a scan already started goes on. Only the key that made the schedule, or an ' +
        'admin, may change it (403); a schedule this key may not see is a 404.',
      params: ScheduleIdParamsSchema,
      body: ref(SchedulePatchSchema),
      response: { 200: reply(ScheduleSchema, 'The changed schedule'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    const current = await fastify.owned.change(request, 'schedule', id)
    const body = request.body
    const cron = body.cron ?? current.cron
    const timezone = body.timezone ?? current.timezone
    if (body.cron !== undefined || body.timezone !== undefined) checkCron(cron, timezone)
    const scan = body.scan === undefined ? undefined : await checkScan(body.scan, request.principal)
    const keyScope = body.scan === undefined ? {} : { keyScope: [...(request.principal?.scope ?? [])] }
    const now = new Date()
    const next = (body.enabled ?? current.enabled) ? nextRunAfter(cron, timezone, now) : null
    const updated = await fastify.store.updateSchedule(id, { ...body, ...(scan !== undefined ? { scan } : {}), ...keyScope, nextRunAt: next === null ? null : next.toISOString(), updatedAt: now.toISOString() })
    if (updated === null) throw new NotFoundError(`No schedule with id '${id}'`)
    await arm(updated, id, request.log)
    request.log.info({ scheduleId: id, enabled: updated.enabled }, 'schedule changed')
    return publicSchedule(updated)
  })

  fastify.delete('/:id', {
    schema: {
      operationId: 'deleteSchedule',
      tags: ['schedules'],
      summary: 'Delete a schedule',
      description: 'No further run starts; scans it started stay, with their `scheduleId`. Only the key that made the schedule, or an admin, may delete it (403).',
      params: ScheduleIdParamsSchema,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const { id } = request.params
    await fastify.owned.change(request, 'schedule', id)
    if (!(await fastify.store.deleteSchedule(id))) throw new NotFoundError(`No schedule with id '${id}'`)
    await arm(null, id, request.log)
    request.log.info({ scheduleId: id }, 'schedule deleted')
    return reply.code(204).send()
  })
}

export default schedules
