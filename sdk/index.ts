// The typed vulnscan client: openapi-fetch over the types generated from openapi.yaml (sdk/schema.d.ts).
import createClient, { type Client } from 'openapi-fetch'
import type { components, operations, paths } from './schema'

export type { components, operations, paths }
export type Schemas = components['schemas']
export type VulnscanClient = Client<paths>

export interface VulnscanClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  /** The infrastructure key or a dynamic key; sent as `X-API-Key` on every request. */
  apiKey?: string
  /** Another fetch implementation (a proxy-aware one, or a test double). */
  fetch?: typeof globalThis.fetch
}

/** A client whose every call is checked against the document: paths, parameters, bodies and responses. */
export function createVulnscanClient ({ baseUrl, apiKey, fetch }: VulnscanClientOptions): VulnscanClient {
  const headers: Record<string, string> = {}
  if (apiKey !== undefined && apiKey !== '') headers['X-API-Key'] = apiKey
  return createClient<paths>({
    // A trailing slash would turn /host into //host, which the server does not route.
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers,
    ...(fetch ? { fetch } : {})
  })
}
