// Certificate and protocol checks against OpenSSL's own TLS server (`openssl s_server`) on a loopback address of
// its own, with certificates the test makes with openssl: one server that gets everything right, and servers
// that get one or several things wrong.

import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'
import { OPENSSL, ca, caFiles, csr, expired, notYet, sign, valid } from '../../../support/test-certificates'

interface Case {
  name: string
  /** openssl commands that leave the server's certificate in srv.pem and its key in srv.key. */
  make: Array<[string, string[]]>
  /** s_server options beyond the certificate. */
  options: string[]
  /** The DNS name the scan was given. */
  hostname: string
  expect: string[]
}

// Modern defaults: TLS 1.2 and 1.3 only, as Debian's OpenSSL configuration has it.
const modern = ['-min_protocol', 'TLSv1.2']
// What old servers allow: TLS 1.0 on, every cipher and key size.
const legacy = ['-min_protocol', 'TLSv1', '-cipher', 'DEFAULT@SECLEVEL=0']

const CASES: Case[] = [
  {
    name: 'a CA-issued 2048-bit certificate for the name scanned, TLS 1.2 and later',
    make: [...ca, ...csr(2048, 'good.vulnscan.test'), ...sign(...valid)],
    options: modern,
    hostname: 'good.vulnscan.test',
    expect: []
  },
  {
    name: 'an expired, self-signed 1024-bit certificate for another name, TLS 1.0 accepted',
    make: [...csr(1024, 'other.vulnscan.test'), ...sign(...expired, true)],
    options: legacy,
    hostname: 'www.vulnscan.test',
    expect: ['VULNSCAN-TLS-EXPIRED', 'VULNSCAN-TLS-HOSTNAME-MISMATCH', 'VULNSCAN-TLS-LEGACY-PROTOCOL', 'VULNSCAN-TLS-SELF-SIGNED', 'VULNSCAN-TLS-WEAK-KEY']
  },
  {
    name: 'a CA-issued certificate not valid before next year',
    make: [...ca, ...csr(2048, 'late.vulnscan.test'), ...sign(...notYet)],
    options: modern,
    hostname: 'late.vulnscan.test',
    expect: ['VULNSCAN-TLS-NOT-YET-VALID']
  }
]

for (const c of CASES) {
  test(`TLS checks: ${c.name}`, { skip: daemonUnavailable(OPENSSL, 'openssl') }, async (t) => {
    const d = await startDaemon({
      pkg: 'openssl',
      binary: OPENSSL,
      files: caFiles,
      prepare: () => c.make,
      args: ({ host, port }) => ['s_server', '-accept', `${host}:${port}`, '-cert', 'srv.pem', '-key', 'srv.key', '-www', '-quiet', ...c.options]
    })
    t.teardown(d.stop)
    const service = await detectService({ host: d.host, port: d.port, level: 'light' })
    t.ok(service.tls, 'detection completed a TLS handshake')
    const r = await runChecks({ host: d.host, port: d.port, service, hostnames: [c.hostname] })
    t.ok(r.concluded)
    t.same(r.exposures.map((e) => e.check).sort(), c.expect)
    for (const e of r.exposures) t.ok(e.evidence.length > 0, `${e.check} says what it saw: ${e.evidence}`)
  })
}

test('TLS checks leave a plain port without STARTTLS alone', async (t) => {
  const r = await runChecks({ host: '127.0.0.2', port: 1, service: { service: 'http', cpe: [] }, hostnames: ['x.vulnscan.test'] })
  t.same(r, { exposures: [], concluded: true }, 'no check applies to plain HTTP without a product: nothing is contacted')
})
