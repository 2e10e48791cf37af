// IP addresses as the results store and the API take them: one canonical text per address, and an order
// that sorts them by value (IPv4 before IPv6).
import { isIPv4, isIPv6 } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Parse an IP literal the way the socket layer will. ipaddr.js reads an embedded dotted quad as IPv4-mapped
 * whatever precedes it (`::127.0.0.1` comes back as `::ffff:127.0.0.1`), so the quad is rewritten to two hex
 * groups first. The caller has checked the text with net.isIP.
 */
export function parseIpLiteral (value: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const zone = value.indexOf('%')
  const bare = zone < 0 ? value : value.slice(0, zone)
  const quad = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare)
  if (quad === null) return ipaddr.parse(value)
  const [a, b, c, d] = quad.slice(2).map(Number)
  const hex = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  return ipaddr.parse(zone < 0 ? hex : hex + value.slice(zone))
}

/** Whether an IPv6 address is a deprecated IPv4-compatible one: in ::/96 but neither :: nor ::1. */
export function isIPv4Compatible (a: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (a.kind() !== 'ipv6') return false
  const bytes = a.toByteArray()
  return bytes.slice(0, 12).every((x) => x === 0) && (bytes.slice(12, 15).some((x) => x !== 0) || bytes[15] > 1)
}

/** The canonical text of an IP address (compressed IPv6, dotted IPv4), or null when it is not one. */
export function normalizeAddress (value: string): string | null {
  if (isIPv4(value)) return value
  if (!isIPv6(value)) return null
  try {
    const v6 = parseIpLiteral(value) as ipaddr.IPv6
    // Read differently by different stacks: refused rather than guessed.
    if (isIPv4Compatible(v6)) return null
    return v6.isIPv4MappedAddress() ? `::ffff:${v6.toIPv4Address().toString()}` : v6.toString()
  } catch {
    return null
  }
}

/** A value given for an address that is not one; the HTTP layer answers it with a 400. */
export class InvalidAddressError extends Error {
  override name = 'InvalidAddressError'
}

/** The address in its canonical form, or an InvalidAddressError naming the field. */
export function parseAddress (value: string, field = 'address'): string {
  const address = normalizeAddress(value)
  if (address === null) throw new InvalidAddressError(`${field} must be an IPv4 or IPv6 address`)
  return address
}

/** A key that orders addresses numerically as text: IPv4 before IPv6, each by value. */
export function addressSortKey (address: string): string {
  try {
    const bytes = ipaddr.parse(address.split('%')[0]).toByteArray()
    return (bytes.length === 4 ? '4' : '6') + Buffer.from(bytes).toString('hex')
  } catch {
    return '9' + address
  }
}

/** Addresses in numeric order. */
export function sortAddresses (addresses: string[]): string[] {
  return addresses.map((a) => [addressSortKey(a), a]).sort((x, y) => x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0).map((x) => x[1])
}
