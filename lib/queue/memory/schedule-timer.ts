// Schedules on the embedded default: one timer per schedule, set for its next due time by the same cron parser
// BullMQ uses, so both backends read an expression alike. Nothing survives a restart, as with the rest of memory.
import type { DueHandler, ScheduleTimer } from '../types'
import { nextRunAfter } from '../../schedules-cron'

// setTimeout takes at most a signed 32-bit delay; a later due time is reached in steps.
const MAX_DELAY_MS = 2 ** 31 - 1

interface Entry { cron: string, timezone: string, timer?: NodeJS.Timeout }

export class MemoryScheduleTimer implements ScheduleTimer {
  readonly kind = 'memory' as const
  private readonly entries = new Map<string, Entry>()
  private handler: DueHandler | null = null

  async upsert (id: string, cron: string, timezone: string): Promise<void> {
    await this.remove(id)
    const entry: Entry = { cron, timezone }
    this.entries.set(id, entry)
    if (this.handler !== null) this.arm(id, entry, new Date())
  }

  async remove (id: string): Promise<void> {
    const e = this.entries.get(id)
    if (e?.timer !== undefined) clearTimeout(e.timer)
    this.entries.delete(id)
  }

  async ids (): Promise<string[]> {
    return [...this.entries.keys()]
  }

  async process (handler: DueHandler): Promise<void> {
    this.handler = handler
    const now = new Date()
    for (const [id, e] of this.entries) if (e.timer === undefined) this.arm(id, e, now)
  }

  async close (): Promise<void> {
    this.handler = null
    for (const e of this.entries.values()) if (e.timer !== undefined) clearTimeout(e.timer)
    this.entries.clear()
  }

  /** Set the timer for the first due time after `from`. */
  private arm (id: string, entry: Entry, from: Date): void {
    const due = nextRunAfter(entry.cron, entry.timezone, from)
    if (due === null) return
    const wait = (): void => {
      if (this.entries.get(id) !== entry || this.handler === null) return
      const left = due.getTime() - Date.now()
      if (left > 0) {
        entry.timer = setTimeout(wait, Math.min(left, MAX_DELAY_MS))
        return
      }
      // The next due time is set before this one runs: a long run does not move the schedule.
      this.arm(id, entry, due)
      this.handler(id, due).catch(() => {})
    }
    entry.timer = setTimeout(wait, Math.min(Math.max(0, due.getTime() - Date.now()), MAX_DELAY_MS))
  }
}
