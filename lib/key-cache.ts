// Dynamic key records cached in each process, so that a dynamic key costs no store round trip per request.
// Any change to a key (role, scope, revocation) is announced on the invalidation channel and empties the
// cache everywhere; while the channel is down nothing is cached, so a change is never missed.
import type { InvalidationChannel } from './invalidation'
import { API_KEYS_TOPIC, type ApiKeyRecord, type Store } from './store/types'

export interface KeyCacheOptions {
  /** Most records kept; beyond it the cache starts over (keys are few; this bounds a flood of distinct valid keys). */
  maxEntries?: number
  /** A record is read again after this long even without a message: a bound on any message lost in transit. */
  ttlMs?: number
}

interface Entry {
  record: ApiKeyRecord
  epoch: number
  until: number
}

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>()
  /** Bumped on every invalidation: a lookup that started before one must not fill the cache. */
  private generation = 0
  private readonly unsubscribe: () => void
  private readonly maxEntries: number
  private readonly ttlMs: number

  constructor (private readonly store: Pick<Store, 'findApiKey'>, private readonly channel: InvalidationChannel, opts: KeyCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 10_000
    this.ttlMs = opts.ttlMs ?? 60_000
    this.unsubscribe = channel.subscribe(API_KEYS_TOPIC, () => this.clear())
  }

  /** The live, unexpired key with this SHA-256 hash (hex), or null. Unknown hashes are never cached. */
  async find (hash: string): Promise<ApiKeyRecord | null> {
    const now = Date.now()
    const live = this.channel.live(API_KEYS_TOPIC)
    const epoch = this.channel.epoch()
    const hit = this.entries.get(hash)
    if (hit !== undefined && live && hit.epoch === epoch && hit.until > now) {
      if (hit.record.expiresAt === null || Date.parse(hit.record.expiresAt) > now) return hit.record
      this.entries.delete(hash)
      return null
    }
    if (hit !== undefined) this.entries.delete(hash)
    const generation = this.generation
    const record = await this.store.findApiKey(hash)
    if (record !== null && live && generation === this.generation && this.channel.epoch() === epoch && this.channel.live(API_KEYS_TOPIC)) {
      if (this.entries.size >= this.maxEntries) this.entries.clear()
      this.entries.set(hash, { record, epoch, until: now + this.ttlMs })
    }
    return record
  }

  clear (): void {
    this.generation++
    this.entries.clear()
  }

  close (): void {
    this.unsubscribe()
    this.entries.clear()
  }
}
