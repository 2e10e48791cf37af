// Reading findings for a verdict: every page of a list, a finished scan's own findings, and the products the
// scans behind a list could not check against the NVD.
import pc from 'picocolors'
import { CLI_FINDING_SORT } from '../lib/vocabulary'
import type { operations } from '../sdk'
import { api, CliError, EXIT, jsonPage, print, printJson, type Context } from './context'
import { uncheckedGate, verdict, type Gate } from './gate'
import { findingsLine, findingsTable, type Finding, type Scan } from './output'

export type FindingQuery = Omit<NonNullable<operations['listFindings']['parameters']['query']>, 'limit' | 'offset' | 'cursor'>

/**
 * Every page of a list, for the totals --fail-on needs (bounded: at most `cap` items). Paged by cursor, so that
 * findings written meanwhile neither repeat one nor skip one.
 */
export async function allFindings (ctx: Context, query: FindingQuery, cap = 100_000): Promise<{ items: Finding[], total: number }> {
  const items: Finding[] = []
  let total = 0
  let cursor: string | undefined
  while (items.length < cap) {
    const data = jsonPage(await api(ctx.client.GET('/vulnerability', { params: { query: { sort: CLI_FINDING_SORT, ...query, limit: 500, cursor } } }), ctx.baseUrl))
    items.push(...data.items)
    total = data.total
    cursor = data.nextCursor
    if (cursor === undefined) break
  }
  return { items, total }
}

/**
 * The products the scans that last saw these hosts could not check against the NVD, by scan id. A scan that
 * no longer exists says nothing either way.
 */
export async function uncheckedByScan (ctx: Context, scanIds: Iterable<string>): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const id of new Set(scanIds)) {
    let result
    try {
      result = await ctx.client.GET('/app/scan/{id}', { params: { path: { id } } })
    } catch {
      throw new CliError(`Cannot reach vulnscan at ${ctx.baseUrl} to read scan ${id}`, EXIT.API)
    }
    if (result.response.status === 404 || result.data === undefined) continue
    const products = result.data.summary?.uncheckedProducts ?? []
    if (products.length > 0) out.set(id, products)
  }
  return out
}

/** The scan ids that last saw the hosts of a findings list: one host, or every host (bounded like allFindings). */
export async function lastScansOfHosts (ctx: Context, address: string | undefined, cap = 100_000): Promise<string[]> {
  if (address !== undefined) {
    const result = await ctx.client.GET('/host/{address}', { params: { path: { address } } }).catch(() => null)
    return result?.data !== undefined && result.data !== null ? [result.data.lastScanId] : []
  }
  const ids: string[] = []
  let cursor: string | undefined
  while (ids.length < cap) {
    const { data } = await api(ctx.client.GET('/host', { params: { query: { limit: 500, cursor } } }), ctx.baseUrl)
    ids.push(...data.items.map((h) => h.lastScanId))
    cursor = data.nextCursor
    if (cursor === undefined) break
  }
  return ids
}

/**
 * The line every list and host view prints when products could not be checked: without it an empty list reads as
 * "no vulnerabilities" when it means "not looked at".
 */
export function uncheckedLine (unchecked: Map<string, string[]>): string | null {
  const products = [...new Set([...unchecked.values()].flat())].sort()
  if (products.length === 0) return null
  return pc.yellow(`Not checked against the vulnerability data: ${products.join(', ')} (the NVD was unreachable, or the local index ` +
    'is partial and NVD_ON_DEMAND=false). No finding about them means nothing: see vulnscan health, import the data, re-scan.')
}

/** A finished scan: its summary and findings (or its JSON), then the verdict of --fail-on. */
export async function finishScan (ctx: Context, scan: Scan, gate: Gate, ids = false): Promise<number> {
  const { io } = ctx
  if (scan.status !== 'completed') {
    if (ctx.json) printJson(io, { scan })
    throw new CliError(`Scan ${scan.id} ${scan.status}${scan.reason ? `: ${scan.reason}` : ''}`, EXIT.API)
  }
  // Findings are kept per host and port across scans; this scan's are those it saw last.
  const items = (await allFindings(ctx, {})).items.filter((f) => f.lastScanId === scan.id)
  if (ctx.json) {
    printJson(io, { scan, findings: items })
  } else {
    const s = scan.summary
    if (s) print(io, `Scan ${scan.id} completed: ${s.hostsUp} host${s.hostsUp === 1 ? '' : 's'} up, ${s.openPorts} open port${s.openPorts === 1 ? '' : 's'}.`)
    const line = s !== undefined ? uncheckedLine(new Map([[scan.id, s.uncheckedProducts]])) : null
    if (line !== null) print(io, line)
    // What the scan matched but does not count: backported fixes and products shown without a version.
    for (const [status, what] of [['fixed_by_distribution', 'fixed by the distribution (backported)'], ['potential', 'potential (product seen without a version)']] as const) {
      const n = (await allFindings(ctx, { status })).items.filter((f) => f.lastScanId === scan.id).length
      if (n > 0) print(io, pc.dim(`${n} more CVE${n === 1 ? '' : 's'} ${what}, not counted: vulnscan vulns --status ${status}`))
    }
    if (items.length === 0) print(io, 'No findings.')
    else print(io, `${findingsTable(items, { ids, width: ctx.width })}\n${findingsLine(items)}`)
  }
  const unchecked = new Map(scan.summary !== undefined && scan.summary.uncheckedProducts.length > 0 ? [[scan.id, scan.summary.uncheckedProducts]] : [])
  return uncheckedGate(gate, verdict(io, items, gate, ctx.json), `scan ${scan.id}`, unchecked)
}
