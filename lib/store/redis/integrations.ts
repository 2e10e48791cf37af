// Issue-tracker integrations on Redis: each record a JSON string, the newest-first index a sorted set, the ticket
// map a hash (stable key → ticket), the deliveries a capped list, and the sync lock a key with an expiry.
import type { Redis } from 'ioredis'
import type { ListOptions, Page } from '../types'
import { keySegment } from './key-segment'
import { INTEGRATION_DELIVERIES_KEPT, type IntegrationDelivery, type IntegrationPatch, type IntegrationRecord, type IntegrationStore, type TicketRecord } from '../../integrations/types'

// Release the lock only when this owner still holds it; say whether another sync was asked for meanwhile.
// KEYS: lock, again-flag. ARGV: owner.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return redis.call('DEL', KEYS[2])
end
return 0`

export class RedisIntegrationStore implements IntegrationStore {
  constructor (private readonly redis: Redis, private readonly prefix: string) {}

  private key (id: string, part?: 'tickets' | 'deliveries' | 'lock' | 'again'): string {
    return part === undefined ? `${this.prefix}:integration:${keySegment(id)}` : `${this.prefix}:integration:${keySegment(id)}:${part}`
  }

  private get index (): string {
    return `${this.prefix}:integrations`
  }

  async create (record: IntegrationRecord): Promise<void> {
    await this.redis.multi().set(this.key(record.id), JSON.stringify(record)).zadd(this.index, Date.parse(record.createdAt), record.id).exec()
  }

  async get (id: string): Promise<IntegrationRecord | null> {
    const raw = await this.redis.get(this.key(id))
    return raw === null ? null : JSON.parse(raw) as IntegrationRecord
  }

  async list (opts: ListOptions): Promise<Page<IntegrationRecord>> {
    const [total, ids] = await Promise.all([this.redis.zcard(this.index), this.redis.zrevrange(this.index, opts.offset, opts.offset + opts.limit - 1)])
    if (ids.length === 0) return { items: [], total }
    const raws = await this.redis.mget(ids.map((id) => this.key(id)))
    return { items: raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as IntegrationRecord), total }
  }

  async update (id: string, patch: IntegrationPatch): Promise<IntegrationRecord | null> {
    const key = this.key(id)
    for (let i = 0; i < 10; i++) {
      await this.redis.watch(key)
      const raw = await this.redis.get(key)
      if (raw === null) {
        await this.redis.unwatch()
        return null
      }
      const next = { ...JSON.parse(raw) as IntegrationRecord, ...patch }
      const done = await this.redis.multi().set(key, JSON.stringify(next)).exec()
      if (done !== null) return next
    }
    throw new Error(`integration '${id}' kept changing; try again`)
  }

  async delete (id: string): Promise<boolean> {
    const res = await this.redis.multi().del(this.key(id)).unlink(this.key(id, 'tickets'), this.key(id, 'deliveries')).zrem(this.index, id).exec()
    return res !== null && res[0][1] === 1
  }

  async getTicket (integrationId: string, key: string): Promise<TicketRecord | null> {
    const raw = await this.redis.hget(this.key(integrationId, 'tickets'), key)
    return raw === null ? null : JSON.parse(raw) as TicketRecord
  }

  async putTicket (integrationId: string, ticket: TicketRecord): Promise<void> {
    if (await this.redis.exists(this.key(integrationId)) === 0) return
    await this.redis.hset(this.key(integrationId, 'tickets'), ticket.key, JSON.stringify(ticket))
  }

  async listTickets (integrationId: string): Promise<TicketRecord[]> {
    return (await this.redis.hvals(this.key(integrationId, 'tickets'))).map((v) => JSON.parse(v) as TicketRecord)
  }

  async appendDelivery (delivery: IntegrationDelivery): Promise<void> {
    if (await this.redis.exists(this.key(delivery.integrationId)) === 0) return
    const list = this.key(delivery.integrationId, 'deliveries')
    await this.redis.multi().lpush(list, JSON.stringify(delivery)).ltrim(list, 0, INTEGRATION_DELIVERIES_KEPT - 1).exec()
  }

  async listDeliveries (integrationId: string, opts: ListOptions & { failed?: boolean }): Promise<Page<IntegrationDelivery>> {
    const all = (await this.redis.lrange(this.key(integrationId, 'deliveries'), 0, -1)).map((r) => JSON.parse(r) as IntegrationDelivery)
      .filter((d) => opts.failed !== true || !d.ok)
    return { items: all.slice(opts.offset, opts.offset + opts.limit), total: all.length }
  }

  async claimSync (integrationId: string, owner: string, ttlMs: number): Promise<boolean> {
    const lock = this.key(integrationId, 'lock')
    if (await this.redis.set(lock, owner, 'PX', ttlMs, 'NX') === 'OK') return true
    if (await this.redis.get(lock) === owner) {
      await this.redis.pexpire(lock, ttlMs)
      return true
    }
    await this.redis.set(this.key(integrationId, 'again'), '1', 'PX', ttlMs * 2)
    return false
  }

  async releaseSync (integrationId: string, owner: string): Promise<boolean> {
    const again = await this.redis.eval(RELEASE, 2, this.key(integrationId, 'lock'), this.key(integrationId, 'again'), owner) as number
    return again === 1
  }
}
