// Which ports a template runs on. Templates are bound to services, not port numbers: the services a template is
// for come from its tags and id (a tag `redis`, an id `redis-…`) and from the well-known service of each port it
// declares (6379: redis). It runs on every port where detection found one of those services, whatever the port's
// number, and on a port it declares only when detection could not name that port's service.

import { PROBES } from '../scanner/probes/index'

/** Names the community uses for a service, to the name detection gives it. */
const ALIASES: Record<string, string> = {
  postgres: 'postgresql',
  pgsql: 'postgresql',
  mongo: 'mongodb',
  memcache: 'memcached',
  mariadb: 'mysql',
  zk: 'zookeeper',
  activemq: 'openwire',
  rabbitmq: 'amqp',
  openssh: 'ssh',
  vsftpd: 'ftp',
  proftpd: 'ftp',
  exim: 'smtp',
  postfix: 'smtp',
  samba: 'smb',
  erlang: 'epmd',
  mosquitto: 'mqtt'
}

const KNOWN = new Set(PROBES.map((p) => p.name))
const BY_PORT = new Map<number, string>()
for (const p of PROBES) for (const port of p.ports) if (!BY_PORT.has(port)) BY_PORT.set(port, p.name)

/** The detection name of a word, or undefined when it names no service detection knows. */
export function serviceOfWord (word: string): string | undefined {
  const w = word.toLowerCase()
  if (KNOWN.has(w) && w !== 'tls') return w
  return ALIASES[w]
}

/** The well-known service of a port number, as detection names it. */
export function serviceOfPort (port: number): string | undefined {
  return BY_PORT.get(port)
}

/** The services a template is for: from its tags, the first word of its id, and its declared ports. */
export function servicesOf (id: string, tags: string[], ports: number[]): string[] {
  const out = new Set<string>()
  for (const w of [...tags, id.split(/[-_]/)[0]]) {
    const s = serviceOfWord(w)
    if (s !== undefined) out.add(s)
  }
  for (const p of ports) {
    const s = serviceOfPort(p)
    if (s !== undefined && s !== 'tls') out.add(s)
  }
  return [...out].sort()
}

/** A service detection could not name. */
export function isUnknownService (service: string | undefined): boolean {
  return service === undefined || service === '' || service === 'unknown' || service === 'tcpwrapped'
}

/**
 * Whether a template runs on a port where detection found `service` (`secure`: inside TLS from the first byte). An
 * ssl template runs on every such port, whatever service TLS carries, and nowhere else: a STARTTLS port answers a
 * handshake only after its own commands, and a plain port never.
 */
export function bindsTo (t: { services: string[], ports: number[], ssl?: unknown[] }, port: number, service: string | undefined, secure = false): boolean {
  if (t.ssl !== undefined) return secure
  if (isUnknownService(service)) return t.ports.includes(port)
  return t.services.includes(service as string)
}
