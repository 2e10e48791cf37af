// Redis (RESP): `INFO server` as an inline command. An open server answers with a bulk string of
// `key:value` lines; a protected one answers an error that still says it is Redis.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [6379, 6380, 16379, 26379]

export const request = Buffer.from('INFO server\r\n')

/** A bulk reply is complete when its announced length has arrived; an error at its line end. */
export function complete (reply: Buffer): boolean {
  if (reply[0] === 0x24) {
    const nl = reply.indexOf('\r\n')
    if (nl < 0) return false
    const len = Number(reply.subarray(1, nl).toString('latin1'))
    return !Number.isFinite(len) || len < 0 || reply.length >= nl + 2 + len + 2
  }
  return reply.includes('\n')
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 3) return null
  const text = reply.toString('latin1')
  if (text[0] === '$') {
    const info = new Map<string, string>()
    for (const line of text.split('\r\n')) {
      const i = line.indexOf(':')
      if (i > 0) info.set(line.slice(0, i), line.slice(i + 1))
    }
    const redisVersion = info.get('redis_version')
    if (!redisVersion) return null
    // Forks keep `redis_version` for client compatibility and add their own name and version.
    const valkey = info.get('valkey_version')
    const product = valkey ? 'Valkey' : info.get('server_name') === 'valkey' ? 'Valkey' : 'Redis'
    return clean({
      service: 'redis',
      product,
      version: valkey ?? redisVersion,
      extraInfo: joinInfo(info.get('redis_mode') && `mode ${info.get('redis_mode')}`,
        info.get('os') && `os ${info.get('os')}`)
    })
  }
  const first = text.split('\r\n')[0]
  if (/^-NOAUTH\b/.test(first)) return { service: 'redis', product: 'Redis', extraInfo: 'authentication required' }
  if (/^-DENIED\b.*Redis/.test(first)) return { service: 'redis', product: 'Redis', extraInfo: 'protected mode' }
  if (/^-(ERR|WRONGPASS)\b/.test(first) && /^-ERR (unknown command|wrong number of arguments|Client sent AUTH|operation not permitted)|^-WRONGPASS/.test(first)) {
    return { service: 'redis', product: 'Redis', extraInfo: first.slice(1, 120) }
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'redis',
  ports,
  tlsPorts: [6380],
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: ['Redis', 'Valkey']
}
