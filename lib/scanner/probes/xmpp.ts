// XMPP client streams (RFC 6120): the client opens a stream to the host's domain; the server
// answers with its stream header and features, or a stream error (an unknown domain). Neither
// carries a version; the entity-capabilities node in the features (XEP-0115) names ejabberd and
// Prosody when they advertise it. Nothing else is guessed.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [5222, 5269]

export const tlsPorts = [5223]

export function request (domain: string): Buffer {
  const to = domain.replace(/[<>&'"]/g, '')
  return Buffer.from(`<?xml version='1.0'?><stream:stream to='${to}' xmlns='jabber:client' ` +
    "xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>")
}

/** Complete once the features or a stream error have arrived in full. */
export function complete (reply: Buffer): boolean {
  return /<\/stream:features>|<stream:features\/>|<\/stream:error>/.test(reply.toString('utf8'))
}

const NODES: Array<[RegExp, string]> = [
  [/process-one\.net\/en\/ejabberd/, 'ejabberd'],
  [/prosody\.im/, 'Prosody'],
  [/igniterealtime\.org\/projects\/openfire/, 'Openfire']
]

export const products = [...new Set(NODES.map(([, p]) => p))]

export function parse (reply: Buffer): ProbeMatch | null {
  const text = reply.toString('utf8')
  const header = /<stream:stream\b[^>]*>/.exec(text)?.[0]
  if (!header || !/xmlns:stream=['"]http:\/\/etherx\.jabber\.org\/streams['"]/.test(header)) return null
  const from = /\bfrom=['"]([^'"]+)['"]/.exec(header)?.[1]
  const node = /<c\b[^>]*\bnode=['"]([^'"]+)['"]/.exec(text)?.[1]
  const product = node ? NODES.find(([re]) => re.test(node))?.[1] : undefined
  const error = /<stream:error><([\w-]+)/.exec(text)?.[1]
  const mechanisms = [...text.matchAll(/<mechanism>([^<]+)<\/mechanism>/g)].map((m) => m[1])
  return clean({
    service: 'xmpp',
    product,
    extraInfo: joinInfo(from && `domain ${from}`, error && `stream error ${error}`,
      /<starttls\b/.test(text) && 'STARTTLS offered', mechanisms.length > 0 && `SASL ${mechanisms.join(', ')}`)
  })
}

export const probe: ProbeDescriptor = {
  name: 'xmpp',
  ports,
  tlsPorts,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: ({ host }) => request(host),
  complete,
  parse: (reply) => parse(reply),
  products
}
