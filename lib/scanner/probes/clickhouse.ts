// ClickHouse's native TCP protocol (port 9000): the client's Hello draws the server's Hello, which
// names the server (`ClickHouse`), its major and minor version and, from protocol revision 54401 on,
// its patch number. A server that refuses the login answers an Exception (`DB::Exception`) instead,
// which still names ClickHouse but no version.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [9000]

/** The protocol revision we claim: the lowest at which the server's Hello carries the patch number. */
export const CLIENT_REVISION = 54401

const HELLO = 0
const EXCEPTION = 2

function varint (n: number): Buffer {
  const out: number[] = []
  do {
    let b = n & 0x7f
    n = Math.floor(n / 128)
    if (n > 0) b |= 0x80
    out.push(b)
  } while (n > 0)
  return Buffer.from(out)
}

const str = (s: string): Buffer => Buffer.concat([varint(Buffer.byteLength(s)), Buffer.from(s)])

/** The client's Hello: name, version 1.1 and our revision, the default database, user `default`, no password. */
export function helloRequest (): Buffer {
  return Buffer.concat([varint(HELLO), str('vulnscan'), varint(1), varint(1), varint(CLIENT_REVISION), str(''), str('default'), str('')])
}

/** A reader over the reply that throws RangeError when the bytes run out. */
class Reader {
  off = 0
  constructor (private readonly b: Buffer) {}
  varint (): number {
    let n = 0
    for (let shift = 0; shift < 63; shift += 7) {
      if (this.off >= this.b.length) throw new RangeError('short')
      const byte = this.b[this.off++]
      n += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) return n
    }
    throw new RangeError('varint too long')
  }

  string (max = 4096): string {
    const len = this.varint()
    if (len > max || this.off + len > this.b.length) throw new RangeError('short')
    const s = this.b.subarray(this.off, this.off + len).toString('utf8')
    this.off += len
    return s
  }

  int32 (): number {
    if (this.off + 4 > this.b.length) throw new RangeError('short')
    const v = this.b.readInt32LE(this.off)
    this.off += 4
    return v
  }
}

export interface ServerHello { name: string, major: number, minor: number, revision: number, timezone?: string, displayName?: string, patch?: number }

/** The server's Hello; null unless the bytes are one (so far). */
export function parseHello (reply: Buffer): ServerHello | null {
  try {
    const r = new Reader(reply)
    if (r.varint() !== HELLO) return null
    const name = r.string(64)
    const h: ServerHello = { name, major: r.varint(), minor: r.varint(), revision: r.varint() }
    const rev = Math.min(h.revision, CLIENT_REVISION)
    if (rev >= 54058) h.timezone = r.string(64)
    if (rev >= 54372) h.displayName = r.string(256)
    if (rev >= 54401) h.patch = r.varint()
    return h
  } catch {
    return null
  }
}

/** An Exception packet's name and message; null unless the bytes are one. */
export function parseException (reply: Buffer): { name: string, message: string } | null {
  try {
    const r = new Reader(reply)
    if (r.varint() !== EXCEPTION) return null
    r.int32()
    const name = r.string(256)
    const message = r.string(4096)
    return { name, message }
  } catch {
    return null
  }
}

export function complete (reply: Buffer): boolean {
  return parseHello(reply) !== null || parseException(reply) !== null
}

export function parse (reply: Buffer): ProbeMatch | null {
  const h = parseHello(reply)
  if (h) {
    if (!/^ClickHouse\b/i.test(h.name)) return null
    // Before revision 54401 the Hello stops at major.minor: only the leading part of the version.
    const full = h.patch !== undefined
    return clean({
      service: 'clickhouse',
      product: 'ClickHouse',
      version: full ? `${h.major}.${h.minor}.${h.patch ?? 0}` : `${h.major}.${h.minor}`,
      versionPrefix: full ? undefined : true,
      extraInfo: joinInfo(`protocol revision ${h.revision}`,
        h.displayName && `name ${h.displayName.slice(0, 64)}`)
    })
  }
  const e = parseException(reply)
  if (e && e.name.startsWith('DB::')) {
    return { service: 'clickhouse', product: 'ClickHouse', extraInfo: `refused: ${e.message.split('\n')[0].slice(0, 120)}` }
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'clickhouse',
  ports,
  fallback: 'full',
  request: () => helloRequest(),
  complete,
  parse: (reply) => parse(reply),
  products: ['ClickHouse']
}
