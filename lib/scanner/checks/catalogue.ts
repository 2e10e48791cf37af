// The catalogue of vulnscan's own exposure checks: problems the scan sees on the wire that no CVE names (a
// service that lets anyone in, a weak transport). Each check has a stable id that findings carry where CVE
// findings carry a CVE id, a severity with the reason for it, and one line of remediation. docs/checks.md
// lists every entry, and test/lib/scanner/checks/catalogue.test.ts holds the two together.
//
// Checks marked `reads` log in or read data to prove the exposure: they only ever read (a list of names, a
// server's statistics) and never write, and a template with `checks: false` runs none of them.

import { LEGACY_CHECKS } from './legacy-catalogue'

export type CheckSeverity = 'critical' | 'high' | 'medium' | 'low'

export interface CheckDefinition {
  /** Stable id, `VULNSCAN-<AREA>-<WHAT>`: the finding's `cveId`. */
  id: string
  title: string
  severity: CheckSeverity
  /** Why that severity. */
  severityReason: string
  remediation: string
  /** The protocol evidence that triggers it: what the check asks, and what answer means exposed. */
  evidence: string
  /** Services (as detection names them) whose ports the check runs on. */
  services: string[]
  /** It logs in or reads data to prove the exposure (read-only). */
  reads: boolean
  /** It tries a login with default credentials: runs only when the scan sets `options.intrusive` (tag `default-login`). */
  intrusive?: boolean
}

function check (def: CheckDefinition): Readonly<CheckDefinition> {
  return Object.freeze({ ...def, services: Object.freeze([...def.services]) as string[] })
}

/**
 * The transport checks run on every port where detection completed a TLS handshake first, whatever runs inside, and
 * on clear-text ports whose protocol upgrades with STARTTLS (SMTP, IMAP, POP3, FTP).
 */
const TLS_SERVICES = ['tls']

