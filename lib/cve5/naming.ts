// CNA vendor/product strings → the CPE vendor:product pairs the scanner produces.
//
// CNAs name products in their own words (`F5` / `NGINX Open Source`, `Eclipse Foundation` /
// `Mosquitto`, `n/a` / `PostgreSQL`), while detection yields CPE pairs (`f5:nginx`,
// `eclipse:mosquitto`, `postgresql:postgresql`). A record is indexed under product keys:
//   - `vendor:product` CPE pairs from the entry's own `cpes[]` (CISA's ADP entries always have them),
//   - the pairs this table maps the CNA's strings to,
//   - the strings themselves slugged CPE-style (`redis` / `redis` → `redis:redis`), which catches
//     products named like their CPE without a table row,
//   - `*:<product>` when the CNA gave no vendor (`n/a`), so a product-only entry is still found.
// A detected CPE pair is looked up under itself and under `*:<product>`.

import { unescapeCpeValue } from '../cpe/name'
import type { Cve5Affected, Cve5Summary } from './record'

export interface CpePair {
  vendor: string
  product: string
}

interface NamingRow {
  /** Normalized vendor names that qualify; `*` accepts any vendor, `n/a` and none included. */
  vendors: string[]
  /** Normalized product (or package) names. */
  products: string[]
  targets: string[]
}

// Each row was checked against real records (test/fixtures/cve5) or the scanner's alias table
// (lib/scanner/cpe-aliases.ts). Products sold under a different name and version line are left
// out on purpose: NGINX Plus (R-numbered) is not nginx, Tanzu RabbitMQ is not RabbitMQ.
const TABLE: NamingRow[] = [
  { vendors: ['*'], products: ['redis', 'redis server', 'redis oss', 'redis open source', 'redis community edition'], targets: ['redis:redis'] },
  { vendors: ['*'], products: ['postgresql', 'postgres', 'postgresql server'], targets: ['postgresql:postgresql'] },
  { vendors: ['*'], products: ['openssh', 'openssh portable', 'portable openssh'], targets: ['openbsd:openssh'] },
  { vendors: ['*'], products: ['nginx', 'nginx open source', 'nginx oss'], targets: ['f5:nginx', 'nginx:nginx'] },
  { vendors: ['*'], products: ['mariadb', 'mariadb server', 'mariadb community server'], targets: ['mariadb:mariadb'] },
  { vendors: ['*'], products: ['mosquitto', 'eclipse mosquitto'], targets: ['eclipse:mosquitto'] },
  {
    vendors: ['*'],
    products: ['rabbitmq', 'rabbitmq server', 'rabbitmq broker'],
    targets: ['vmware:rabbitmq', 'broadcom:rabbitmq_server', 'pivotal_software:rabbitmq']
  },
  { vendors: ['*'], products: ['apache http server', 'apache httpd', 'httpd'], targets: ['apache:http_server'] },
  { vendors: ['apache software foundation', 'apache', 'the apache software foundation'], products: ['http server'], targets: ['apache:http_server'] },
  { vendors: ['*'], products: ['nats server', 'nats io nats server', 'nats'], targets: ['linuxfoundation:nats-server'] },
  { vendors: ['isc', 'internet systems consortium', 'internet systems consortium isc'], products: ['bind', 'bind 9', 'bind9', 'isc bind'], targets: ['isc:bind'] },
  { vendors: ['*'], products: ['isc bind', 'bind9'], targets: ['isc:bind'] },
  { vendors: ['*'], products: ['exim'], targets: ['exim:exim'] },
  { vendors: ['*'], products: ['proftpd'], targets: ['proftpd:proftpd'] },
  { vendors: ['*'], products: ['dovecot', 'dovecot ce', 'dovecot community edition'], targets: ['dovecot:dovecot'] },
  { vendors: ['*'], products: ['memcached'], targets: ['memcached:memcached'] },
  { vendors: ['*'], products: ['mongodb', 'mongodb server', 'mongodb community server', 'mongodb enterprise server'], targets: ['mongodb:mongodb'] },
  { vendors: ['*'], products: ['elasticsearch'], targets: ['elastic:elasticsearch'] },
  { vendors: ['*'], products: ['openssl'], targets: ['openssl:openssl'] },
  { vendors: ['*'], products: ['apache tomcat'], targets: ['apache:tomcat'] },
  { vendors: ['apache software foundation', 'apache', 'the apache software foundation'], products: ['tomcat'], targets: ['apache:tomcat'] },
  { vendors: ['*'], products: ['eclipse jetty'], targets: ['eclipse:jetty'] },
  { vendors: ['eclipse foundation', 'eclipse'], products: ['jetty'], targets: ['eclipse:jetty'] },
  { vendors: ['*'], products: ['samba'], targets: ['samba:samba'] },
  { vendors: ['*'], products: ['postfix'], targets: ['postfix:postfix'] },
  { vendors: ['*'], products: ['vsftpd'], targets: ['vsftpd_project:vsftpd'] },
  { vendors: ['*'], products: ['lighttpd'], targets: ['lighttpd:lighttpd'] },
  { vendors: ['*'], products: ['squid', 'squid cache'], targets: ['squid-cache:squid'] },
  { vendors: ['*'], products: ['dropbear', 'dropbear ssh'], targets: ['dropbear_ssh_project:dropbear_ssh'] },
  { vendors: ['*'], products: ['grafana'], targets: ['grafana:grafana'] },
  { vendors: ['*'], products: ['jenkins'], targets: ['jenkins:jenkins'] },
  { vendors: ['*'], products: ['influxdb'], targets: ['influxdata:influxdb'] },
  { vendors: ['*'], products: ['apache couchdb'], targets: ['apache:couchdb'] },
  { vendors: ['apache software foundation', 'apache', 'the apache software foundation'], products: ['couchdb'], targets: ['apache:couchdb'] }
]

