// The shapes of a loaded template: what lib/templates/load.ts makes of a Nuclei-format YAML file, and what the
// runner (./run.ts) and the matchers (./match.ts) work on.
import type { TemplateSeverity } from '../domain/severity'
import type { SslRequest } from './ssl'
import type { DnsRequest } from './dns'

export type TemplateOrigin = 'project' | 'user'
export type SignatureState = 'signed' | 'unsigned' | 'invalid'

export interface NetInput {
  /** Text to send (interpolated); for `type: hex`, hex digits. */
  data: string
  hex: boolean
  /** Bytes to read after sending (0: the request's read-size at the end). */
  read: number
  /** Name under which what this read returned is a part and a variable. */
  name?: string
}

export type MatcherType = 'word' | 'regex' | 'binary' | 'size' | 'dsl'

export interface Matcher {
  type: MatcherType
  part: string
  condition: 'and' | 'or'
  negative: boolean
  caseInsensitive: boolean
  /** `hex`: the words are written in hex. */
  encoding?: 'hex'
  name?: string
  internal: boolean
  values: string[]
  sizes: number[]
}

export type ExtractorType = 'regex' | 'kval' | 'json' | 'dsl'

export interface Extractor {
  type: ExtractorType
  part: string
  name?: string
  internal: boolean
  group: number
  values: string[]
}

export interface NetRequest {
  /** Host patterns as written (`{{Hostname}}`, `tls://{{Hostname}}`). */
  hosts: string[]
  /** Ports the template declares (its own idea of where the service lives). */
  ports: number[]
  tls: boolean
  inputs: NetInput[]
  readSize: number
  readAll: boolean
  matchersCondition: 'and' | 'or'
  matchers: Matcher[]
  extractors: Extractor[]
}

export interface LoadedTemplate {
  id: string
  name: string
  severity: TemplateSeverity
  description: string
  remediation?: string
  tags: string[]
  cveIds: string[]
  cweIds: string[]
  cpe?: string
  variables: Record<string, string>
  requests: NetRequest[]
  /** The `ssl:` requests (./ssl.ts): then `requests` is empty and the template runs on ports that speak TLS. */
  ssl?: SslRequest[]
  /** The `dns` block's questions (./dns.ts); a template has these or tcp requests, never both. */
  dns?: DnsRequest[]
  /** Services (as detection names them) the template runs on, wherever they were found. */
  services: string[]
  /** Every port the template declares. */
  ports: number[]
  /** Runs only when the scan sets `options.intrusive`. */
  intrusive: boolean
  origin: TemplateOrigin
  file: string
  signature: SignatureState
}

export interface Refusal {
  file: string
  id?: string
  origin: TemplateOrigin
  reason: string
}
