import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, reply } from '../../../../schemas/common'
import { ScanIdParamsSchema } from '../../../../schemas/scan'
import { ScanDiffQuerySchema, ScanDiffSchema } from '../../../../schemas/scan-diff'
import { BadRequestError, ConflictError, notFoundAs } from '../../../../lib/errors'
import type { ScanHostRecord } from '../../../../lib/store/results-types'
import { isTerminal, type ScanRecord } from '../../../../lib/store/types'
import { diffScans } from '../../../../lib/scan-diff'

const scanDiff: FastifyPluginAsyncTypebox = async (fastify) => {
  const finished = (scan: ScanRecord, role: string): void => {
    if (!isTerminal(scan.status)) throw new ConflictError(`Scan '${scan.id}' (${role}) is ${scan.status}: a diff compares scans that have ended`)
  }

  fastify.get('/:id/diff', {
    schema: {
      operationId: 'diffScan',
      tags: ['scans'],
      summary: 'Compare a scan with another',
      description: 'What changed between two ended scans: findings new (observed by this scan, not by the other), fixed ' +
        '(observed by the other on a host and port this scan covered and settled, not observed now) and unchanged; ports ' +
        'opened and closed on hosts up in both (only ports both scans covered count); services whose product or version ' +
        'changed; hosts that appeared or went down. Without `against`, the previous completed scan of the same targets ' +
        '(the same set of target values, order aside). Every list is paged by the same `limit` (default 100, at most ' +
        '1000) and `offset`; `totals` gives each list\'s full length. 404 for an unknown scan; 409 for a scan still ' +
        'queued or running, or when no earlier completed scan of the same targets exists. Scans from before this ' +
        'version kept no per-scan results and compare as empty.',
      params: ScanIdParamsSchema,
      querystring: ScanDiffQuerySchema,
      response: { 200: reply(ScanDiffSchema, 'The differences'), ...errors(400, 401, 404, 409, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    const { against: named, limit = 100, offset = 0 } = request.query
    if (named === id) throw new BadRequestError(`against names the scan itself ('${id}'); name another scan to compare with`)
    const scan = await fastify.owned.read(request, 'scan', id)
    let other: ScanRecord | null
    if (named !== undefined) {
      other = await fastify.owned.read(request, 'scan', named).catch(notFoundAs(`No scan with id '${named}' (against)`))
    } else {
      // The previous scan of the same targets reaches what this one reaches; it is read as any scan is.
      const previous = await fastify.store.previousScan(id, 'completed')
      other = previous === null ? null : await fastify.owned.read(request, 'scan', previous.id).catch(() => null)
      if (other === null) throw new ConflictError(`No completed scan of the same targets before scan '${id}' to compare with; name one with ?against=`)
    }
    finished(scan, 'scanId')
    finished(other, 'against')
    const sees = fastify.owned.addresses(request)
    const seen = (hosts: ScanHostRecord[]): ScanHostRecord[] => sees === null ? hosts : hosts.filter((h) => sees(h.address))
    const [now, then] = await Promise.all([fastify.results.scanHosts(scan.id), fastify.results.scanHosts(other.id)])
    const d = await diffScans(seen(now), seen(then))
    const page = <T>(list: T[]): T[] => list.slice(offset, offset + limit)
    return {
      scanId: scan.id,
      against: other.id,
      limit,
      offset,
      totals: {
        newFindings: d.findings.new.length,
        fixedFindings: d.findings.fixed.length,
        unchangedFindings: d.findings.unchanged.length,
        portsOpened: d.ports.opened.length,
        portsClosed: d.ports.closed.length,
        servicesChanged: d.services.changed.length,
        hostsAppeared: d.hosts.appeared.length,
        hostsDown: d.hosts.down.length
      },
      findings: { new: page(d.findings.new), fixed: page(d.findings.fixed), unchanged: page(d.findings.unchanged) },
      ports: { opened: page(d.ports.opened), closed: page(d.ports.closed) },
      services: { changed: page(d.services.changed) },
      hosts: { appeared: page(d.hosts.appeared), down: page(d.hosts.down) }
    }
  })
}

export default scanDiff

// A folder of its own, as the report route has (autoload ignores other files next to an index.ts); the URL is
// /app/scan/{id}/diff, so the folder's name is not a prefix.
export const prefixOverride = '/app/scan'
