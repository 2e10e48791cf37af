// Scan requests: validation beyond the schema, normalization, and the record written at enqueue time.
import { createHash, randomUUID } from 'node:crypto'
import type { Target, TemplateName } from './scanner/types'
import { countHosts, parseScope, scopeError, validateTarget, type Scope } from './scanner/targets'
import { parsePortList } from './scanner/ports'
import type { ScanRecord } from './store/types'
import { DEFAULT_PRIORITY, DEFAULT_TEMPLATE } from './vocabulary'
import { tagSet } from './tags'

export interface ScanRequestInput {
  id?: string
  /** May be absent or empty when `targetTags` names the hosts. */
  targets?: Target[]
  options?: { template?: TemplateName, ports?: string, udp?: boolean, udpPorts?: string, discovery?: boolean, intrusive?: boolean, credentials?: string[] }
  priority?: number
  /** Tags added to every host the scan finds up. */
  tags?: string[]
  /** The scan also covers the known hosts carrying any of these tags when it is planned. */
  targetTags?: string[]
}

export interface ScanLimits {
  maxTargets: number
  maxHosts: number
  scope: Scope
}

export function scanLimits (config: { MAX_TARGETS: number, MAX_HOSTS: number, SCAN_ALLOW: string, SCAN_DENY: string }): ScanLimits {
  return { maxTargets: config.MAX_TARGETS, maxHosts: config.MAX_HOSTS, scope: parseScope(config.SCAN_ALLOW, config.SCAN_DENY) }
}

/** The first problem with a request the schema accepted, as a sentence naming the field, or null. */
export function scanRequestProblem (req: ScanRequestInput, limits: ScanLimits): { message: string, scope: boolean } | null {
  const targets = req.targets ?? []
  if (targets.length === 0 && (req.targetTags ?? []).length === 0) {
    return { message: 'targets: a scan needs at least one target, or targetTags naming tagged hosts to scan', scope: false }
  }
  if (targets.length > limits.maxTargets) {
    return { message: `targets has ${targets.length} items, more than the limit of ${limits.maxTargets}`, scope: false }
  }
  for (const [i, target] of targets.entries()) {
    const problem = validateTarget(target, { maxHosts: limits.maxHosts })
    if (problem !== null) return { message: `targets[${i}].value: ${problem}`, scope: false }
    const outOfScope = scopeError(target, limits.scope)
    if (outOfScope !== null) return { message: `targets[${i}].value: ${outOfScope}`, scope: true }
  }
  // Counted, never expanded: overlapping blocks are merged arithmetically, so the check costs the same for
  // 256 copies of a /20 as for one.
  const hosts = countHosts(targets)
  if (hosts > BigInt(limits.maxHosts)) {
    return { message: `targets cover ${hosts} hosts, more than the limit of ${limits.maxHosts} (MAX_HOSTS)`, scope: false }
  }
  if (req.options?.ports !== undefined) {
    try {
      parsePortList(req.options.ports)
    } catch (err) {
      return { message: `options.ports: ${(err as Error).message}`, scope: false }
    }
  }
  if (req.options?.udpPorts !== undefined) {
    try {
      parsePortList(req.options.udpPorts)
    } catch (err) {
      return { message: `options.udpPorts: ${(err as Error).message}`, scope: false }
    }
  }
  return null
}

/**
 * The record stored when a scan is accepted; its requestHash recognises a re-post of the same scan. Tags are
 * part of the request (the same id with other tags is another request) and are hashed only when named, so a
 * scan without them keeps the hash it had before tags existed.
 */
export function newScanRecord (req: ScanRequestInput, createdBy: string, now = new Date()): ScanRecord {
  const tags = tagSet(req.tags ?? [])
  const targetTags = tagSet(req.targetTags ?? [])
  const normalized = {
    targets: (req.targets ?? []).map((t) => ({ value: t.value, type: t.type })),
    template: req.options?.template ?? DEFAULT_TEMPLATE,
    ports: req.options?.ports,
    // Only what the request says: a request without these hashes as it did before they existed.
    udp: req.options?.udp,
    udpPorts: req.options?.udpPorts,
    discovery: req.options?.discovery,
    intrusive: req.options?.intrusive,
    ...(req.options?.credentials !== undefined && req.options.credentials.length > 0 ? { credentials: [...req.options.credentials] } : {}),
    priority: req.priority ?? DEFAULT_PRIORITY,
    ...(tags.length > 0 ? { tags } : {}),
    ...(targetTags.length > 0 ? { targetTags } : {})
  }
  return {
    id: req.id ?? randomUUID(),
    status: 'queued',
    ...normalized,
    requestHash: createHash('sha256').update(JSON.stringify(normalized)).digest('hex'),
    createdAt: now.toISOString(),
    progress: { hostsTotal: 0, hostsDone: 0, portsTotal: 0, portsDone: 0, percent: 0 },
    createdBy
  }
}
