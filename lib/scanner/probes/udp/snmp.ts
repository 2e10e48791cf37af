// SNMP v2c (RFC 3416) with the community `public`: one GetRequest for sysDescr.0, sysObjectID.0 and
// UCD-SNMP-MIB's versionTag.0, BER built and read here (three fixed OIDs do not need an ASN.1 library).
// sysDescr describes the managed system (`Linux host 6.1.0 ...`), not the agent, so it never names the
// product; the agent is named only when sysObjectID is under an enterprise that identifies it
// (Net-SNMP's 1.3.6.1.4.1.8072), and its version only when that agent answers versionTag.

import { clean, joinInfo, type ProbeMatch } from '../common'
import type { UdpProbeDescriptor } from './descriptor'

export const ports = [161]

export const SYS_DESCR = '1.3.6.1.2.1.1.1.0'
export const SYS_OBJECT_ID = '1.3.6.1.2.1.1.2.0'
/** UCD-SNMP-MIB::versionTag.0: the Net-SNMP agent's release. */
export const VERSION_TAG = '1.3.6.1.4.1.2021.100.2.0'
/** NET-SNMP-MIB::netSnmp: sysObjectIDs of Net-SNMP agents (netSnmpAgentOIDs) start here. */
const NET_SNMP = '1.3.6.1.4.1.8072.'

const T = { INTEGER: 0x02, OCTETS: 0x04, NULL: 0x05, OID: 0x06, SEQUENCE: 0x30, GET: 0xa0, RESPONSE: 0xa2 }

function length (n: number): Buffer {
  if (n < 0x80) return Buffer.from([n])
  if (n < 0x100) return Buffer.from([0x81, n])
  return Buffer.from([0x82, n >> 8, n & 0xff])
}

function tlv (tag: number, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(value.length), value])
}

function integer (n: number): Buffer {
  const bytes: number[] = []
  let v = n
  do { bytes.unshift(v & 0xff); v = Math.floor(v / 256) } while (v > 0)
  if (bytes[0] & 0x80) bytes.unshift(0)
  return tlv(T.INTEGER, Buffer.from(bytes))
}

function oid (dotted: string): Buffer {
  const ids = dotted.split('.').map(Number)
  const out = [40 * ids[0] + ids[1]]
  for (const id of ids.slice(2)) {
    const chunk = [id & 0x7f]
    for (let v = id >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80)
    out.push(...chunk)
  }
  return tlv(T.OID, Buffer.from(out))
}

/** A v2c GetRequest of `oids` with `community`. */
export function getRequest (oids: string[], community = 'public', requestId = 0x5653): Buffer {
  const varbinds = tlv(T.SEQUENCE, Buffer.concat(oids.map((o) => tlv(T.SEQUENCE, Buffer.concat([oid(o), Buffer.from([T.NULL, 0])])))))
  const pdu = tlv(T.GET, Buffer.concat([integer(requestId), integer(0), integer(0), varbinds]))
  return tlv(T.SEQUENCE, Buffer.concat([integer(1), tlv(T.OCTETS, Buffer.from(community, 'latin1')), pdu]))
}

export function request (): Buffer {
  return getRequest([SYS_DESCR, SYS_OBJECT_ID, VERSION_TAG])
}

interface Tlv { tag: number, value: Buffer, end: number }

/** One TLV at `off`; throws when it runs past the buffer. */
function read (buf: Buffer, off: number): Tlv {
  if (off + 2 > buf.length) throw new RangeError('truncated')
  const tag = buf[off]
  let len = buf[off + 1]
  let start = off + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0 || n > 3 || start + n > buf.length) throw new RangeError('bad length')
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]
    start += n
  }
  if (start + len > buf.length) throw new RangeError('truncated')
  return { tag, value: buf.subarray(start, start + len), end: start + len }
}

function children (buf: Buffer): Tlv[] {
  const out: Tlv[] = []
  for (let off = 0; off < buf.length;) {
    const t = read(buf, off)
    out.push(t)
    off = t.end
  }
  return out
}

function readInt (t: Tlv): number {
  if (t.tag !== T.INTEGER || t.value.length === 0 || t.value.length > 6) throw new RangeError('not an integer')
  let n = 0
  for (const b of t.value) n = n * 256 + b
  return n
}

function readOid (value: Buffer): string {
  if (value.length === 0) throw new RangeError('empty OID')
  const ids = [Math.floor(value[0] / 40), value[0] % 40]
  let v = 0
  for (const b of value.subarray(1)) {
    v = v * 128 + (b & 0x7f)
    if ((b & 0x80) === 0) { ids.push(v); v = 0 }
  }
  return ids.join('.')
}

export interface SnmpResponse {
  version: number
  community: string
  errorStatus: number
  /** OID → value: text for OCTET STRING, dotted for OID, null for exceptions (noSuchObject …) and other types. */
  values: Map<string, string | null>
}

/** Read a GetResponse; null unless the bytes are one. */
export function parseResponse (reply: Buffer): SnmpResponse | null {
  try {
    const msg = read(reply, 0)
    if (msg.tag !== T.SEQUENCE) return null
    const [ver, community, pdu] = children(msg.value)
    if (pdu === undefined || community.tag !== T.OCTETS || pdu.tag !== T.RESPONSE) return null
    const [, errorStatus, , varbinds] = children(pdu.value)
    if (varbinds?.tag !== T.SEQUENCE) return null
    const values = new Map<string, string | null>()
    for (const vb of children(varbinds.value)) {
      const [name, value] = children(vb.value)
      if (name?.tag !== T.OID || value === undefined) continue
      const v = value.tag === T.OCTETS ? value.value.toString('latin1') : value.tag === T.OID ? readOid(value.value) : null
      values.set(readOid(name.value), v)
    }
    return { version: readInt(ver), community: community.value.toString('latin1'), errorStatus: readInt(errorStatus), values }
  } catch {
    return null
  }
}

/** Printable, one line, bounded: sysDescr is free text set by whoever configured the agent. */
function oneLine (s: string, max = 160): string {
  return s.replace(/[^\x20-\x7e]+/g, ' ').trim().slice(0, max)
}

export function parse (reply: Buffer): ProbeMatch | null {
  const r = parseResponse(reply)
  if (!r) return null
  const descr = r.values.get(SYS_DESCR)
  const objectId = r.values.get(SYS_OBJECT_ID)
  const tag = r.values.get(VERSION_TAG)
  const version = r.version === 1 ? 'SNMPv2c' : r.version === 0 ? 'SNMPv1' : `SNMP version ${r.version}`
  const info = joinInfo(`${version} community ${r.community}`, descr ? `sysDescr "${oneLine(descr)}"` : undefined,
    objectId ? `sysObjectID ${objectId}` : undefined, r.errorStatus !== 0 ? `error-status ${r.errorStatus}` : undefined)
  if (objectId?.startsWith(NET_SNMP)) {
    const v = tag && /^\d+(?:\.\d+)+(?:\.pre\d+|\.rc\d+)?$/.test(tag.trim()) ? tag.trim() : undefined
    return clean({ service: 'snmp', product: 'Net-SNMP', version: v, extraInfo: info })
  }
  return clean({ service: 'snmp', extraInfo: info })
}

export const udpProbe: UdpProbeDescriptor = {
  transport: 'udp',
  name: 'snmp',
  ports,
  request: () => request(),
  parse: (reply) => parse(reply),
  products: ['Net-SNMP']
}
