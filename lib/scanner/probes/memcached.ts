// memcached text protocol: `version` answers `VERSION 1.6.21`.

import type { ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [11211]

export const request = Buffer.from('version\r\n')

export function complete (reply: Buffer): boolean {
  return reply.includes('\n')
}

export function parse (reply: Buffer): ProbeMatch | null {
  const nl = reply.indexOf('\n')
  if (nl < 0) return null
  const line = reply.subarray(0, nl).toString('latin1').replace(/\r$/, '')
  const m = /^VERSION (\d+\.\d+(?:\.\d+)?)(\S*)$/.exec(line)
  if (!m) return null
  return m[2] ? { service: 'memcached', product: 'memcached', version: m[1], extraInfo: m[2].replace(/^[-+]/, '') } : { service: 'memcached', product: 'memcached', version: m[1] }
}

export const probe: ProbeDescriptor = {
  name: 'memcached',
  ports,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: ['memcached']
}