const CORPORATE = /\b(?:inc|incorporated|ltd|limited|llc|corp|corporation|co|gmbh|ag|sa|bv)\b\.?/g

/** Lower case, punctuation to spaces, corporate suffixes and `®`/`™` dropped: `Redis Ltd.` → `redis`. */
export function normalizeName (s: string, vendor = false): string {
  let t = s.toLowerCase().replace(/[®™©]|\(tm\)|\(r\)/g, ' ')
  t = t.replace(/[^a-z0-9+]+/g, ' ')
  if (vendor) t = t.replace(CORPORATE, ' ')
  return t.replace(/\s+/g, ' ').trim()
}

/** CPE-style slug: `Apache HTTP Server` → `apache_http_server`, `nats-server` stays. */
function slug (s: string): string {
  return s.trim().toLowerCase().replace(/[^a-z0-9._+-]+/g, '_').replace(/^_+|_+$/g, '')
}

function isPlaceholder (s: string | undefined): boolean {
  if (s === undefined) return true
  const t = s.trim().toLowerCase()
  return t === '' || t === 'n/a' || t === 'na' || t === 'unknown' || t === 'unspecified' || t === '-'
}

const BY_PRODUCT = new Map<string, NamingRow[]>()
for (const row of TABLE) {
  for (const p of row.products) {
    const list = BY_PRODUCT.get(p) ?? []
    list.push(row)
    BY_PRODUCT.set(p, list)
  }
}

/** CPE pairs the naming table gives for a CNA vendor/product (or package) name. */
export function tableTargets (vendor: string | undefined, product: string): string[] {
  const rows = BY_PRODUCT.get(normalizeName(product)) ?? []
  const v = isPlaceholder(vendor) ? 'n/a' : normalizeName(vendor ?? '', true)
  const out = new Set<string>()
  for (const row of rows) {
    if (row.vendors.includes('*') || row.vendors.includes(v)) for (const t of row.targets) out.add(t)
  }
  return [...out]
}

/** vendor:product of a CPE 2.3 (`cpe:2.3:a:redis:redis:…`) or 2.2 (`cpe:/a:redis:redis`) name. */
export function cpePairKey (cpe: string): string | null {
  const s = cpe.trim()
  let fields: string[] | null = null
  if (s.startsWith('cpe:2.3:')) fields = s.slice(8).split(/(?<!\\):/)
  else if (s.startsWith('cpe:/')) fields = s.slice(5).split(':')
  if (!fields || fields.length < 3) return null
  const vendor = unescapeCpeValue(fields[1]).toLowerCase()
  const product = unescapeCpeValue(fields[2]).toLowerCase()
  if (vendor === '' || product === '' || vendor === '*' || product === '*' || vendor === '-' || product === '-') return null
  return `${vendor}:${product}`
}

/** Product keys one affected entry is indexed under; none for `n/a` products. */
export function entryProductKeys (entry: Cve5Affected): string[] {
  const keys = new Set<string>()
  for (const cpe of entry.cpes ?? []) {
    const k = cpePairKey(cpe)
    if (k) keys.add(k)
  }
  const names = [entry.product, entry.packageName].filter((n): n is string => !isPlaceholder(n))
  for (const name of names) {
    for (const t of tableTargets(entry.vendor, name)) keys.add(t)
    const p = slug(name)
    if (p === '') continue
    if (isPlaceholder(entry.vendor)) keys.add(`*:${p}`)
    else keys.add(`${slug(entry.vendor ?? '')}:${p}`)
  }
  return [...keys]
}

/** Every product key of a record, for the `cve5-product` table. Rejected records have none. */
export function recordProductKeys (summary: Cve5Summary): string[] {
  if (summary.state === 'REJECTED') return []
  const keys = new Set<string>()
  for (const entry of summary.affected) for (const k of entryProductKeys(entry)) keys.add(k)
  return [...keys]
}

/** Keys to look up for a detected CPE vendor:product. */
export function lookupKeys (pair: CpePair): string[] {
  const vendor = pair.vendor.trim().toLowerCase()
  const product = pair.product.trim().toLowerCase()
  return [`${vendor}:${product}`, `*:${product}`]
}

/** Whether an affected entry names the detected product (so its versions apply to it). */
export function entryNames (entry: Cve5Affected, pair: CpePair): boolean {
  const wanted = new Set(lookupKeys(pair))
  return entryProductKeys(entry).some((k) => wanted.has(k))
}
