// The byte-level connection every probe talks through: one TCP (or already wrapped TLS) socket,
// replies buffered up to MAX_REPLY_BYTES, one reader at a time, reads bounded by a completeness
// test, a timeout, an idle gap and the detection's abort signal.

import net from 'node:net'
import { MAX_REPLY_BYTES, type ProbeIO } from './probes/common'

/** A connection with bounded buffering and one reader at a time. */
export class Conn implements ProbeIO {
  private pending: Buffer[] = []
  private pendingLen = 0
  private received = 0
  closed = false
  private wake: (() => void) | null = null

  private readonly onData = (chunk: Buffer): void => {
    const room = MAX_REPLY_BYTES - this.received
    if (room <= 0) return
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.received += kept.length
    this.pending.push(kept)
    this.pendingLen += kept.length
    this.wake?.()
  }

  private readonly onEnd = (): void => { this.closed = true; this.wake?.() }

  constructor (readonly socket: net.Socket, private readonly signal: AbortSignal) {
    socket.on('data', this.onData)
    socket.on('end', this.onEnd)
    socket.on('close', this.onEnd)
    socket.on('error', this.onEnd)
  }

  /** A connection, or null when refused, timed out or aborted; `localPort` binds the source port (r-services want one below 1024). */
  static open (host: string, port: number, timeoutMs: number, signal: AbortSignal, localPort?: number): Promise<Conn | null> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(null)
      const socket = net.connect({ host, port, ...(localPort !== undefined ? { localPort } : {}) })
      socket.setNoDelay(true)
      let done = false
      const finish = (ok: boolean): void => {
        if (done) return
        done = true
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        socket.removeListener('error', onError)
        if (!ok) {
          socket.destroy()
          return resolve(null)
        }
        resolve(new Conn(socket, signal))
      }
      const onError = (): void => finish(false)
      const onAbort = (): void => finish(false)
      const timer = setTimeout(() => finish(false), timeoutMs)
      signal.addEventListener('abort', onAbort, { once: true })
      socket.on('error', onError)
      socket.once('connect', () => finish(true))
    })
  }

  write (data: Buffer): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(data)
  }

  get full (): boolean {
    return this.received >= MAX_REPLY_BYTES
  }

  read (done: (reply: Buffer) => boolean, timeoutMs: number, idleMs = 0): Promise<Buffer> {
    return new Promise((resolve) => {
      let idleTimer: NodeJS.Timeout | undefined
      const take = (): Buffer => {
        const out = Buffer.concat(this.pending, this.pendingLen)
        this.pending = []
        this.pendingLen = 0
        return out
      }
      const finish = (): void => {
        clearTimeout(timer)
        clearTimeout(idleTimer)
        this.wake = null
        this.signal.removeEventListener('abort', finish)
        resolve(take())
      }
      const check = (): void => {
        if (this.closed || this.full || this.signal.aborted) return finish()
        if (this.pendingLen > 0) {
          const buf = Buffer.concat(this.pending, this.pendingLen)
          this.pending = [buf]
          if (done(buf)) return finish()
          if (idleMs > 0) {
            clearTimeout(idleTimer)
            idleTimer = setTimeout(finish, idleMs)
          }
        }
      }
      const timer = setTimeout(finish, Math.max(0, timeoutMs))
      this.signal.addEventListener('abort', finish, { once: true })
      this.wake = check
      check()
    })
  }

  /** Hand the raw socket over (to a TLS wrapper); this Conn stops reading but still owns closing it. */
  release (): net.Socket {
    this.socket.removeListener('data', this.onData)
    this.socket.removeListener('end', this.onEnd)
    this.socket.removeListener('close', this.onEnd)
    this.socket.removeListener('error', this.onEnd)
    // The TLS layer reports errors on its own socket; the raw one must not crash the process.
    this.socket.on('error', () => {})
    this.closed = true
    return this.socket
  }

  close (): void {
    this.socket.destroy()
    this.closed = true
  }
}
