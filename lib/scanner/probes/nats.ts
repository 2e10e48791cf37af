// NATS speaks first: `INFO {json}\r\n` with server_name, version, go and feature flags.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [4222, 6222, 7422]

export function complete (reply: Buffer): boolean {
  return reply.includes('\n')
}

export function parse (reply: Buffer): ProbeMatch | null {
  const nl = reply.indexOf('\n')
  if (nl < 0) return null
  const line = reply.subarray(0, nl).toString('utf8').trim()
  if (!/^INFO\s+\{/.test(line)) return null
  let info: Record<string, unknown>
  try {
    info = JSON.parse(line.slice(4).trim())
  } catch {
    return { service: 'nats', extraInfo: 'malformed INFO' }
  }
  if (typeof info !== 'object' || info === null) return { service: 'nats' }
  const s = (k: string): string | undefined => typeof info[k] === 'string' ? info[k] as string : undefined
  return clean({
    service: 'nats',
    product: 'NATS Server',
    version: s('version'),
    extraInfo: joinInfo(s('go') && `go ${s('go')}`,
      info.auth_required === true && 'authentication required',
      info.tls_required === true && 'TLS required',
      info.jetstream === true && 'JetStream')
  })
}

export const probe: ProbeDescriptor = {
  name: 'nats',
  ports,
  serverFirst: true,
  recognise: (reply) => parse(reply),
  products: ['NATS Server']
}
