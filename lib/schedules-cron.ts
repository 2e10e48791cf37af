// Cron expressions and time zones, read with cron-parser: the parser BullMQ's job schedulers use, so the next run
// the API shows is the one the Redis backend fires, and the embedded timer fires the same times.
import { CronExpressionParser } from 'cron-parser'

/** Whether the runtime knows an IANA time zone name. */
function knownTimeZone (tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz }).format(0)
    return true
  } catch {
    return false
  }
}

/** What is wrong with a cron expression read in a time zone, as a sentence naming the field, or null. */
export function cronProblem (cron: string, timezone: string): string | null {
  if (!knownTimeZone(timezone)) return `timezone '${timezone}' is not an IANA time zone (e.g. UTC, Europe/Paris)`
  const fields = cron.trim().split(/\s+/)
  if (!cron.trim().startsWith('@') && (fields.length < 5 || fields.length > 6)) {
    return `cron '${cron}' has ${fields.length} field${fields.length === 1 ? '' : 's'}; expected 5 (minute hour day month weekday) or 6 (second first)`
  }
  try {
    CronExpressionParser.parse(cron, { tz: timezone, currentDate: new Date() }).next()
  } catch (err) {
    const message = (err as Error).message
    return /out of the timespan range|Invalid explicit day of month|unhandled timestamp/i.test(message)
      ? `cron '${cron}' never fires`
      : `cron '${cron}' is not valid: ${message}`
  }
  return null
}

/** The first due time strictly after `from`, or null when the expression never fires again. */
export function nextRunAfter (cron: string, timezone: string, from: Date): Date | null {
  try {
    return CronExpressionParser.parse(cron, { tz: timezone, currentDate: from }).next().toDate()
  } catch {
    return null
  }
}
