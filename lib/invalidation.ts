// Invalidation messages between the processes of one service: "what you cached about X is stale". On Redis a
// pub/sub channel per topic under the store's prefix; in memory, where one process is the whole service, an
// emitter. Subscribers must not trust a cache while the channel is down (messages are lost then), hence
// `live` and `epoch`.
import { EventEmitter } from 'node:events'
import type { Redis } from 'ioredis'

export type InvalidationListener = (message: string) => void

export interface InvalidationChannel {
  /** Tell every process (this one included) that `topic` changed. */
  publish(topic: string, message: string): Promise<void>
  /** Listen to `topic`; returns the function that stops listening. */
  subscribe(topic: string, listener: InvalidationListener): () => void
  /**
   * Resolves once this process has received `message` on `topic` (true), or after `timeoutMs` (false). Started
   * before a change and awaited after it, it holds an answer until the announcement has come back through the
   * channel, by when every other subscriber has been sent it as well.
   */
  received(topic: string, message: string, timeoutMs: number): Promise<boolean>
  /** Whether messages on `topic` are being received right now. */
  live(topic: string): boolean
  /** Changes whenever messages may have been missed (the subscriber connection went down or came back). */
  epoch(): number
  close(): Promise<void>
}

/** The Redis channel of a topic: under the store's prefix, so test and bench prefixes never hear each other. */
export function channelName (prefix: string, topic: string): string {
  return `${prefix}:invalidate:${topic}`
}

/** The one way both channels wait for their own message to come back. */
function awaitMessage (channel: InvalidationChannel, topic: string, message: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const stop = channel.subscribe(topic, (m) => {
      if (m !== message) return
      clearTimeout(timer)
      stop()
      resolve(true)
    })
    const timer = setTimeout(() => { stop(); resolve(false) }, timeoutMs)
  })
}

export class MemoryInvalidation implements InvalidationChannel {
  private readonly emitter = new EventEmitter()

  constructor () {
    this.emitter.setMaxListeners(0)
  }

  async publish (topic: string, message: string): Promise<void> {
    this.emitter.emit(topic, message)
  }

  subscribe (topic: string, listener: InvalidationListener): () => void {
    this.emitter.on(topic, listener)
    return () => { this.emitter.off(topic, listener) }
  }

  received (topic: string, message: string, timeoutMs: number): Promise<boolean> {
    return awaitMessage(this, topic, message, timeoutMs)
  }

  live (): boolean {
    return true
  }

  epoch (): number {
    return 0
  }

  async close (): Promise<void> {
    this.emitter.removeAllListeners()
  }
}

export class RedisInvalidation implements InvalidationChannel {
  private readonly emitter = new EventEmitter()
  /** Channels with listeners here. */
  private readonly wanted = new Set<string>()
  /** Channels whose SUBSCRIBE Redis has answered since the subscriber connection last came up. */
  private readonly subscribed = new Set<string>()
  private generation = 0

  /** `subscriber` is a connection of its own (subscribe mode); `publisher` any command connection. */
  constructor (private readonly subscriber: Redis, private readonly publisher: Redis, private readonly prefix: string) {
    this.emitter.setMaxListeners(0)
    subscriber.on('message', (channel: string, message: string) => {
      if (channel.startsWith(`${prefix}:invalidate:`)) this.emitter.emit(channel, message)
    })
    // Whatever was published while the connection was down is gone: nothing is live until Redis has answered
    // a SUBSCRIBE on the new connection (ioredis resubscribes too, but says nothing when that is done).
    subscriber.on('close', () => {
      this.subscribed.clear()
      this.generation++
    })
    subscriber.on('ready', () => {
      this.generation++
      for (const channel of this.wanted) this.confirm(channel)
    })
  }

  private confirm (channel: string): void {
    this.subscriber.subscribe(channel).then(() => {
      if (!this.wanted.has(channel)) return
      this.subscribed.add(channel)
      this.generation++
    }).catch(() => { this.subscribed.delete(channel) })
  }

  async publish (topic: string, message: string): Promise<void> {
    await this.publisher.publish(channelName(this.prefix, topic), message)
  }

  subscribe (topic: string, listener: InvalidationListener): () => void {
    const channel = channelName(this.prefix, topic)
    this.emitter.on(channel, listener)
    if (this.emitter.listenerCount(channel) === 1) {
      this.wanted.add(channel)
      this.confirm(channel)
    }
    return () => {
      this.emitter.off(channel, listener)
      if (this.emitter.listenerCount(channel) === 0) {
        this.wanted.delete(channel)
        this.subscribed.delete(channel)
        this.subscriber.unsubscribe(channel).catch(() => {})
      }
    }
  }

  received (topic: string, message: string, timeoutMs: number): Promise<boolean> {
    if (!this.live(topic)) return Promise.resolve(false)
    return awaitMessage(this, topic, message, timeoutMs)
  }

  live (topic: string): boolean {
    return this.subscriber.status === 'ready' && this.subscribed.has(channelName(this.prefix, topic))
  }

  epoch (): number {
    return this.generation
  }

  async close (): Promise<void> {
    this.emitter.removeAllListeners()
    this.wanted.clear()
    this.subscribed.clear()
  }
}
