// The X Window System protocol (port 6000 + display number). The client opens with a 12-byte connection
// setup (byte order `l`, protocol 11.0, no authorization); the server's first byte decides: 1 Success (the
// server accepts anyone: its vendor, release number and screens follow), 0 Failed (with the reason: access
// control refused us), 2 Authenticate (more authorization wanted). X.Org's release number encodes its
// version: 12101007 is xorg-server 21.1.7 (1, 21, 01, 007), 12013000 is 1.20.13.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [6000, 6001, 6002, 6003, 6004, 6005, 6006, 6007, 6008, 6009]

/** Connection setup, little-endian, protocol 11.0, no authorization protocol. */
export const setupRequest = Buffer.from([0x6c, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0])

export interface X11Setup {
  status: 'success' | 'failed' | 'authenticate'
  major: number
  minor: number
  reason?: string
  vendor?: string
  release?: number
  screens?: number
  /** The first screen's size in pixels. */
  size?: string
}

/** Whole once the 8-byte header and the additional data it announces (in 4-byte units) have arrived. */
export function complete (reply: Buffer): boolean {
  return reply.length >= 8 && reply.length >= 8 + reply.readUInt16LE(6) * 4
}

export function parseSetup (reply: Buffer): X11Setup | null {
  if (reply.length < 8 || reply[0] > 2) return null
  const major = reply.readUInt16LE(2)
  const minor = reply.readUInt16LE(4)
  const extra = reply.readUInt16LE(6) * 4
  if (reply[0] === 2) {
    // Authenticate: bytes 2-5 are unused; the reason follows.
    return { status: 'authenticate', major: 11, minor: 0, reason: reply.subarray(8, 8 + extra).toString('latin1').replace(/\0+$/, '').trim().slice(0, 200) }
  }
  if (major !== 11) return null
  if (reply[0] === 0) {
    const reason = reply.subarray(8, 8 + reply[1]).toString('latin1').trim().slice(0, 200)
    return { status: 'failed', major, minor, reason }
  }
  if (reply.length < 40) return { status: 'success', major, minor }
  const vendorLen = reply.readUInt16LE(24)
  const formats = reply[29]
  const vendor = reply.subarray(40, 40 + vendorLen).toString('latin1').slice(0, 80)
  const out: X11Setup = { status: 'success', major, minor, vendor, release: reply.readUInt32LE(8), screens: reply[28] }
  const screenAt = 40 + Math.ceil(vendorLen / 4) * 4 + formats * 8
  if (reply.length >= screenAt + 24) out.size = `${reply.readUInt16LE(screenAt + 20)}x${reply.readUInt16LE(screenAt + 22)}`
  return out
}

/** xorg-server's version from X.Org's release number. */
export function xorgVersion (release: number): string | undefined {
  const s = String(release)
  if (!/^1\d{7}$/.test(s)) return undefined
  const [a, b, c] = [Number(s.slice(1, 3)), Number(s.slice(3, 5)), Number(s.slice(5, 8))]
  // From 21.1 on the leading 1 stays and the major number takes its place after it.
  return a >= 21 ? `${a}.${b}.${c}` : `1.${a}.${b}`
}

export function parse (reply: Buffer): ProbeMatch | null {
  const x = parseSetup(reply)
  if (x === null) return null
  const xorg = x.vendor !== undefined && /X\.Org/i.test(x.vendor)
  return clean({
    service: 'x11',
    product: xorg ? 'X.Org X server' : undefined,
    version: xorg && x.release !== undefined ? xorgVersion(x.release) : undefined,
    extraInfo: joinInfo(`X11 ${x.major}.${x.minor}`,
      x.status === 'success' ? 'access granted without authorization' : x.status === 'failed' ? 'access refused' : 'authentication wanted',
      x.reason !== undefined && x.reason !== '' && `"${x.reason}"`, !xorg && x.vendor !== undefined && `vendor ${x.vendor}`,
      x.screens !== undefined && `${x.screens} screen${x.screens === 1 ? '' : 's'}${x.size !== undefined ? ` (${x.size})` : ''}`)
  })
}

export const probe: ProbeDescriptor = {
  name: 'x11',
  ports,
  request: () => setupRequest,
  complete,
  parse: (reply) => parse(reply),
  products: ['X.Org X server']
}
