// Cron expressions and time zones, read with cron-parser: the parser BullMQ's job schedulers use, so the next run
// the API shows is the one the Redis backend fires, and the embedded timer fires the same times.
//
// The parser finds a due time by stepping through the calendar, which costs in proportion to how far away it is:
// `0 0 * 2 1#5` (a fifth Monday in February, next in 2044) took 45-150 ms, and `0 0 31 4,6,9,11 *` (a 31st of a
// 30-day month, never) 1.1 s before the parser gave up. So every search here stops at HORIZON_MS, an expression must
// fire within it, and days that no month has are refused before any search.
import { CronExpressionParser, type CronExpression } from 'cron-parser'

/**
 * How far ahead a due time is looked for: four years and two days, so that a yearly run and a leap day (29 February)
 * are found from any date, and the search costs a few milliseconds at most.
 */
export const HORIZON_MS = (4 * 365 + 3) * 86_400_000

/** Whether the runtime knows an IANA time zone name. */
function knownTimeZone (tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz }).format(0)
    return true
  } catch {
    return false
  }
}

/** The most days each month (1..12) may have: February's 29 in a leap year. */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

type Fields = CronExpression['fields']

/** Whether some listed month has one of the listed days: `31 4,6,9,11` never fires, whatever the year. */
function someDayExists (fields: Fields): boolean {
  const all: readonly unknown[] = fields.dayOfMonth.values
  const days = all.filter((d): d is number => typeof d === 'number')
  // 'L' (the last day) and other special days exist in every month.
  if (days.length < all.length) return true
  return fields.month.values.some((m) => days.some((d) => d <= MONTH_DAYS[Number(m) - 1]))
}

/** A field's values as numbers, in order. */
function numbers (values: readonly (number | string)[]): number[] {
  return values.map(Number).filter((n) => Number.isFinite(n)).sort((a, b) => a - b)
}

/** The shortest gap, in units, between two consecutive values of a field that wraps at `cycle` (59 → 0 is one step). */
function shortestGap (values: number[], cycle: number): number {
  if (values.length < 2) return cycle
  let gap = values[0] + cycle - values[values.length - 1]
  for (let i = 1; i < values.length; i++) gap = Math.min(gap, values[i] - values[i - 1])
  return gap
}

/**
 * The shortest time between two runs the expression can make, in seconds, from its fields: several seconds a minute
 * give the gap between seconds, else several minutes an hour the gap between minutes, else several hours a day the
 * gap between hours; a single time a day, a day. It never overestimates: a gap across the hour or midnight counts
 * even when the next hour or day is not one of the expression's.
 */
export function shortestInterval (fields: Fields): number {
  const seconds = numbers(fields.second.values)
  if (seconds.length > 1) return shortestGap(seconds, 60)
  const minutes = numbers(fields.minute.values)
  if (minutes.length > 1) return shortestGap(minutes, 60) * 60
  const hours = numbers(fields.hour.values)
  if (hours.length > 1) return shortestGap(hours, 24) * 3600
  return 86_400
}

export interface CronLimits {
  /** Seconds two runs must be apart at least. */
  minIntervalSeconds: number
}

function duration (seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? '' : 's'}`
  return `${seconds} second${seconds === 1 ? '' : 's'}`
}

/** What is wrong with a cron expression read in a time zone, as a sentence naming the field, or null. */
export function cronProblem (cron: string, timezone: string, limits: CronLimits = { minIntervalSeconds: 1 }, now = new Date()): string | null {
  if (!knownTimeZone(timezone)) return `timezone '${timezone}' is not an IANA time zone (e.g. UTC, Europe/Paris)`
  const fields = cron.trim().split(/\s+/)
  if (!cron.trim().startsWith('@') && (fields.length < 5 || fields.length > 6)) {
    return `cron '${cron}' has ${fields.length} field${fields.length === 1 ? '' : 's'}; expected 5 (minute hour day month weekday) or 6 (second first)`
  }
  let parsed: CronExpression
  try {
    parsed = CronExpressionParser.parse(cron, { tz: timezone, currentDate: now })
  } catch (err) {
    return parseProblem(cron, err as Error)
  }
  // With a weekday restricted too, a day matches either (cron's OR): only a day-of-month alone can name no day.
  if (numbers(parsed.fields.dayOfWeek.values).length >= 7 && !someDayExists(parsed.fields)) return `cron '${cron}' never fires: no month it names has that day`
  const interval = shortestInterval(parsed.fields)
  if (interval < limits.minIntervalSeconds) {
    return `cron '${cron}' may fire ${duration(interval)} after its previous run; runs must be at least ${duration(limits.minIntervalSeconds)} apart (SCHEDULE_MIN_INTERVAL)`
  }
  return nextRunAfter(cron, timezone, now) === null ? `cron '${cron}' does not fire within four years` : null
}

function parseProblem (cron: string, err: Error): string {
  return /out of the timespan range|Invalid explicit day of month|unhandled timestamp|loop limit/i.test(err.message)
    ? `cron '${cron}' never fires`
    : `cron '${cron}' is not valid: ${err.message}`
}

/**
 * The first due time strictly after `from` and within HORIZON_MS of it, or null (the expression does not fire so
 * soon, or is not valid). The search never looks further, so it costs a few milliseconds whatever the expression.
 */
export function nextRunAfter (cron: string, timezone: string, from: Date): Date | null {
  try {
    return CronExpressionParser.parse(cron, { tz: timezone, currentDate: from, endDate: new Date(from.getTime() + HORIZON_MS) }).next().toDate()
  } catch {
    return null
  }
}
