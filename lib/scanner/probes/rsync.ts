// rsync daemon (port 873) speaks first: `@RSYNCD: <protocol>[.<sub>] [digests]`. The number is the
// protocol version, not rsync's release (rsync 3.2 and 3.4 both speak 31), so no product version
// is reported from it, and no product: the greeting names none.

import { clean, firstLine, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [873]

export function parse (reply: Buffer): ProbeMatch | null {
  const line = firstLine(reply)
  if (line === null) return null
  const m = /^@RSYNCD: (\d+)(?:\.(\d+))?(?: (.*))?$/.exec(line)
  if (!m) return null
  return clean({ service: 'rsync', extraInfo: joinInfo(`protocol ${m[1]}${m[2] !== undefined ? '.' + m[2] : ''}`, m[3] && `digests ${m[3].trim()}`) })
}

export const probe: ProbeDescriptor = {
  name: 'rsync',
  ports,
  serverFirst: true,
  recognise: (reply) => parse(reply),
  farewell: Buffer.from('@RSYNCD: EXIT\n'),
  products: []
}
