// The storage seam for the vulnerability data sources beyond the NVD (CVE JSON 5 records,
// distribution trackers, KEV, EPSS). Each source encodes its own values as strings in named tables;
// a backend only keeps tables of strings, so a new source needs no new storage code.

export type Entry = readonly [string, string]

export interface SourceStore {
  /** Insert or replace entries of a table. Bulk imports pass batches of a few thousand. */
  put(table: string, entries: Iterable<Entry>): Promise<void>
  get(table: string, key: string): Promise<string | null>
  /** Values in the order of keys; null where absent. */
  getMany(table: string, keys: readonly string[]): Promise<Array<string | null>>
  delete(table: string, keys: readonly string[]): Promise<void>
  /** Remove a whole table. */
  clear(table: string): Promise<void>
  /**
   * Replace a whole table with what the batches hold. Readers see the old table until the new one
   * is complete, so a full re-import never shows a half-filled table.
   */
  replace(table: string, batches: AsyncIterable<Entry[]> | Iterable<Entry[]>): Promise<number>
  count(table: string): Promise<number>
  /** Every entry of a table, in batches (no order promised). */
  scan(table: string, batchSize?: number): AsyncIterable<Array<[string, string]>>
  getMeta(key: string): Promise<string | null>
  /** The names of the tables that hold entries: what a data bundle exports. */
  tables?(): Promise<string[]>
  /** Every metadata entry (import dates, catalog versions). */
  allMeta?(): Promise<Array<[string, string]>>
  setMeta(key: string, value: string): Promise<void>
  /** Changes whenever any process wrote to the store: readers keep caches per revision. */
  revision(): Promise<string>
  /** Make writes durable (the file backend writes its file; Redis: nothing to do). */
  flush(): Promise<void>
  close(): Promise<void>
}

/** Table names may not hold the separator the backends build keys with. */
export function checkTable (table: string): void {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(table)) throw new Error(`invalid source table name: ${JSON.stringify(table)}`)
}
