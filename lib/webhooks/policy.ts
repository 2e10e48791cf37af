// Where webhooks may be sent. A webhook URL is chosen by a client, so without a check the service would post to
// its own network (a metadata endpoint, an internal admin page): every address outside the public unicast space
// is refused unless WEBHOOK_ALLOW names it, and WEBHOOK_DENY refuses more. The check runs on the URL at creation
// and on each resolved address at delivery, which then connects to the address it checked (DNS rebinding).
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { isIPv4Compatible, parseIpLiteral } from '../addresses'

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Block = [Address, number]

export interface WebhookPolicy {
  allow: Block[]
  deny: Block[]
}

function parseBlocks (list: string, name: string): Block[] {
  return list.split(',').map((s) => s.trim()).filter((s) => s !== '').map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry)
      const a = ipaddr.parse(entry)
      return [a, a.kind() === 'ipv4' ? 32 : 128] as Block
    } catch {
      throw new Error(`${name}: '${entry}' is not a CIDR block or an address`)
    }
  })
}

/** Build the policy from WEBHOOK_ALLOW and WEBHOOK_DENY (comma-separated CIDRs); throws on a malformed entry. */
export function webhookPolicy (config: { WEBHOOK_ALLOW: string, WEBHOOK_DENY: string }): WebhookPolicy {
  return { allow: parseBlocks(config.WEBHOOK_ALLOW, 'WEBHOOK_ALLOW'), deny: parseBlocks(config.WEBHOOK_DENY, 'WEBHOOK_DENY') }
}

function inBlocks (a: Address, blocks: Block[]): Block | undefined {
  return blocks.find(([net, bits]) => net.kind() === a.kind() && a.match(net, bits))
}

/** The address as IPv4 when it is an IPv4-mapped IPv6 one (the socket reaches the IPv4 host). */
function canonical (a: Address): Address {
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a
}

/** Why a webhook may not be sent to this IP address (naming the range), or null when it may. */
export function addressRefusal (address: string, policy: WebhookPolicy): string | null {
  let a: Address
  try {
    a = canonical(parseIpLiteral(address))
  } catch {
    return `'${address}' is not an IP address`
  }
  // Stacks read ::a.b.c.d differently (some as the IPv4 host, some as IPv6): refused whatever the lists say, as a
  // scan target naming one is.
  if (isIPv4Compatible(a)) return `${a.toString()} is a deprecated IPv4-compatible IPv6 address (::a.b.c.d); use the IPv4 address or ::ffff:a.b.c.d`
  const denied = inBlocks(a, policy.deny)
  if (denied !== undefined) return `${a.toString()} is in WEBHOOK_DENY (${denied[0].toString()}/${denied[1]})`
  const range = a.range()
  if (range === 'unicast' || inBlocks(a, policy.allow) !== undefined) return null
  return `${a.toString()} is a ${RANGE_NAMES[range] ?? range} address; webhooks go only to public addresses unless WEBHOOK_ALLOW names it`
}

const RANGE_NAMES: Record<string, string> = {
  private: 'private (RFC 1918)',
  loopback: 'loopback',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT (100.64.0.0/10)',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
  uniqueLocal: 'unique local (fc00::/7)',
  ipv4Mapped: 'IPv4-mapped',
  rfc6052: 'NAT64 (64:ff9b::/96)',
  '6to4': '6to4 (2002::/16)',
  teredo: 'Teredo (2001::/32)'
}

/** The host of a URL without IPv6 brackets. */
export function urlHost (url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

/**
 * What is wrong with a webhook URL before any name is resolved: its scheme, credentials, an IP literal the policy
 * refuses, or a name that always means this machine. Names are checked again, resolved, at each delivery.
 */
export function webhookUrlProblem (text: string, policy: WebhookPolicy): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return `url '${text.slice(0, 100)}' is not a URL`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `url must be http or https, not ${url.protocol.replace(/:$/, '')}`
  if (url.username !== '' || url.password !== '') return 'url must not carry credentials; put a token in the path or query, or rely on the signature'
  const host = urlHost(url)
  if (isIP(host) !== 0) {
    const refused = addressRefusal(host, policy)
    return refused === null ? null : `url: ${refused}`
  }
  const name = host.toLowerCase().replace(/\.$/, '')
  if (name === 'localhost' || name.endsWith('.localhost')) {
    const refused = addressRefusal('127.0.0.1', policy)
    return refused === null ? null : `url: '${host}' names this machine (${refused})`
  }
  return null
}
