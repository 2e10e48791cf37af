// The probe registry: every protocol the scanner knows, in the order their signatures are tried
// on a reply (most specific first) and their probes are preferred when two say as much. A new
// protocol is one module exporting a `probe` descriptor and one line here.

import type { ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'
import { probe as ajp13 } from './ajp'
import { probe as amqp } from './amqp'
import { probe as cassandra } from './cassandra'
import { probe as bindshell } from './shell'
import { probe as clickhouse } from './clickhouse'
import { probe as distcc } from './distcc'
import { probe as dns } from './dns'
import { probe as epmd } from './epmd'
import { probe as ftp } from './ftp'
import { probe as git } from './git'
import { probe as http } from './http'
import { probe as imap } from './imap'
import { probe as irc } from './irc'
import { probe as kafka } from './kafka'
import { probe as ldap } from './ldap'
import { probe as memcached } from './memcached'
import { probe as mongodb } from './mongodb'
import { probe as mqtt } from './mqtt'
import { probe as mysql } from './mysql'
import { probe as nats } from './nats'
import { probe as nntp } from './nntp'
import { probe as openwire } from './openwire'
import { probe as pop3 } from './pop3'
import { probe as postgresql } from './postgresql'
import { probe as rdp } from './rdp'
import { probe as redis } from './redis'
import { probe as rpcbind } from './rpcbind'
import { probe as rmi } from './rmi'
import { probe as rservices } from './rservices'
import { probe as rsync } from './rsync'
import { probe as smb } from './smb'
import { probe as smtp } from './smtp'
import { probe as ssh } from './ssh'
import { probe as telnet } from './telnet'
import { probe as tls } from './tls'
import { probe as vnc } from './vnc'
import { probe as x11 } from './x11'
import { probe as xmpp } from './xmpp'
import { probe as zookeeper } from './zookeeper'

export type { ProbeDescriptor } from './descriptor'

export const PROBES: readonly ProbeDescriptor[] = [
  // Banners, most specific first: an SMTP greeting is tried before FTP's, which shares `220`.
  ssh, mysql, nats, imap, pop3, smtp, ftp, nntp, irc, rsync, vnc, openwire, telnet,
  // Client-first protocols; among fallbacks run side by side, the earlier wins a tie.
  tls, http, redis, postgresql, amqp, mongodb, mqtt, memcached, ldap, dns, git, zookeeper, xmpp, epmd, rpcbind, smb, rdp, clickhouse,
  kafka, cassandra, distcc, x11, rservices, rmi, ajp13,
  // Last: a shell prompt or `id` output is tried after every other signature, and never wins a tie.
  bindshell
]

/** Lookups the engine needs, derived once from a list of descriptors. */
export interface Registry {
  probes: readonly ProbeDescriptor[]
  byName: ReadonlyMap<string, ProbeDescriptor>
  /** Ports where a server-first protocol is usual: wait for a banner before sending anything. */
  serverFirstPorts: ReadonlySet<number>
  /** Ports where TLS comes first (no probe claims them as plain text). */
  tlsFirstPorts: ReadonlySet<number>
  /** The protocol inside TLS on a port. */
  insideTls: ReadonlyMap<number, ProbeDescriptor>
  /** Probes that send something first (a request, a conversation or a handshake). */
  clientFirst: readonly ProbeDescriptor[]
  /** The descriptor whose probe is the TLS handshake. */
  handshake?: ProbeDescriptor
  recognise (reply: Buffer, port: number): { match: ProbeMatch, probe: ProbeDescriptor } | null
}

export function isClientFirst (p: ProbeDescriptor): boolean {
  return p.request !== undefined || p.converse !== undefined || p.handshake === true
}

export function buildRegistry (probes: readonly ProbeDescriptor[]): Registry {
  const byName = new Map<string, ProbeDescriptor>()
  for (const p of probes) {
    if (byName.has(p.name)) throw new Error(`two probes are named ${p.name}`)
    byName.set(p.name, p)
  }
  const plain = new Set(probes.flatMap((p) => p.handshake ? [] : p.ports))
  const handshake = probes.find((p) => p.handshake)
  const tlsFirstPorts = new Set<number>(handshake?.ports ?? [])
  const insideTls = new Map<number, ProbeDescriptor>()
  for (const p of probes) {
    for (const port of p.tlsPorts ?? []) {
      if (!insideTls.has(port)) insideTls.set(port, p)
      if (!plain.has(port)) tlsFirstPorts.add(port)
    }
  }
  const serverFirstPorts = new Set(probes.flatMap((p) => p.serverFirst ? p.ports : []))
  const signatures = probes.filter((p) => p.recognise !== undefined)
  return {
    probes,
    byName,
    serverFirstPorts,
    tlsFirstPorts,
    insideTls,
    clientFirst: probes.filter(isClientFirst),
    handshake,
    recognise (reply, port) {
      if (!reply.length) return null
      for (const p of signatures) {
        const match = (p.recognise as NonNullable<ProbeDescriptor['recognise']>)(reply, port)
        if (match) return { match, probe: p }
      }
      return null
    }
  }
}

export const REGISTRY = buildRegistry(PROBES)