export const CHECKS: readonly Readonly<CheckDefinition>[] = Object.freeze([
  // Services that let anyone in.
  check({
    id: 'VULNSCAN-REDIS-NOAUTH',
    title: 'Redis answers commands without authentication',
    severity: 'critical',
    severityReason: 'Anyone who reaches the port reads and changes every key, and CONFIG SET lets them write files on the server (a known path to code execution).',
    remediation: 'Set `requirepass` (or ACL users with passwords) and bind Redis to the addresses that need it; keep `protected-mode yes`.',
    evidence: '`INFO server` sent without AUTH is answered with the server\'s data instead of `-NOAUTH`.',
    services: ['redis'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-MEMCACHED-NOAUTH',
    title: 'memcached answers without authentication',
    severity: 'high',
    severityReason: 'Anyone who reaches the port reads, changes and flushes the cached data; an exposed memcached is also abused for traffic amplification.',
    remediation: 'Bind memcached to the addresses that need it (`-l`), firewall its port, and turn on SASL (`-S`) where clients support it.',
    evidence: '`stats` is answered with the server\'s statistics without any login.',
    services: ['memcached'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-MONGODB-NOAUTH',
    title: 'MongoDB lists its databases without authentication',
    severity: 'critical',
    severityReason: 'Anyone who reaches the port reads and changes every database.',
    remediation: 'Turn on access control (`security.authorization: enabled`), create users, and bind mongod to the addresses that need it.',
    evidence: '`listDatabases` on `admin` without credentials is answered with `ok: 1` and the database names.',
    services: ['mongodb'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-ELASTICSEARCH-NOAUTH',
    title: 'Elasticsearch answers without authentication',
    severity: 'critical',
    severityReason: 'Anyone who reaches the port reads, changes and deletes every index.',
    remediation: 'Turn on Elasticsearch security (`xpack.security.enabled: true`) with passwords, and keep the HTTP port off untrusted networks.',
    evidence: '`GET /` without credentials is answered 200 with the cluster\'s name and version (a secured cluster answers 401).',
    services: ['http', 'https'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-COUCHDB-NOAUTH',
    title: 'CouchDB lists its databases without authentication',
    severity: 'critical',
    severityReason: 'Anyone who reaches the port reads the databases and, on an "admin party" install, administers the server.',
    remediation: 'Create an admin user, set `require_valid_user = true` in `[chttpd]`, and bind CouchDB to the addresses that need it.',
    evidence: '`GET /_all_dbs` without credentials is answered 200 with a JSON list of database names.',
    services: ['http', 'https'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-ETCD-NOAUTH',
    title: 'etcd keys are readable without authentication',
    severity: 'critical',
    severityReason: 'etcd holds cluster state and often secrets (Kubernetes keeps them there): anyone who reaches the port reads and changes them.',
    remediation: 'Turn on etcd authentication (`etcdctl auth enable`) and client certificate authentication (`--client-cert-auth`), and firewall the client port.',
    evidence: 'A range read of every key (`POST /v3/kv/range`, keys only, limit 1) without credentials is answered with a revision instead of a permission error.',
    services: ['http', 'https'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-DOCKER-API-NOAUTH',
    title: 'Docker Engine API is open on TCP',
    severity: 'critical',
    severityReason: 'Control of the Docker daemon is root on its host: anyone who reaches the port starts a privileged container.',
    remediation: 'Stop listening on TCP (`-H unix://` only), or require TLS client certificates (`--tlsverify`) and firewall the port.',
    evidence: '`GET /version` without credentials is answered with the engine\'s `ApiVersion`.',
    services: ['http', 'https'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-ZOOKEEPER-NOAUTH',
    title: 'ZooKeeper lets anyone open a session and read its znodes',
    severity: 'medium',
    severityReason: 'ZooKeeper has no authentication by default: anyone who reaches the port opens a session and reads the znodes that carry no ACL.',
    remediation: 'Firewall the client port, require authentication (`enforce.auth.enabled=true` with SASL or digest, 3.7 and later) and set ACLs on znodes; restricting four-letter words is no fix (`srvr` always stays allowed).',
    evidence: 'A session opened without credentials lists the root znode\'s children (`getChildren /`, names only) instead of an error.',
    services: ['zookeeper'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-POSTGRESQL-TRUST',
    title: 'PostgreSQL lets user postgres in without a password',
    severity: 'critical',
    severityReason: 'trust authentication lets anyone who reaches the port log in as the superuser: every database, and commands on the server (COPY … PROGRAM).',
    remediation: 'Replace `trust` with `scram-sha-256` in pg_hba.conf for network connections and give the postgres role a password.',
    evidence: 'A startup message for user postgres without a password is answered with AuthenticationOk.',
    services: ['postgresql'],
    reads: false
  }),
  check({
    id: 'VULNSCAN-MQTT-ANONYMOUS',
    title: 'MQTT broker accepts anonymous clients',
    severity: 'high',
    severityReason: 'Anyone who reaches the port subscribes to every topic and publishes commands to the devices listening on them.',
    remediation: 'Set `allow_anonymous false` with a password file or certificates, and ACLs per topic.',
    evidence: 'A CONNECT without user name or password is answered with CONNACK return code 0 (accepted).',
    services: ['mqtt', 'mqtts'],
    reads: false
  }),
  check({
    id: 'VULNSCAN-FTP-ANONYMOUS',
    title: 'FTP server allows anonymous login',
    severity: 'medium',
    severityReason: 'Anyone reads the files the anonymous account sees, and writes where uploads are allowed.',
    remediation: 'Turn anonymous login off (vsftpd `anonymous_enable=NO`, proftpd: remove the `<Anonymous>` block) unless the server is a public archive.',
    evidence: '`USER anonymous` then `PASS` with an e-mail-like password is answered with 230 (logged in); the check logs out at once.',
    services: ['ftp'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-RSYNC-OPEN-MODULES',
    title: 'rsync daemon lists its modules to anyone',
    severity: 'medium',
    severityReason: 'The module list tells anyone what is shared; modules without `auth users` can be downloaded whole.',
    remediation: 'Set `list = false` on modules, `auth users` and `secrets file` on each, and `hosts allow` to the clients that need them.',
    evidence: 'After the `@RSYNCD:` greeting, an empty module request is answered with a list of modules.',
    services: ['rsync'],
    reads: true
  }),
  check({
    id: 'VULNSCAN-LDAP-ANONYMOUS-READ',
    title: 'LDAP directory readable by anonymous bind',
    severity: 'medium',
    severityReason: 'Anyone reads the directory\'s entries (users, groups, often e-mail addresses and more) without credentials.',
    remediation: 'Deny anonymous reads of the naming contexts (OpenLDAP: `olcAccess ... by anonymous auth`, or `disallow bind_anon`).',
    evidence: 'A one-level search of a naming context from the root DSE, without binding, returns entries (reading the root DSE itself is normal).',
    services: ['ldap', 'ldaps'],
    reads: true
  }),
  // Transport.
  check({
    id: 'VULNSCAN-TLS-EXPIRED',
    title: 'TLS certificate has expired',
    severity: 'medium',
    severityReason: 'Clients that verify refuse the connection, and those that are made to accept it also accept an attacker\'s certificate.',
    remediation: 'Renew the certificate and automate renewal (ACME) with monitoring of the expiry date.',
    evidence: 'The certificate the server presents has a notAfter date in the past.',
    services: TLS_SERVICES,
    reads: false
  }),
  check({
    id: 'VULNSCAN-TLS-NOT-YET-VALID',
    title: 'TLS certificate is not valid yet',
    severity: 'medium',
    severityReason: 'Clients that verify refuse the connection until the notBefore date (often a wrong clock on the issuing side).',
    remediation: 'Check the clocks of the server and of the issuing CA, and reissue the certificate with a correct validity period.',
    evidence: 'The certificate the server presents has a notBefore date in the future.',
    services: TLS_SERVICES,
    reads: false
  }),
  check({
    id: 'VULNSCAN-TLS-SELF-SIGNED',
    title: 'TLS certificate is self-signed',
    severity: 'low',
    severityReason: 'No third party vouches for the server\'s identity: clients either refuse it or are configured to accept any certificate, which lets an attacker in the middle.',
    remediation: 'Use a certificate from a public or internal CA that clients trust.',
    evidence: 'The certificate\'s issuer is its own subject and its signature verifies with its own public key.',
    services: TLS_SERVICES,
    reads: false
  }),
  check({
    id: 'VULNSCAN-TLS-WEAK-KEY',
    title: 'TLS certificate has a weak RSA key',
    severity: 'medium',
    severityReason: 'RSA keys below 2048 bits are below every current guideline (NIST SP 800-131A); 1024-bit keys are within reach of well-funded attackers.',
    remediation: 'Reissue the certificate with an RSA key of 2048 bits or more, or an ECDSA key.',
    evidence: 'The certificate\'s public key is RSA with a modulus shorter than 2048 bits.',
    services: TLS_SERVICES,
    reads: false
  }),
  check({
    id: 'VULNSCAN-TLS-HOSTNAME-MISMATCH',
    title: 'TLS certificate does not name the host scanned',
    severity: 'medium',
    severityReason: 'Clients that verify refuse the connection; clients made to accept it cannot tell the server from an impostor.',
    remediation: 'Issue the certificate with the name clients use in its subjectAltName.',
    evidence: 'The scan was given a DNS name, and the certificate presented for it (with that name as SNI) names neither it nor a wildcard covering it.',
    services: TLS_SERVICES,
    reads: false
  }),
  check({
    id: 'VULNSCAN-TLS-LEGACY-PROTOCOL',
    title: 'TLS 1.0 or 1.1 accepted',
    severity: 'medium',
    severityReason: 'TLS 1.0 and 1.1 are deprecated (RFC 8996): their ciphers and handshake lack the protections of TLS 1.2 and 1.3 against known attacks (BEAST, downgrade).',
    remediation: 'Accept TLS 1.2 and 1.3 only (e.g. OpenSSL `MinProtocol = TLSv1.2`, nginx `ssl_protocols TLSv1.2 TLSv1.3`).',
    evidence: 'A handshake offering only TLS 1.0 and 1.1 (every cipher allowed) completes.',
    services: TLS_SERVICES,
    reads: false
  }),
  check({
    id: 'VULNSCAN-SSH-TERRAPIN',
    title: 'SSH server open to the Terrapin attack (CVE-2023-48795)',
    severity: 'medium',
    severityReason: 'An attacker in the middle can drop messages at the start of the secure channel and downgrade its security (CVE-2023-48795, CVSS 5.9); it needs a position in the network path.',
    remediation: 'Upgrade the SSH server to a release with strict key exchange (OpenSSH 9.6, Dropbear 2024.84, or the distribution\'s fix), or disable chacha20-poly1305@openssh.com and the -etm@openssh.com MACs.',
    evidence: 'The server\'s KEXINIT offers chacha20-poly1305@openssh.com, or a CBC cipher with an -etm@openssh.com MAC, and lacks kex-strict-s-v00@openssh.com.',
    services: ['ssh'],
    reads: false
  }),
  check({
    id: 'VULNSCAN-SMTP-PLAINTEXT-AUTH',
    title: 'SMTP offers password authentication before STARTTLS',
    severity: 'medium',
    severityReason: 'Clients may send passwords in clear text, readable by anyone on the network path.',
    remediation: 'Offer AUTH only after STARTTLS (Postfix `smtpd_tls_auth_only = yes`; exim: `server_advertise_condition = ${if def:tls_in_cipher}`).',
    evidence: 'The EHLO answer on the plain connection lists AUTH with PLAIN or LOGIN.',
    services: ['smtp'],
    reads: false
  }),
  check({
    id: 'VULNSCAN-IMAP-PLAINTEXT-AUTH',
    title: 'IMAP offers password login before STARTTLS',
    severity: 'medium',
    severityReason: 'Clients may send passwords in clear text, readable by anyone on the network path.',
    remediation: 'Refuse plain-text logins without TLS (Dovecot `ssl = required`, or `auth_allow_cleartext = no` / `disable_plaintext_auth = yes`).',
    evidence: 'The CAPABILITY answer on the plain connection lists AUTH=PLAIN or AUTH=LOGIN and not LOGINDISABLED.',
    services: ['imap'],
    reads: false
  }),
  check({
    id: 'VULNSCAN-POP3-PLAINTEXT-AUTH',
    title: 'POP3 offers password login before STARTTLS',
    severity: 'medium',
    severityReason: 'Clients may send passwords in clear text, readable by anyone on the network path.',
    remediation: 'Refuse plain-text logins without TLS (Dovecot `ssl = required`, or `auth_allow_cleartext = no` / `disable_plaintext_auth = yes`).',
    evidence: 'The CAPA answer on the plain connection lists USER, or SASL with PLAIN or LOGIN.',
    services: ['pop3'],
    reads: false
  }),
  ...LEGACY_CHECKS.map(check)
])

const BY_ID = new Map(CHECKS.map((c) => [c.id, c]))

/** The catalogue entry of a check id; throws for an id the catalogue lacks (a programming error). */
export function checkById (id: string): Readonly<CheckDefinition> {
  const c = BY_ID.get(id)
  if (c === undefined) throw new Error(`no exposure check has the id ${id}`)
  return c
}
