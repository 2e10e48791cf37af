import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { slapd } from '../../../../bench/support/daemon-specs'
import { complete, parse, rootDseRequest } from '../../../../lib/scanner/probes/ldap'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

/** An LDAPMessage with a SearchResultEntry for the root DSE holding `attrs`, then SearchResultDone. */
function rootDse (attrs: Record<string, string[]>): Buffer {
  const tlv = (tag: number, body: Buffer): Buffer => {
    const n = body.length
    return Buffer.concat([Buffer.from([tag]), n < 0x80 ? Buffer.from([n]) : Buffer.from([0x82, n >> 8, n & 0xff]), body])
  }
  const s = (v: string): Buffer => tlv(0x04, Buffer.from(v))
  const list = Buffer.concat(Object.entries(attrs).map(([k, vs]) => tlv(0x30, Buffer.concat([s(k), tlv(0x31, Buffer.concat(vs.map(s)))]))))
  const entry = tlv(0x30, Buffer.concat([Buffer.from([2, 1, 1]), tlv(0x64, Buffer.concat([s(''), tlv(0x30, list)]))]))
  const done = Buffer.from('300c02010165070a010004000400', 'hex')
  return Buffer.concat([entry, done])
}

test('the root DSE search: anonymous, base scope, (objectClass=*)', async (t) => {
  const q = rootDseRequest()
  t.equal(q[0], 0x30)
  t.ok(q.includes(Buffer.from('objectClass')) && q.includes(Buffer.from('vendorVersion')))
})

test('root DSEs name their products; no version unless the server publishes one', async (t) => {
  const openldap = rootDse({ objectClass: ['top', 'OpenLDAProotDSE'], supportedLDAPVersion: ['3'] })
  t.ok(complete(openldap))
  t.same(parse(openldap), { service: 'ldap', product: 'OpenLDAP', extraInfo: 'LDAPv3' })
  t.same(parse(rootDse({ vendorName: ['389 Project'], vendorVersion: ['389-Directory/2.3.4 B2023.123.0000'], namingContexts: ['dc=example,dc=com'] })),
    { service: 'ldap', product: '389 Directory Server', version: '2.3.4', extraInfo: 'naming contexts dc=example,dc=com' })
  t.same(parse(rootDse({ domainControllerFunctionality: ['7'], forestFunctionality: ['7'], dnsHostName: ['dc1.corp.example'] })),
    { service: 'ldap', product: 'Microsoft Active Directory', extraInfo: 'host dc1.corp.example' })
  t.same(parse(rootDse({ vendorName: ['Example Corp'], vendorVersion: ['9.9'] })), { service: 'ldap', extraInfo: 'vendor Example Corp 9.9' }, 'an unknown vendor is no product')
  t.same(parse(Buffer.from('300c02010165070a013204000400', 'hex')), { service: 'ldap', extraInfo: 'root DSE refused: insufficientAccessRights' })
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
})

test('Debian\'s OpenLDAP slapd', { skip: daemonUnavailable('/usr/sbin/slapd', 'slapd') }, async (t) => {
  const d = await startDaemon(slapd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'ldap', product: 'OpenLDAP' })
  t.equal(r.version, undefined, 'OpenLDAP publishes no version in its root DSE')
  t.same(r.cpe, ['cpe:2.3:a:openldap:openldap:*:*:*:*:*:*:*:*'])
})
