// NNTP speaks first (RFC 3977): `200` (posting allowed) or `201` greeting, e.g. INN's
// `200 news.example InterNetNews NNRP server INN 2.7.1 ready (posting ok)`.

import { clean, firstLine, matchProduct, type ProbeMatch, type ProductSignature } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [119]

const PRODUCTS: ProductSignature[] = [
  [/\bINN (\d[\w.]*)/, 'InterNetNews'],
  [/\bInterNetNews\b()/, 'InterNetNews'],
  [/\bLeafnode\b(?: NNTP daemon, version ([\d.]+))?/i, 'Leafnode']
]

export function parse (reply: Buffer, port?: number): ProbeMatch | null {
  const line = firstLine(reply)
  if (line === null) return null
  const m = /^(200|201) (.*)$/.exec(line)
  if (!m) return null
  const found = matchProduct(m[2], PRODUCTS)
  // A bare `200` greeting is NNTP only where the words or the port say so.
  if (!found && !/\b(NNTP|news|NNRP)\b/i.test(m[2]) && !(port !== undefined && ports.includes(port))) return null
  return clean({ service: 'nntp', ...found, extraInfo: m[1] === '200' ? 'posting allowed' : 'posting not allowed' })
}

export const probe: ProbeDescriptor = {
  name: 'nntp',
  ports,
  serverFirst: true,
  recognise: parse,
  products: PRODUCTS.map(([, product]) => product)
}
