// HTTP/1.x: `GET /` and the reply's status line, Server header and body. Products that hide or
// omit the header still show themselves on their default or error pages.

import { parseRootDocument, parseUnauthorized } from './elasticsearch'
import { clean, distroTag, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [80, 8080, 8000, 8008, 8081, 8888, 9200, 15672, 5984, 2375, 8086, 8500, 2379, 3000, 9090, 631, 3128, 8118]

/** TLS ports where HTTP runs inside: no banner wait after the handshake. */
export const tlsPorts = [443, 4443, 5986, 6443, 8443, 9443, 10250, 2376]

/** The request line and headers; `Connection: close` so the reply ends with the connection. */
export function request (host: string, port?: number, path = '/'): Buffer {
  const h = host.includes(':') ? `[${host}]` : host
  const hostHeader = port && port !== 80 && port !== 443 ? `${h}:${port}` : h
  return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\nUser-Agent: Mozilla/5.0 (compatible; vulnscan)\r\n` +
    'Accept: */*\r\nConnection: close\r\n\r\n', 'latin1')
}

export interface HttpResponse {
  version: string
  status: number
  reason: string
  headers: Map<string, string>
  body: Buffer
  /** Whether the whole body (by Content-Length or chunked framing) is present. */
  bodyComplete: boolean
}

const MAX_BODY = 32 * 1024

function dechunk (raw: Buffer): { body: Buffer, done: boolean } {
  const parts: Buffer[] = []
  let off = 0
  let size = 0
  for (;;) {
    const nl = raw.indexOf('\r\n', off)
    if (nl < 0) return { body: Buffer.concat(parts), done: false }
    const n = parseInt(raw.subarray(off, nl).toString('latin1').split(';')[0], 16)
    if (!Number.isFinite(n) || n < 0) return { body: Buffer.concat(parts), done: true }
    if (n === 0) return { body: Buffer.concat(parts), done: true }
    const start = nl + 2
    parts.push(raw.subarray(start, Math.min(start + n, raw.length)))
    size += n
    if (start + n + 2 > raw.length || size >= MAX_BODY) return { body: Buffer.concat(parts), done: size >= MAX_BODY }
    off = start + n + 2
  }
}

/** Parse the status line, headers and (de-chunked) body; null unless the reply is HTTP. */
export function parseResponse (reply: Buffer): HttpResponse | null {
  const m = /^HTTP\/(\d\.\d) (\d{3})(?: ([^\r\n]*))?\r?\n/.exec(reply.subarray(0, 256).toString('latin1'))
  if (!m) return null
  const headEnd = reply.indexOf('\r\n\r\n')
  const headText = (headEnd < 0 ? reply : reply.subarray(0, headEnd)).toString('latin1')
  const headers = new Map<string, string>()
  for (const line of headText.split('\r\n').slice(1)) {
    const i = line.indexOf(':')
    if (i <= 0) continue
    const name = line.slice(0, i).trim().toLowerCase()
    const value = line.slice(i + 1).trim()
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value)
  }
  const status = Number(m[2])
  let body: Buffer = Buffer.alloc(0)
  let bodyComplete = false
  if (headEnd >= 0) {
    const raw = reply.subarray(headEnd + 4)
    if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
      const d = dechunk(raw)
      body = d.body
      bodyComplete = d.done
    } else {
      const len = Number(headers.get('content-length'))
      body = raw.subarray(0, MAX_BODY)
      bodyComplete = status === 204 || status === 304 || (status >= 100 && status < 200) ||
        (Number.isFinite(len) && headers.has('content-length') && raw.length >= len) || raw.length >= MAX_BODY
    }
  }
  return { version: m[1], status, reason: m[3] ?? '', headers, body, bodyComplete }
}

export function complete (reply: Buffer): boolean {
  const r = parseResponse(reply)
  return r !== null && r.bodyComplete
}

interface ServerRule { re: RegExp, product: string }

/** Server header tokens, matched on `name/version`; first match wins. */
const SERVER_RULES: ServerRule[] = [
  { re: /^nginx(?:\/([\d.]+))?/i, product: 'nginx' },
  { re: /^openresty(?:\/([\d.]+))?/i, product: 'OpenResty' },
  { re: /^Tengine(?:\/([\d.]+))?/i, product: 'Tengine' },
  { re: /^Apache-Coyote\b()/, product: 'Apache Tomcat' },
  { re: /^Apache(?:\/([\d.]+))?(?:\s|$)/, product: 'Apache httpd' },
  { re: /^Microsoft-IIS(?:\/([\d.]+))?/, product: 'Microsoft IIS httpd' },
  { re: /^Microsoft-HTTPAPI(?:\/([\d.]+))?/, product: 'Microsoft HTTPAPI httpd' },
  { re: /^lighttpd(?:\/([\d.]+))?/i, product: 'lighttpd' },
  { re: /^Caddy(?:\/([\d.]+))?/i, product: 'Caddy' },
  { re: /^Jetty\(([^)]+)\)/, product: 'Jetty' },
  { re: /^Jetty(?:\/([\w.]+))?/, product: 'Jetty' },
  { re: /^Kestrel()/, product: 'Kestrel' },
  { re: /^gunicorn(?:\/([\d.]+))?/i, product: 'gunicorn' },
  { re: /^Werkzeug(?:\/([\d.]+))?/, product: 'Werkzeug httpd' },
  { re: /^uvicorn()/, product: 'Uvicorn' },
  { re: /^Cowboy()/i, product: 'Cowboy httpd' },
  { re: /^CouchDB(?:\/([\d.]+))?/, product: 'CouchDB' },
  { re: /^Docker(?:\/([\d.]+))?/, product: 'Docker' },
  { re: /^Squid(?:\/([\d.]+))?/i, product: 'Squid http proxy' },
  { re: /^CUPS(?:\/([\d.]+))?/, product: 'CUPS' },
  { re: /^tinyproxy(?:\/([\d.]+))?/i, product: 'tinyproxy' },
  { re: /^envoy()/, product: 'Envoy' },
  { re: /^MinIO()/, product: 'MinIO' },
  { re: /^LiteSpeed()/i, product: 'LiteSpeed httpd' },
  { re: /^Varnish()/, product: 'Varnish' },
  { re: /^Boa(?:\/([\w.]+))?/, product: 'Boa httpd' },
  { re: /^mini_httpd(?:\/([\w.]+))?/, product: 'mini_httpd' },
  { re: /^thttpd(?:\/([\w.]+))?/, product: 'thttpd' },
  { re: /^GoAhead(?:-Webs|-http)?(?:\/([\w.]+))?/, product: 'GoAhead WebServer' },
  { re: /^Python\/([\d.]+)/, product: 'Python http.server' },
  { re: /^SimpleHTTP(?:\/([\d.]+))?/, product: 'Python SimpleHTTPServer' }
]

/** Default and error pages that name the product when the header does not. */
const PAGE_RULES: Array<{ re: RegExp, product: string }> = [
  { re: /Apache Tomcat\/(\d[\w.-]*)/, product: 'Apache Tomcat' },
  { re: /<center>nginx\/([\d.]+)<\/center>/, product: 'nginx' },
  { re: /<address>Apache\/([\d.]+)[^<]* Server at /, product: 'Apache httpd' },
  { re: /Powered by Jetty:\/\/ ?([\w.]+)/, product: 'Jetty' },
  { re: /<title>RabbitMQ Management<\/title>()/, product: 'RabbitMQ Management' },
  { re: /<title>IIS Windows Server<\/title>()/, product: 'Microsoft IIS httpd' },
  { re: /<title>(?:Welcome to nginx!|nginx)<\/title>()/i, product: 'nginx' },
  { re: /<title>Grafana<\/title>()/, product: 'Grafana' },
  // Consul's `/` with its UI turned off: `Consul Agent: UI disabled. …` (only `Consul Agent` before 1.9).
  { re: /^Consul Agent\b()/, product: 'Consul' },
  // CUPS puts major.minor in its Server header and the full version in every page title.
  { re: /<title>[^<]*\bCUPS v?(\d+(?:\.\d+)*(?:[a-z]+\d*)?)\s*<\/title>/i, product: 'CUPS' },
  { re: /Generated by tinyproxy version (\d+(?:\.\d+)+)/, product: 'tinyproxy' },
  // HAProxy sends no Server header; its statistics page names the version, its own error pages only the product.
  { re: /HAProxy version (\d+(?:\.\d+)+)/, product: 'HAProxy' },
  { re: /<title>Statistics Report for HAProxy[^<]*<\/title>()/, product: 'HAProxy' },
  { re: /<h1>503 Service Unavailable<\/h1>\s*No server is available to handle this request\.()/, product: 'HAProxy' }
]

/** Caches and proxies that keep their version out of `Server` but put it in `Via`: `1.1 varnish (Varnish/7.1)`. */
const VIA_RULES: Array<{ re: RegExp, product: string, prefix?: boolean }> = [
  // Varnish shows major.minor (`Varnish/7.1` for 7.1.1).
  { re: /\(Varnish\/(\d+(?:\.\d+)*)\)/, product: 'Varnish', prefix: true },
  { re: /\(squid\/(\d+(?:\.\d+)*)\)/, product: 'Squid http proxy' }
]

function htmlTitle (body: string): string | undefined {
  const t = /<title[^>]*>([^<]{1,200})<\/title>/i.exec(body)
  return t ? t[1].trim().replace(/\s+/g, ' ') : undefined
}

/** CouchDB's welcome document at `/`: `{"couchdb":"Welcome","version":"3.3.3",…}`. */
function couchdbVersion (body: string): string | undefined {
  if (!body.includes('"couchdb"')) return undefined
  try {
    const d = JSON.parse(body) as { couchdb?: unknown, version?: unknown }
    return d.couchdb === 'Welcome' && typeof d.version === 'string' && /^\d+(?:\.\d+)+/.test(d.version) ? d.version : undefined
  } catch {
    return undefined
  }
}

/** A body that is a JSON object, or null. */
function jsonObject (body: Buffer): Record<string, unknown> | null {
  try {
    const d: unknown = JSON.parse(body.toString('utf8'))
    return typeof d === 'object' && d !== null && !Array.isArray(d) ? d as Record<string, unknown> : null
  } catch {
    return null
  }
}

/**
 * The Kubernetes API server's refusal: a 401 or 403 whose body is a `Status` object of API version v1 carrying the
 * same code (`{"kind":"Status","apiVersion":"v1",…,"status":"Failure",…,"code":403}`). It names the product and
 * nothing of its version.
 */
function kubernetesRefusal (res: HttpResponse): ProbeMatch | null {
  if (res.status !== 401 && res.status !== 403) return null
  const s = jsonObject(res.body)
  if (s === null) return null
  if (s.kind !== 'Status' || s.apiVersion !== 'v1' || s.status !== 'Failure' || s.code !== res.status) return null
  return clean({ service: 'http', product: 'Kubernetes', extraInfo: joinInfo(typeof s.reason === 'string' ? s.reason : undefined, `status ${res.status}`) })
}

/** Identify the product behind an HTTP response. */
export function identify (res: HttpResponse): ProbeMatch {
  const body = res.body.toString('utf8')
  const es = parseRootDocument(body) ?? parseUnauthorized(res.status, res.headers)
  if (es) return es
  const kubernetes = res.headers.has('server') ? null : kubernetesRefusal(res)
  if (kubernetes) return kubernetes
  const server = res.headers.get('server')
  const result: ProbeMatch = { service: 'http' }
  const extra: Array<string | undefined> = []
  if (server) {
    for (const rule of SERVER_RULES) {
      const m = rule.re.exec(server)
      if (m) {
        result.product = rule.product
        if (m[1]) result.version = m[1]
        const comment = /\(([^)]*)\)/.exec(server.slice(m[0].length))
        if (comment) extra.push(comment[1])
        const modules = server.slice(m[0].length).replace(/\([^)]*\)/g, '').trim()
        if (modules) extra.push(modules)
        break
      }
    }
    if (!result.product) {
      const m = /^([A-Za-z][\w.-]*)(?:\/(\d[\w.-]*))?/.exec(server)
      if (m) {
        result.product = m[1]
        if (m[2]) result.version = m[2]
      }
    }
    const tag = distroTag(server)
    if (tag) result.distro = tag.distro
  }
  for (const rule of PAGE_RULES) {
    if (result.product && rule.product !== result.product && !(result.product === 'Cowboy httpd' || result.product === 'Apache Tomcat')) continue
    if (result.version && rule.product !== result.product) continue
    const m = rule.re.exec(body)
    if (!m) continue
    // A page version only refines the header's: `2.4` in the header, `2.4.2` on the page.
    if (result.version && !(m[1] && m[1].startsWith(result.version + '.'))) break
    result.product = rule.product
    if (m[1]) result.version = m[1]
    break
  }
  if (!result.version && (result.product === undefined || result.product === 'CouchDB')) {
    const couch = couchdbVersion(body)
    if (couch !== undefined) { result.product = 'CouchDB'; result.version = couch }
  }
  // CUPS's Server header shows major.minor; without a page title to refine it, that is all that is known.
  if (result.product === 'CUPS' && result.version !== undefined && /^\d+\.\d+$/.test(result.version)) result.versionPrefix = true
  const via = res.headers.get('via')
  if (via && !result.version) {
    for (const rule of VIA_RULES) {
      const m = rule.re.exec(via)
      if (m && (!result.product || result.product === rule.product)) {
        result.product = rule.product
        result.version = m[1]
        if (rule.prefix === true) result.versionPrefix = true
        break
      }
    }
  }
  const jenkins = res.headers.get('x-jenkins')
  if (jenkins) { result.product = 'Jenkins'; result.version = jenkins }
  const influx = res.headers.get('x-influxdb-version')
  if (influx) { result.product = 'InfluxDB'; result.version = influx.replace(/^v/, '') }
  const powered = res.headers.get('x-powered-by')
  if (powered) extra.push(`powered by ${powered}`)
  const title = htmlTitle(body)
  if (title) extra.push(`title "${title.slice(0, 80)}"`)
  extra.push(`status ${res.status}`)
  result.extraInfo = joinInfo(...extra)
  return clean(result)
}

export function parse (reply: Buffer): ProbeMatch | null {
  const res = parseResponse(reply)
  return res ? identify(res) : null
}

/**
 * Where a server that hides itself at `/` names itself: API servers written in Go answer `/` with
 * a bare 404 (`404 page not found`, Docker's `{"message":"page not found"}`) and name themselves
 * at `/version`; the Kubernetes API server refuses `/` to anonymous clients but, by default, shows
 * them `/version`; Prometheus redirects `/` to its graph page and names itself at
 * `/api/v1/status/buildinfo`; Grafana redirects `/` to `/login` and gives its version at
 * `/api/health`, which needs no login; Consul redirects `/` to its UI (`/ui/`), or names itself
 * without a version when the UI is off, and gives its version at `/v1/agent/self` (unless ACLs
 * refuse it); Traefik's API entry point redirects `/` to `/dashboard/` and gives its version at
 * `/api/version`. Undefined when `/` said enough or gives no such lead.
 */
export function followUpPath (reply: Buffer): string | undefined {
  const res = parseResponse(reply)
  if (!res || res.headers.has('server')) return undefined
  if (kubernetesRefusal(res)) return '/version'
  const location = res.headers.get('location') ?? ''
  if (res.status === 404) {
    const body = res.body.toString('utf8').trim()
    if (body === '404 page not found' || body === '{"message":"page not found"}') return '/version'
  }
  if (res.status === 302 && /^\/(?:classic\/)?graph$/.test(location)) return '/api/v1/status/buildinfo'
  if (res.status === 302 && location === '/login') return '/api/health'
  if (res.status === 301 && location === '/ui/') return '/v1/agent/self'
  if ((res.status === 302 || res.status === 301) && location === '/dashboard/') return '/api/version'
  if (res.status === 200 && /^Consul Agent\b/.test(res.body.toString('utf8'))) return '/v1/agent/self'
  return undefined
}

/** Prometheus's build information: `{"status":"success","data":{"version":"2.42.0+ds",…}}`. */
function prometheusBuildInfo (d: Record<string, unknown>): ProbeMatch | null {
  const data = d.data as Record<string, unknown> | undefined
  if (d.status !== 'success' || typeof data !== 'object' || data === null || typeof data.version !== 'string' || typeof data.goVersion !== 'string') return null
  const m = /^(\d+(?:\.\d+)+)(.*)$/.exec(data.version)
  const revision = typeof data.revision === 'string' && /[-+~]/.test(data.revision) ? data.revision : undefined
  const tag = revision ? distroTag(revision) : undefined
  return clean({
    service: 'http',
    product: 'Prometheus',
    version: m?.[1],
    distro: tag?.distro,
    extraInfo: joinInfo(revision ? `build ${revision}` : m?.[2] ? `build ${data.version}` : undefined, `go ${data.goVersion.replace(/^go/, '')}`)
  })
}

/** Grafana's `/api/health`: `{"commit":"087143285","database":"ok","version":"5.1.3"}` (no version when hidden). */
function grafanaHealth (d: Record<string, unknown>): ProbeMatch | null {
  if (typeof d.database !== 'string' || typeof d.version !== 'string' || typeof d.commit !== 'string' || !/^\d+\.\d+/.test(d.version)) return null
  return clean({ service: 'http', product: 'Grafana', version: d.version, extraInfo: joinInfo(`commit ${d.commit}`, `database ${d.database}`) })
}

/** Consul's `/v1/agent/self`: `Config` names the datacenter, node and `Version`, `Member` the gossip member. */
function consulAgentSelf (d: Record<string, unknown>): ProbeMatch | null {
  const c = d.Config as Record<string, unknown> | undefined
  if (typeof c !== 'object' || c === null || typeof d.Member !== 'object' || d.Member === null) return null
  if (typeof c.Datacenter !== 'string' || typeof c.NodeName !== 'string' || typeof c.Version !== 'string') return null
  return clean({
    service: 'http',
    product: 'Consul',
    version: c.Version.replace(/^v/, ''),
    extraInfo: joinInfo(`datacenter ${c.Datacenter}`, c.Server === true ? 'server' : c.Server === false ? 'client' : undefined,
      typeof c.Revision === 'string' && c.Revision !== '' ? `revision ${c.Revision}` : undefined, 'agent API without a token')
  })
}

/**
 * Traefik's `/api/version`: `{"Version":"3.4.0","Codename":"montdor","startDate":"…"}`. A build from source says
 * `dev` and names no release: Traefik without a version then.
 */
function traefikVersion (d: Record<string, unknown>): ProbeMatch | null {
  if (typeof d.Version !== 'string' || typeof d.Codename !== 'string' || typeof d.startDate !== 'string') return null
  const m = /^v?(\d+(?:\.\d+)+(?:-[\w.]+)?)$/.exec(d.Version)
  return clean({
    service: 'http',
    product: 'Traefik',
    version: m?.[1],
    extraInfo: joinInfo(d.Codename !== '' ? `codename ${d.Codename}` : undefined, m ? undefined : d.Version !== '' ? `build ${d.Version}` : undefined)
  })
}

/** The document at a follow-up path: etcd, Docker Engine or Kubernetes `/version`, Prometheus build information,
 * Grafana's health, Consul's agent, Traefik's version. */
export function parseVersionDocument (reply: Buffer): ProbeMatch | null {
  const res = parseResponse(reply)
  if (!res || res.status !== 200) return null
  const d = jsonObject(res.body)
  if (d === null) return null
  const named = prometheusBuildInfo(d) ?? grafanaHealth(d) ?? consulAgentSelf(d) ?? traefikVersion(d)
  if (named) return named
  const str = (v: unknown): string | undefined => typeof v === 'string' && v.length > 0 ? v : undefined
  if (str(d.etcdserver)) {
    return clean({ service: 'http', product: 'etcd', version: str(d.etcdserver), extraInfo: joinInfo(str(d.etcdcluster) && `cluster version ${str(d.etcdcluster)}`) })
  }
  const engine = str(d.Version)
  if (str(d.ApiVersion) && engine) {
    // A distribution's build keeps its repack suffix in the version (Debian's `20.10.24+dfsg1`): the release is the
    // numeric part, the whole string is kept as the build.
    const m = /^v?(\d+(?:\.\d+)+)(.*)$/.exec(engine)
    const tag = distroTag(engine)
    return clean({
      service: 'http',
      product: 'Docker',
      version: m?.[1] ?? engine,
      distro: tag?.distro,
      extraInfo: joinInfo(`API ${str(d.ApiVersion)}`, str(d.Os) && `os ${str(d.Os)}`, m?.[2] ? `build ${engine}` : undefined)
    })
  }
  const git = str(d.gitVersion)
  if (git && str(d.major) !== undefined && /^v\d/.test(git)) {
    return clean({ service: 'http', product: 'Kubernetes', version: git.slice(1), extraInfo: joinInfo(str(d.platform)) })
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'http',
  ports,
  tlsPorts,
  fallback: 'light',
  tlsDefault: true,
  alpn: ['http/1.1'],
  tlsService: 'https',
  recognise: (reply) => parse(reply),
  converse: async (io, s) => {
    io.write(request(s.host, s.port))
    const reply = await io.read(complete, s.wait(), s.idleMs)
    const first = parse(reply)
    // Only where `/` left the version unknown: one more request, and only on the leads followUpPath knows.
    const path = first && !first.version ? followUpPath(reply) : undefined
    if (!path || s.signal.aborted) return { match: first, reply }
    const again = await s.open()
    if (!again) return { match: first, reply }
    again.write(request(s.host, s.port, path))
    const more = await again.read(complete, s.wait(), s.idleMs)
    again.close()
    const named = parseVersionDocument(more)
    return named ? { match: named, reply: more } : { match: first, reply }
  },
  hintsTls: (reply) => /plain HTTP request was sent to HTTPS port|speaking plain HTTP to an SSL-enabled server/i.test(reply.toString('latin1')),
  products: [...new Set([...SERVER_RULES.map((r) => r.product), ...PAGE_RULES.map((r) => r.product), ...VIA_RULES.map((r) => r.product),
    'Elasticsearch', 'OpenSearch', 'Jenkins', 'InfluxDB', 'etcd', 'Docker', 'Kubernetes', 'Prometheus', 'Grafana', 'Consul', 'Traefik'])],
  verbatimProducts: true
}
