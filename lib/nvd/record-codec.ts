// Records are stored deflated: a normalized CVE is a few kilobytes of JSON (mostly references),
// and a full NVD mirror holds about 300,000 of them, which would not fit in memory or in a
// shared Redis comfortably as plain text.

import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { CveRecord } from './types'

export function encodeJson (json: string): Buffer {
  // zlib returns a view on a 16 KB working buffer; copying keeps only the bytes (about 1.4 KB).
  return Buffer.from(deflateRawSync(json, { level: 2 }))
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
