// MQTT 3.1.1: CONNECT, then CONNACK says whether an anonymous client is accepted. When it is,
// a subscription to `$SYS/broker/version` makes Mosquitto publish its product and version.

import { clean, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [1883]

export const tlsPorts = [8883]

export const VERSION_TOPIC = '$SYS/broker/version'

function remainingLength (n: number): Buffer {
  const out: number[] = []
  do {
    let byte = n % 128
    n = Math.floor(n / 128)
    if (n > 0) byte |= 0x80
    out.push(byte)
  } while (n > 0)
  return Buffer.from(out)
}

function str (s: string): Buffer {
  const b = Buffer.from(s, 'utf8')
  return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b])
}

/** CONNECT with a clean session, no credentials and a 10 s keep-alive. */
export function connectPacket (clientId = 'vulnscan'): Buffer {
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, 0x02, 0, 10]), str(clientId)])
  return Buffer.concat([Buffer.from([0x10]), remainingLength(body.length), body])
}

export function subscribePacket (topic = VERSION_TOPIC, packetId = 1): Buffer {
  const body = Buffer.concat([Buffer.from([packetId >> 8, packetId & 0xff]), str(topic), Buffer.from([0])])
  return Buffer.concat([Buffer.from([0x82]), remainingLength(body.length), body])
}

export const disconnect = Buffer.from([0xe0, 0])

export const request = connectPacket()

interface Packet { type: number, flags: number, body: Buffer }

/** Split complete MQTT control packets; a trailing partial packet is left out. */
export function packets (reply: Buffer): Packet[] {
  const out: Packet[] = []
  let off = 0
  while (off + 2 <= reply.length) {
    let len = 0
    let mult = 1
    let i = off + 1
    for (;;) {
      if (i >= reply.length || i - off > 4) return out
      const b = reply[i++]
      len += (b & 0x7f) * mult
      mult *= 128
      if (!(b & 0x80)) break
    }
    if (i + len > reply.length) break
    out.push({ type: reply[off] >> 4, flags: reply[off] & 0x0f, body: reply.subarray(i, i + len) })
    off = i + len
  }
  return out
}

const CONNACK_CODES: Record<number, string> = {
  1: 'unacceptable protocol version', 2: 'identifier rejected', 3: 'server unavailable',
  4: 'bad user name or password', 5: 'not authorized'
}

export function completeConnack (reply: Buffer): boolean {
  return packets(reply).length > 0
}

/** Parse CONNACK: null unless the reply is one. `accepted` tells whether to go on and subscribe. */
export function parseConnack (reply: Buffer): (ProbeMatch & { accepted: boolean }) | null {
  const p = packets(reply)[0]
  if (!p || p.type !== 2 || p.flags !== 0 || p.body.length < 2 || p.body[0] > 1) return null
  const code = p.body[1]
  if (code === 0) return { service: 'mqtt', extraInfo: 'anonymous access allowed', accepted: true }
  if (!(code in CONNACK_CODES)) return null
  return { service: 'mqtt', extraInfo: `CONNACK: ${CONNACK_CODES[code]}`, accepted: false }
}

/** The version PUBLISH has arrived (Mosquitto sends it retained right after SUBACK). */
export function completeVersion (reply: Buffer): boolean {
  return packets(reply).some((p) => p.type === 3)
}

/** Parse the `$SYS/broker/version` PUBLISH, e.g. payload `mosquitto version 2.0.11`. */
export function parseVersion (reply: Buffer): ProbeMatch | null {
  for (const p of packets(reply)) {
    if (p.type !== 3 || p.body.length < 2) continue
    const tlen = p.body.readUInt16BE(0)
    const topic = p.body.subarray(2, 2 + tlen).toString('utf8')
    if (topic !== VERSION_TOPIC) continue
    const qos = (p.flags >> 1) & 3
    const payload = p.body.subarray(2 + tlen + (qos > 0 ? 2 : 0)).toString('utf8').trim()
    const m = /^(\S+) version (\S+)/i.exec(payload)
    if (!m) return clean({ service: 'mqtt', extraInfo: payload.slice(0, 120) || undefined })
    const product = /^mosquitto$/i.test(m[1]) ? 'Mosquitto' : m[1]
    return { service: 'mqtt', product, version: m[2] }
  }
  return null
}

/** CONNACK without the flag that only steers the conversation. */
function connackMatch (reply: Buffer): ProbeMatch | null {
  const connack = parseConnack(reply)
  if (!connack) return null
  const { accepted: _accepted, ...match } = connack
  return match
}

export const probe: ProbeDescriptor = {
  name: 'mqtt',
  ports,
  tlsPorts,
  fallback: 'full',
  recognise: (reply) => connackMatch(reply),
  converse: async (io, s) => {
    io.write(request)
    const reply = await io.read(completeConnack, s.wait())
    const connack = parseConnack(reply)
    if (!connack) return { match: null, reply }
    const { accepted, ...base } = connack
    if (!accepted) return { match: base, reply }
    // Mosquitto publishes its version on a retained $SYS topic; other brokers stay silent.
    io.write(subscribePacket())
    const more = await io.read(completeVersion, s.wait(1500))
    io.write(disconnect)
    const version = parseVersion(more)
    return { match: version ? { ...version, extraInfo: base.extraInfo } : base, reply: Buffer.concat([reply, more]) }
  },
  products: ['Mosquitto'],
  verbatimProducts: true
}
