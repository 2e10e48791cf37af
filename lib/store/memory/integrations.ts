// Issue-tracker integrations on the embedded default: maps in this process, gone with it as the rest of memory.
import type { ListOptions, Page } from '../types'
import { INTEGRATION_DELIVERIES_KEPT, type IntegrationDelivery, type IntegrationPatch, type IntegrationRecord, type IntegrationStore, type TicketRecord } from '../../integrations/types'

export class MemoryIntegrationStore implements IntegrationStore {
  private readonly records = new Map<string, IntegrationRecord>()
  private readonly tickets = new Map<string, Map<string, TicketRecord>>()
  private readonly deliveries = new Map<string, IntegrationDelivery[]>()
  private readonly locks = new Map<string, { owner: string, until: number, again: boolean }>()

  async create (record: IntegrationRecord): Promise<void> {
    this.records.set(record.id, structuredClone(record))
  }

  async get (id: string): Promise<IntegrationRecord | null> {
    const r = this.records.get(id)
    return r === undefined ? null : structuredClone(r)
  }

  async list (opts: ListOptions): Promise<Page<IntegrationRecord>> {
    const all = [...this.records.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((r) => structuredClone(r)), total: all.length }
  }

  async update (id: string, patch: IntegrationPatch): Promise<IntegrationRecord | null> {
    const r = this.records.get(id)
    if (r === undefined) return null
    const next = { ...r, ...patch }
    this.records.set(id, next)
    return structuredClone(next)
  }

  async delete (id: string): Promise<boolean> {
    this.tickets.delete(id)
    this.deliveries.delete(id)
    return this.records.delete(id)
  }

  async getTicket (integrationId: string, key: string): Promise<TicketRecord | null> {
    const t = this.tickets.get(integrationId)?.get(key)
    return t === undefined ? null : { ...t }
  }

  async putTicket (integrationId: string, ticket: TicketRecord): Promise<void> {
    if (!this.records.has(integrationId)) return
    let m = this.tickets.get(integrationId)
    if (m === undefined) this.tickets.set(integrationId, m = new Map())
    m.set(ticket.key, { ...ticket })
  }

  async listTickets (integrationId: string): Promise<TicketRecord[]> {
    return [...(this.tickets.get(integrationId)?.values() ?? [])].map((t) => ({ ...t }))
  }

  async appendDelivery (delivery: IntegrationDelivery): Promise<void> {
    if (!this.records.has(delivery.integrationId)) return
    let list = this.deliveries.get(delivery.integrationId)
    if (list === undefined) this.deliveries.set(delivery.integrationId, list = [])
    list.unshift({ ...delivery })
    if (list.length > INTEGRATION_DELIVERIES_KEPT) list.length = INTEGRATION_DELIVERIES_KEPT
  }

  async listDeliveries (integrationId: string, opts: ListOptions & { failed?: boolean }): Promise<Page<IntegrationDelivery>> {
    const all = (this.deliveries.get(integrationId) ?? []).filter((d) => opts.failed !== true || !d.ok)
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((d) => ({ ...d })), total: all.length }
  }

  async claimSync (integrationId: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    const held = this.locks.get(integrationId)
    if (held !== undefined && held.until > now && held.owner !== owner) {
      held.again = true
      return false
    }
    this.locks.set(integrationId, { owner, until: now + ttlMs, again: false })
    return true
  }

  async releaseSync (integrationId: string, owner: string): Promise<boolean> {
    const held = this.locks.get(integrationId)
    if (held === undefined || held.owner !== owner) return false
    this.locks.delete(integrationId)
    return held.again
  }
}
