// What both index backends share: the extended interface and the preparation of a record for
// storage (normalize, serialize, list the criteria per product).

import { normalizeCve } from './normalize'
import { criterionUses, type CriterionUse, type MatchHit } from './matcher'
import type { GroupHit } from './product-groups'
import type { CveIndex, CveMatch, CveRecord } from './types'

/** CveIndex plus the cheaper steps of a match, for callers that do not need every record. */
export interface LocalCveIndex extends CveIndex {
  /** The distinct criteria of the CPE's product that match, each with the CVE ids carrying it. */
  matchGroups(cpe: string): Promise<GroupHit[]>
  /** One hit per CVE, without loading the records. */
  matchHits(cpe: string): Promise<MatchHit[]>
  /** Upsert already-normalized records. */
  upsertRecords(records: CveRecord[]): Promise<number>
  getMany(ids: readonly string[]): Promise<Array<CveRecord | null>>
  /** Persist now (file backend); a no-op where every write is already durable. */
  flush(): Promise<void>
  /** Pick up what another process wrote (the file backend reloads a replaced file); true when it did. */
  refresh(): Promise<boolean>
}

export interface PreparedRecord {
  record: CveRecord
  json: string
  uses: CriterionUse[]
}

export function prepare (record: CveRecord): PreparedRecord {
  return { record, json: JSON.stringify(record), uses: record.rejected ? [] : criterionUses(record.configurations) }
}

/** Normalize raw NVD objects; a record that cannot be normalized is reported, not stored. */
export function normalizeAll (raw: unknown[], onError?: (err: Error, index: number) => void): CveRecord[] {
  const out: CveRecord[] = []
  raw.forEach((r, i) => {
    try {
      out.push(normalizeCve(r))
    } catch (err) {
      if (onError === undefined) throw err
      onError(err as Error, i)
    }
  })
  return out
}

/**
 * Keep, per id, only the newest record of a batch, so a batch with the same CVE twice behaves
 * like two upserts in order.
 */
export function newestPerId (records: CveRecord[], cmp: (a: string, b: string) => number): CveRecord[] {
  const byId = new Map<string, CveRecord>()
  for (const r of records) {
    const prev = byId.get(r.id)
    if (prev === undefined || cmp(r.lastModified, prev.lastModified) >= 0) byId.set(r.id, r)
  }
  return [...byId.values()]
}

export function hitsToMatches (hits: MatchHit[], records: Array<CveRecord | null>): CveMatch[] {
  const out: CveMatch[] = []
  hits.forEach((h, i) => {
    const cve = records[i]
    if (cve === null || cve === undefined || cve.rejected) return
    const m: CveMatch = { cve, criterion: h.criterion, reason: h.reason, confidence: h.confidence }
    if (h.requiresPlatform !== undefined) m.requiresPlatform = h.requiresPlatform
    if (h.productOnly === true) m.productOnly = true
    out.push(m)
  })
  return out
}

export function productKeysOf (uses: CriterionUse[]): Set<string> {
  return new Set(uses.map((u) => u.productKey))
}
