import { Type, type Static } from '@sinclair/typebox'
import { ListQueryProperties, pageOf, ref } from './common'
import { ScanOptionsSchema, ScanTagProperties, TargetSchema } from './scan'
import { DEFAULT_PRIORITY, DEFAULT_TEMPLATE, PRIORITY_MAX, PRIORITY_MIN } from '../lib/vocabulary'

const EXAMPLE_SCAN = { targets: [{ value: '192.0.2.0/28', type: 'cidr' }], options: { template: DEFAULT_TEMPLATE }, priority: DEFAULT_PRIORITY }

export const ScheduledScanSchema = Type.Object({
  targets: Type.Optional(Type.Array(ref(TargetSchema), { description: 'What to scan (at most MAX_TARGETS entries), checked as for POST /app/scan; may be left out when `targetTags` names the hosts' })),
  options: Type.Optional(ref(ScanOptionsSchema)),
  priority: Type.Optional(Type.Integer({ minimum: PRIORITY_MIN, maximum: PRIORITY_MAX, default: DEFAULT_PRIORITY, description: `Queue priority from ${PRIORITY_MIN} (least urgent) to ${PRIORITY_MAX} (most urgent)` })),
  ...ScanTagProperties
}, {
  $id: 'ScheduledScan',
  additionalProperties: false,
  description: 'The scan each run starts: the body of POST /app/scan without an id (each run\'s scan gets its own). `targetTags` are ' +
    'looked up at each run, so a schedule follows the hosts as they are tagged; a run whose tags name no host (and that has no ' +
    '`targets`) starts a scan that fails saying so.',
  examples: [EXAMPLE_SCAN, { targetTags: ['prod'], tags: ['nightly'], options: { template: DEFAULT_TEMPLATE } }]
})

export const CronExpressionSchema = Type.String({
  $id: 'CronExpression',
  minLength: 1,
  maxLength: 200,
  description: 'Cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first; `@daily`, `@hourly` … too. ' +
    'An expression that is not valid or never fires is a 400 that says why.',
  examples: ['0 3 * * 1-5']
})
export const TimeZoneSchema = Type.String({ $id: 'TimeZone', minLength: 1, maxLength: 64, description: 'IANA time zone the expression is read in (daylight saving time included); UTC when a new schedule names none', examples: ['Europe/Paris'] })
const CronProperty = ref(CronExpressionSchema)
const TimezoneProperty = ref(TimeZoneSchema)
const NameProperty = Type.String({ maxLength: 200, description: 'What the schedule is for' })

export const ScheduleCreateSchema = Type.Object({
  name: Type.Optional(NameProperty),
  cron: CronProperty,
  timezone: Type.Optional(TimezoneProperty),
  enabled: Type.Optional(Type.Boolean({ default: true, description: 'A disabled schedule starts no scan' })),
  scan: ref(ScheduledScanSchema)
}, {
  $id: 'ScheduleCreate',
  additionalProperties: false,
  examples: [{ name: 'nightly office scan', cron: '0 3 * * 1-5', timezone: 'Europe/Paris', enabled: true, scan: EXAMPLE_SCAN }]
})
export type ScheduleCreate = Static<typeof ScheduleCreateSchema>

export const SchedulePatchSchema = Type.Object({
  name: Type.Optional(NameProperty),
  cron: Type.Optional(CronProperty),
  timezone: Type.Optional(TimezoneProperty),
  enabled: Type.Optional(Type.Boolean({ description: 'A disabled schedule starts no scan' })),
  scan: Type.Optional(ref(ScheduledScanSchema))
}, {
  $id: 'SchedulePatch',
  additionalProperties: false,
  minProperties: 1,
  description: 'The fields to change; `scan` is replaced whole',
  examples: [{ enabled: false }]
})

export const ScheduleSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  cron: Type.String(),
  timezone: Type.String(),
  enabled: Type.Boolean(),
  scan: ref(ScheduledScanSchema),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  nextRunAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the next run is due; null when disabled or the expression never fires again' }),
  lastRun: Type.Union([Type.Object({
    dueAt: Type.String({ format: 'date-time', description: 'The due time of the run' }),
    scanId: Type.String({ description: 'The scan it started (its `scheduleId` is this schedule)' })
  }), Type.Null()], { description: 'The last run that started a scan; null before the first' }),
  runs: Type.Integer({ minimum: 0, description: 'Runs that started a scan' }),
  skippedTotal: Type.Integer({ minimum: 0, description: 'Due times left out: the previous scan was still queued or running, or no worker ran then' }),
  skipped: Type.Array(Type.Object({
    dueAt: Type.String({ format: 'date-time' }),
    inFlight: Type.Optional(Type.String({ description: 'The scan still in flight then (reason in_flight)' })),
    reason: Type.Optional(Type.Union([Type.Literal('in_flight'), Type.Literal('no_worker')], {
      description: '`in_flight`: the previous scan was still queued or running. `no_worker`: no worker ran at that time; when one comes ' +
        'back, the first due time it missed runs late, once, and the later ones are recorded skipped with this reason'
    }))
  }), { description: 'The latest skipped runs, newest first (at most 20)' })
}, {
  $id: 'Schedule',
  examples: [{
    id: '6f1c2e0a-2b7e-4f43-9a55-0c1d7e6b9f10',
    name: 'nightly office scan',
    cron: '0 3 * * 1-5',
    timezone: 'Europe/Paris',
    enabled: true,
    scan: EXAMPLE_SCAN,
    createdAt: '2026-01-05T09:00:00.000Z',
    updatedAt: '2026-01-05T09:00:00.000Z',
    nextRunAt: '2026-01-07T02:00:00.000Z',
    lastRun: { dueAt: '2026-01-06T02:00:00.000Z', scanId: '6f1c2e0a-2b7e-4f43-9a55-0c1d7e6b9f10.1767664800000' },
    runs: 1,
    skippedTotal: 0,
    skipped: []
  }]
})

export const PageScheduleSchema = pageOf(ScheduleSchema, 'PageSchedule')

export const ScheduleListQuerySchema = Type.Object({ ...ListQueryProperties }, { additionalProperties: false })

export const ScheduleIdParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' })
})
