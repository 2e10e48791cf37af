// Scan changes as events, so that a stream following a scan waits for a change instead of polling the store.
// On Redis the store publishes the id of every scan it writes on one channel (workers in other processes
// included) and each API process holds one subscriber connection; embedded, the store emits in process.
import { EventEmitter } from 'node:events'
import type { Redis } from 'ioredis'

export interface ScanEvents {
  /** Call `listener` whenever scan `id` may have changed; returns the unsubscribe function. */
  subscribe(id: string, listener: () => void): () => void
  close(): Promise<void>
}

/** The channel a Redis store publishes changed scan ids on. */
export function scanEventsChannel (prefix: string): string {
  return `${prefix}:scan-events`
}

/** Demultiplexes one stream of changed ids into per-scan listeners. */
export class ScanEventHub implements ScanEvents {
  protected readonly emitter = new EventEmitter()

  constructor () {
    // Listeners are bounded by the stream caps, not by EventEmitter's warning threshold.
    this.emitter.setMaxListeners(0)
  }

  changed (id: string): void {
    this.emitter.emit(id)
  }

  subscribe (id: string, listener: () => void): () => void {
    this.emitter.on(id, listener)
    return () => { this.emitter.off(id, listener) }
  }

  async close (): Promise<void> {
    this.emitter.removeAllListeners()
  }
}

/** Redis pub/sub: `subscriber` is a connection of its own (subscriber mode), closed with this. */
export class RedisScanEvents extends ScanEventHub {
  private subscribed: Promise<unknown> | null = null

  constructor (private readonly subscriber: Redis, private readonly channel: string) {
    super()
    subscriber.on('message', (ch: string, id: string) => { if (ch === channel) this.changed(id) })
  }

  override subscribe (id: string, listener: () => void): () => void {
    this.subscribed ??= this.subscriber.subscribe(this.channel).catch(() => { this.subscribed = null })
    return super.subscribe(id, listener)
  }

  override async close (): Promise<void> {
    await super.close()
    this.subscriber.disconnect()
  }
}
