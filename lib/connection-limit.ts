// Open connections per client address. The total is bounded by the server's maxConnections; this bounds each
// address's share, so that one client holding idle connections cannot shut every other client out. Proxies named in
// TRUST_PROXY carry many clients on their connections and are not counted.
import type { Socket } from 'node:net'
import { parseScope } from './scanner/targets'

/** The address as one key per host: an IPv4-mapped IPv6 address counts as its IPv4 address. */
function hostOf (address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}

export class ConnectionLimiter {
  private readonly open = new Map<string, number>()
  private readonly exempt: ((address: string) => boolean) | null

  /** `trusted`: addresses or CIDRs not limited (TRUST_PROXY); throws an Error naming a malformed entry. */
  constructor (private readonly maxPerAddress: number, trusted: readonly string[] = []) {
    const scope = trusted.length === 0 ? null : parseScope([...trusted], [])
    this.exempt = scope === null ? null : (address) => scope.allows(address)
  }

  /** Count a new connection; false (and nothing counted) when its address already holds the most it may. */
  admit (socket: Socket): boolean {
    const remote = socket.remoteAddress
    if (remote === undefined) return true
    const address = hostOf(remote)
    if (this.exempt?.(address) === true) return true
    const n = this.open.get(address) ?? 0
    if (n >= this.maxPerAddress) return false
    this.open.set(address, n + 1)
    socket.once('close', () => {
      const left = (this.open.get(address) ?? 1) - 1
      if (left <= 0) this.open.delete(address)
      else this.open.set(address, left)
    })
    return true
  }

  /** Connections open from an address now. */
  count (address: string): number {
    return this.open.get(hostOf(address)) ?? 0
  }
}
