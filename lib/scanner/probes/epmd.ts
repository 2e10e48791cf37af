// Erlang Port Mapper Daemon: NAMES_REQ (length 1, 'n') answers the daemon's port as a 32-bit
// integer followed by `name <node> at port <n>` lines, which names the Erlang nodes on the host
// (RabbitMQ's is `rabbit`).

import { clean, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [4369]

export const request = Buffer.from([0, 1, 0x6e])

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 4) return null
  const port = reply.readUInt32BE(0)
  if (port === 0 || port > 65535) return null
  const text = reply.subarray(4).toString('latin1')
  // Four bytes alone say little; with no node registered only the well-known port is believed.
  if (!text.length && port !== 4369) return null
  if (text.length && !/^name \S+ at port \d+\n/.test(text)) return null
  const nodes = [...text.matchAll(/^name (\S+) at port (\d+)$/gm)].map((m) => `${m[1]}:${m[2]}`)
  return clean({ service: 'epmd', product: 'Erlang Port Mapper Daemon', extraInfo: nodes.length ? `nodes ${nodes.join(', ')}` : undefined })
}

export const probe: ProbeDescriptor = {
  name: 'epmd',
  ports,
  fallback: 'full',
  // Four bytes are too weak a signature to try on other probes' replies: only its own reply counts.
  request: () => request,
  complete: (r) => r.length > 4 && r[r.length - 1] === 0x0a,
  parse: (reply) => parse(reply),
  products: ['Erlang Port Mapper Daemon']
}
