// Elasticsearch and OpenSearch answer `GET /` with a JSON document naming the cluster and
// `version.number`; with security on, a 401 whose realm and product header still name them.

import { clean, joinInfo, type ProbeMatch } from './common'

export const ports = [9200]

/** Parse the root JSON document; null unless it is an Elasticsearch/OpenSearch banner. */
export function parseRootDocument (body: string): ProbeMatch | null {
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch {
    return null
  }
  if (typeof doc !== 'object' || doc === null) return null
  const d = doc as Record<string, unknown>
  const v = d.version as Record<string, unknown> | undefined
  if (typeof v !== 'object' || v === null || typeof v.number !== 'string') return null
  const opensearch = v.distribution === 'opensearch'
  if (!opensearch && d.tagline !== 'You Know, for Search' && typeof v.lucene_version !== 'string') return null
  return clean({
    service: 'http',
    product: opensearch ? 'OpenSearch' : 'Elasticsearch',
    version: v.number,
    extraInfo: joinInfo(typeof d.cluster_name === 'string' ? `cluster ${d.cluster_name}` : undefined,
      typeof v.lucene_version === 'string' ? `Lucene ${v.lucene_version}` : undefined,
      typeof v.build_flavor === 'string' ? `flavor ${v.build_flavor}` : undefined,
      'no authentication required')
  })
}

/** A 401 from a secured cluster: `X-elastic-product: Elasticsearch` or the `security` realm. */
export function parseUnauthorized (status: number, headers: Map<string, string>): ProbeMatch | null {
  if (headers.get('x-elastic-product') === 'Elasticsearch') {
    return clean({ service: 'http', product: 'Elasticsearch', extraInfo: status === 401 ? 'authentication required' : undefined })
  }
  if (status === 401 && /Basic realm="security"/.test(headers.get('www-authenticate') ?? '') &&
    /application\/json/.test(headers.get('content-type') ?? '')) {
    return { service: 'http', product: 'Elasticsearch', extraInfo: 'authentication required' }
  }
  return null
}
