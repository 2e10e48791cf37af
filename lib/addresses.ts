// IP addresses as the results store and the API take them: one canonical text per address, and an order
// that sorts them by value (IPv4 before IPv6).
import { isIPv4, isIPv6 } from 'node:net'
import ipaddr from 'ipaddr.js'

/** The canonical text of an IP address (compressed IPv6, dotted IPv4), or null when it is not one. */
export function normalizeAddress (value: string): string | null {
  if (isIPv4(value)) return value
  if (!isIPv6(value)) return null
  try {
    const v6 = ipaddr.IPv6.parse(value)
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
