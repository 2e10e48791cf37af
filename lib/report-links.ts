// Short-lived signed links to a scan's report, for a browser: the HTML report needs an X-API-Key header that a
// browser cannot send, so a key that may read the report asks for a link, and the link carries what the key may
// see. A link names the scan, the format and filters, the key it was made for and when it expires, under an HMAC
// with a key of the deployment (every API process reads the links any of them made). When it is used, the key it
// was made for must still exist, not have expired, and still be allowed to read: revoking the key ends its links.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { deploymentKey } from './list-cursor'
import { LEGACY_ROLE, roleAllows, SERVICE_PRINCIPAL_ID, type Role } from './access'
import type { Store } from './store/types'

export interface ReportLink {
  scanId: string
  format: string
  /** The report's filters, as the report route takes them. */
  filters: Record<string, string | number>
  /** The key the link was made for: 'service' or a dynamic key's id. */
  keyId: string
  /** Milliseconds since the epoch. */
  expiresAt: number
}

export const REPORT_LINK_TTL_DEFAULT = 600
export const REPORT_LINK_TTL_MAX = 3600

/** The key links are signed with: the deployment's, derived for this purpose (lib/list-cursor.ts). */
export function reportLinkKey (config: { CREDENTIALS_KEY?: string, SERVICE_API_KEY?: string }): Buffer {
  return deploymentKey(config, 'vulnscan report link v1')
}

export class ReportLinkError extends Error {}

export class ReportLinkCodec {
  constructor (private readonly key: Buffer) {}

  private mac (text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest()
  }

  make (link: ReportLink): string {
    const text = JSON.stringify([1, link.scanId, link.format, link.filters, link.keyId, link.expiresAt])
    return `${Buffer.from(text).toString('base64url')}.${this.mac(text).toString('base64url')}`
  }

  /** The link a token names, for the scan `scanId`; a ReportLinkError saying what is wrong otherwise. */
  read (token: string, scanId: string, now = Date.now()): ReportLink {
    const [body, sig, more] = token.split('.')
    if (body === undefined || sig === undefined || more !== undefined) throw new ReportLinkError('not a report link this service made')
    const text = Buffer.from(body, 'base64url').toString()
    const expected = this.mac(text)
    const given = Buffer.from(sig, 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ReportLinkError('not a report link this service made')
    const [version, scan, format, filters, keyId, expiresAt] = JSON.parse(text) as [number, string, string, Record<string, string | number>, string, number]
    if (version !== 1) throw new ReportLinkError('not a report link this service made')
    if (scan !== scanId) throw new ReportLinkError('this link is for another scan')
    if (expiresAt <= now) throw new ReportLinkError('this link has expired: ask for a new one')
    return { scanId: scan, format, filters, keyId, expiresAt }
  }
}

/** Who a link acts for now: the key it was made for, if that key still exists, has not expired and may read. */
export async function linkPrincipal (store: Pick<Store, 'listApiKeys'>, keyId: string, now = Date.now()):
Promise<{ id: string, label: string | null, role: Role, admin: boolean, scope: readonly string[] }> {
  if (keyId === SERVICE_PRINCIPAL_ID) return { id: SERVICE_PRINCIPAL_ID, label: null, role: 'admin', admin: true, scope: [] }
  const key = (await store.listApiKeys()).find((k) => k.id === keyId)
  if (key === undefined) throw new ReportLinkError('the key this link was made for is revoked')
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) throw new ReportLinkError('the key this link was made for has expired')
  const role = key.role ?? LEGACY_ROLE
  if (!roleAllows(role, 'reader')) throw new ReportLinkError('the key this link was made for may no longer read reports')
  return { id: key.id, label: key.label, role, admin: role === 'admin', scope: key.scope ?? [] }
}
