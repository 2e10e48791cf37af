// What a scan learns of one open port: the service detection named, its TLS certificate, and the exposures that
// the checks and templates proved there.
import type { TemplateSeverity } from './severity'

export interface TlsInfo {
  protocol?: string
  subject?: string
  issuer?: string
  notBefore?: string
  notAfter?: string
  selfSigned?: boolean
}

/** What service detection learned about one open port. */
export interface ServiceInfo {
  /** Protocol name, lower case: ssh, http, https, redis, postgresql, mysql, amqp, mqtt, nats, … or 'unknown'. */
  service: string
  product?: string
  version?: string
  /**
   * The wire shows only the leading parts of the version (InspIRCd's major release, Varnish's major.minor in
   * `Via`, CUPS's major.minor in `Server`): a range bound that begins with them cannot be decided.
   */
  versionPrefix?: boolean
  extraInfo?: string
  /** Distribution packaging tag seen in the banner, e.g. 'deb12u3' or 'Ubuntu'. */
  distro?: string
  /** Raw banner or reply, bounded in size, printable. */
  banner?: string
  /** CPE 2.3 formatted strings naming the product (several when NVD lists it under several vendors). */
  cpe: string[]
  tls?: TlsInfo
}

/** What one template (lib/templates/) concluded on one port. */
export interface TemplateHit {
  id: string
  name: string
  severity: TemplateSeverity
  cveIds: string[]
  description: string
  remediation?: string
  tags: string[]
  /** The matcher names that matched, and the values the extractors took. */
  matched: string[]
  extracted: string[]
  evidence: string
}

/** An exposure an exposure check proved on a port: the check's catalogue id and what the server said. */
export interface PortExposure {
  check: string
  evidence: string
  /** Set when a template (lib/templates/) proved it: `check` is then the template's id. */
  template?: TemplateHit
}
