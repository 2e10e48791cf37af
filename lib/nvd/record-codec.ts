// Records are stored deflated: a normalized CVE is a few kilobytes of JSON (mostly references),
// and a full NVD mirror holds about 300,000 of them, which would not fit in memory or in a
// shared Redis comfortably as plain text.

import { deflateRawSync, inflateRawSync, constants } from 'node:zlib'
import type { CveRecord } from './types'

export function encodeJson (json: string): Buffer {
  return deflateRawSync(json, { level: 3, strategy: constants.Z_DEFAULT_STRATEGY })
}

export function decodeJson (blob: Buffer): string {
  return inflateRawSync(blob).toString('utf8')
}

export function decodeRecord (blob: Buffer): CveRecord {
  return JSON.parse(decodeJson(blob)) as CveRecord
}

/** Compare NVD timestamps; they are ISO-like strings, but the zone suffix is not always present. */
export function compareModified (a: string, b: string): number {
  const ta = Date.parse(a)
  const tb = Date.parse(b)
  if (Number.isFinite(ta) && Number.isFinite(tb)) return ta - tb
  return a < b ? -1 : a > b ? 1 : 0
}
