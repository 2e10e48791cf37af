// Builders for results-store tests: host scan writes whose findings come from the real NVD fixture records.
import { normalizeCve } from '../../lib/nvd/normalize'
import type { PortResult } from '../../lib/domain/hosts'
import { Client } from 'pg'
import type { Confidence } from '../../lib/domain/confidence'
import type { FindingQuery, HostScanWrite, ResultsStore } from '../../lib/store/results-types'
import type { NewFinding } from '../../lib/domain/findings'
import { findingSortValue } from '../../lib/store/results-merge'
import { DATABASE_TEST_URL, openBackendsIn, uniquePrefix, uniqueSchema, type Backend } from '../helper'
import { rawFixture } from './nvd-fixtures'

export interface Service { port: number, service: string, product?: string, version?: string, distro?: string, banner?: string, state?: 'open' | 'filtered' }

export function finding (address: string, port: number, cveId: string, product: string, version: string | null, confidence: Confidence = 'high'): NewFinding {
  const cve = normalizeCve(rawFixture(cveId))
  const vendorProduct = product.toLowerCase()
  return {
    address,
    port,
    cveId: cve.id,
    severity: cve.severity ?? 'unknown',
    cvss: cve.cvss,
    cvssVersion: cve.cvssVersion,
    cvssVector: cve.cvssVector,
    kev: cve.kev,
    epss: null,
    description: cve.description,
    product,
    version,
    matchedCpe: `cpe:2.3:a:${vendorProduct}:${vendorProduct}:${version ?? '*'}:*:*:*:*:*:*:*`,
    criterion: `cpe:2.3:a:${vendorProduct}:${vendorProduct}:*:*:*:*:*:*:*:*`,
    reason: version === null ? 'product without version' : `${version} in the vulnerable range`,
    source: 'nvd',
    rule: `nvd: ${vendorProduct} ${version ?? 'any version'} in the vulnerable range`,
    observed: 'open',
    distribution: null,
    confidence,
    confidenceNote: confidence === 'medium' ? 'The banner carries a distro tag: the distro may have backported the fix' : null,
    evidence: `${product} ${version ?? ''}`.trim(),
    requiresPlatform: []
  }
}

export function portResult (s: Service): PortResult {
  return {
    port: s.port,
    protocol: 'tcp',
    state: s.state ?? 'open',
    service: s.state === 'filtered'
      ? undefined
      : {
          service: s.service,
          product: s.product,
          version: s.version,
          distro: s.distro,
          banner: s.banner,
          cpe: s.product ? [`cpe:2.3:a:${s.product.toLowerCase()}:${s.product.toLowerCase()}:${s.version ?? '*'}:*:*:*:*:*:*:*`] : []
        }
  }
}

export function write (opts: {
  address: string
  at: string | number
  scanId?: string
  hostnames?: string[]
  up?: boolean
  services?: Service[]
  scannedPorts?: number[]
  findings?: NewFinding[]
  settledPorts?: number[]
}): HostScanWrite {
  const services = opts.services ?? []
  const at = typeof opts.at === 'number' ? new Date(opts.at).toISOString() : opts.at
  return {
    scanId: opts.scanId ?? `scan-${at}`,
    at,
    host: { address: opts.address, hostnames: opts.hostnames ?? [], up: opts.up ?? true, rttMs: 0.4, ports: services.map(portResult), closedCount: 0 },
    scannedPorts: opts.scannedPorts ?? services.map((s) => s.port),
    findings: opts.findings ?? [],
    settledPorts: opts.settledPorts ?? services.map((s) => s.port)
  }
}

/** A results store of a test's own on one backend, and on the scaled one a client to look at what it left in the database. */
export interface OpenedResults { store: ResultsStore, db?: Client, schema: string }

export async function openResults (t: { teardown(fn: () => unknown): void }, backend: Backend, name: string): Promise<OpenedResults> {
  const prefix = uniquePrefix(name).replace(/:/g, '.')
  const schema = uniqueSchema(name.replace(/-/g, '_'))
  const opened = await openBackendsIn(t, backend, { REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, DATABASE_SCHEMA: schema })
  if (backend !== 'redis') return { store: opened.results, schema }
  const db = new Client({ connectionString: DATABASE_TEST_URL })
  await db.connect()
  t.teardown(() => db.end())
  return { store: opened.results, db, schema }
}

/** The ids of a finding list read page by page from place to place (keyset paging), `limit` a page. */
export async function findingsByPlace (store: ResultsStore, query: Omit<FindingQuery, 'limit' | 'offset'>, limit: number): Promise<string[]> {
  const sort = query.sort ?? 'cvss'
  const out: string[] = []
  let after: FindingQuery['after']
  for (let pages = 0; pages < 100; pages++) {
    const { items } = await store.listFindings({ ...query, limit, offset: 0, after })
    out.push(...items.map((f) => f.id))
    if (items.length < limit) return out
    const last = items[items.length - 1]
    after = { value: findingSortValue(last, sort), key: last.id }
  }
  throw new Error('keyset paging did not end')
}
