// Apache ZooKeeper's four-letter words on its client port: `srvr` (the one command every release
// allows by default) answers `Zookeeper version: 3.8.0-<build>, built on <date>` and the server's
// mode. Where four-letter words are refused the server says so, naming itself.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [2181]

export const request = Buffer.from('srvr')

/** ZooKeeper answers and closes; a complete answer ends with its `Node count` line. */
export function complete (reply: Buffer): boolean {
  return /^Node count: \d+\s*$/m.test(reply.toString('latin1'))
}

export function parse (reply: Buffer): ProbeMatch | null {
  const text = reply.toString('latin1')
  const m = /^Zookeeper version: (\d+(?:\.\d+)+)([^,\n]*)/m.exec(text)
  if (m) {
    const mode = /^Mode: (\S+)/m.exec(text)?.[1]
    return clean({ service: 'zookeeper', product: 'Apache ZooKeeper', version: m[1], extraInfo: joinInfo(mode && `mode ${mode}`) })
  }
  if (/^srvr is not executed because it is not in the whitelist\.?/m.test(text)) {
    return { service: 'zookeeper', product: 'Apache ZooKeeper', extraInfo: 'four-letter words disabled' }
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'zookeeper',
  ports,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: ['Apache ZooKeeper']
}
