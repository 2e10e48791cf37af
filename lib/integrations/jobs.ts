// When integrations sync: after each completed scan (from the webhook outbox, so a crash cannot lose the trigger),
// after a decision, and on demand. Each request is one job on the integrations queue (BullMQ on Redis, with its
// attempts and doubling backoff; timers in process on the embedded default); a job that fails is tried again,
// and since a sync reconciles everything, the next one makes good whatever an earlier one left.
import { randomUUID } from 'node:crypto'
import { PermanentJobError, type DeliveryHandler, type DeliveryQueue } from '../queue/types'
import { syncIntegration, SyncError, type SyncDeps } from './sync'
import type { IntegrationStore } from './types'

export const SYNC_EVENT = 'integration.sync'

export interface SyncRequests {
  /** Queue a sync of one integration; `reason` names it (scan:<id>, decision:<finding>, manual). Returns the job's reason id. */
  one(integrationId: string, reason: string): Promise<string>
  /** Queue a sync of every enabled integration. */
  all(reason: string): Promise<void>
}

export function syncRequests (store: IntegrationStore, queue: DeliveryQueue): SyncRequests {
  const one = async (integrationId: string, reason: string): Promise<string> => {
    // The queue runs an id once: a scan's trigger relayed twice syncs once; a manual one is always new.
    const id = reason === 'manual' || reason.startsWith('decision:') ? `${reason}:${randomUUID()}` : reason
    await queue.add(`${SYNC_EVENT}:${integrationId}:${id}`, { webhookId: integrationId, event: SYNC_EVENT, eventId: id, body: '' })
    return id
  }
  return {
    one,
    async all (reason) {
      for (let offset = 0; ; offset += 200) {
        const page = await store.list({ limit: 200, offset })
        for (const i of page.items) if (i.enabled) await one(i.id, reason)
        if (page.items.length < 200) return
      }
    }
  }
}

/** The integrations queue's handler: the job's `webhookId` is the integration's id. */
export function createSyncHandler (deps: SyncDeps): DeliveryHandler {
  return async (job, attempt, final) => {
    try {
      await syncIntegration(deps, job.webhookId)
    } catch (err) {
      deps.log.warn({ integrationId: job.webhookId, reason: job.eventId, attempt, error: (err as Error).message }, final ? 'integration sync failed for good; the next sync tries again' : 'integration sync failed, will retry')
      if (err instanceof SyncError && err.permanent) throw new PermanentJobError(err.message)
      throw err
    }
  }
}
