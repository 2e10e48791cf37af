// Certificates a test makes with openssl in a daemon's private directory: a throwaway CA and a server key and
// certificate (srv.key, srv.pem) signed by it or by itself, with the validity dates, key size and name asked
// for. Shared by the TLS checks' tests (openssl s_server, and mail servers reached through STARTTLS).

export const OPENSSL = '/usr/bin/openssl'

type Command = [string, string[]]

/** `openssl ca` configuration for the directory: serial and index in place, extensions copied from the request. */
export const CA_CONF = [
  '[ ca ]', 'default_ca = test', '[ test ]', 'dir = .', 'database = index.txt', 'new_certs_dir = .', 'serial = serial',
  'default_md = sha256', 'policy = any', 'copy_extensions = copy', 'unique_subject = no', '[ any ]', 'commonName = supplied', ''
].join('\n')

/** The files `openssl ca` needs beside its configuration. */
export const caFiles = (): Record<string, string> => ({ 'ca.cnf': CA_CONF, 'index.txt': '', serial: '01\n' })

export const ca: Command[] = [
  [OPENSSL, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '5', '-subj', '/CN=vulnscan test CA']]
]

/** A key of `bits` and a request for `cn`, named in subjectAltName too. */
export const csr = (bits: number, cn: string): Command[] => [
  [OPENSSL, ['req', '-newkey', `rsa:${bits}`, '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', `/CN=${cn}`, '-addext', `subjectAltName=DNS:${cn}`]]
]

/** Sign the request, valid from `from` to `to` (YYYYMMDDHHMMSSZ), by the CA or by its own key. */
export const sign = (from: string, to: string, self = false): Command[] => [
  [OPENSSL, ['ca', '-batch', '-config', 'ca.cnf', ...(self ? ['-selfsign', '-keyfile', 'srv.key'] : ['-cert', 'ca.pem', '-keyfile', 'ca.key']),
    '-in', 'srv.csr', '-out', 'srv.pem', '-startdate', from, '-enddate', to, '-notext']]
]

const year = new Date().getUTCFullYear()
/** Valid from last January to two years on. */
export const valid = [`${year - 1}0101000000Z`, `${year + 2}0101000000Z`] as const
/** Expired last year. */
export const expired = [`${year - 3}0101000000Z`, `${year - 2}0101000000Z`] as const
/** Valid only from next year. */
export const notYet = [`${year + 1}0101000000Z`, `${year + 2}0101000000Z`] as const
