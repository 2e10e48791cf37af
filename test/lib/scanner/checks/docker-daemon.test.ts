// Docker Engine from Debian's docker.io, started by the test on a loopback address of its own, TCP only (no unix
// socket, no networking of its own; see dockerd() in bench/support/daemon-specs.ts). Detection must report the
// engine's version as `docker version` shows it, and the API check must find the engine open on plain HTTP and on TLS
// without client certificates, and closed with `--tlsverify`.

import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { dockerd, type DockerdTls } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon, type RunningDaemon } from '../../../support/debian-daemon'
import { OPENSSL, ca, caFiles, sign, valid } from '../../../support/test-certificates'

const run = promisify(execFile)
const DOCKERD = '/usr/sbin/dockerd'
// Debian's client from the same package, whatever other `docker` is on the PATH.
const DOCKER = '/usr/bin/docker'

/**
 * A CA, a server certificate for the daemon's address, and a client certificate (clientAuth) from the same CA, all
 * made by openssl in the daemon's directory.
 */
function certificates (verify: boolean): DockerdTls {
  return {
    files: caFiles(),
    prepare: ({ host }) => [
      ...ca,
      [OPENSSL, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=docker.vulnscan.test',
        '-addext', `subjectAltName=IP:${host}`]],
      ...sign(...valid),
      [OPENSSL, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=vulnscan client',
        '-addext', 'extendedKeyUsage=clientAuth']],
      [OPENSSL, ['ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', 'client.csr', '-out', 'client.pem',
        '-startdate', valid[0], '-enddate', valid[1], '-notext']]
    ],
    ca: 'ca.pem',
    cert: 'srv.pem',
    key: 'srv.key',
    verify,
    clientCert: 'client.pem',
    clientKey: 'client.key'
  }
}

/** The server version `docker version` reports, asked with the test's client certificate where the daemon wants one. */
async function serverVersion (d: RunningDaemon, tls: 'none' | 'server' | 'verify'): Promise<string> {
  const opts = tls === 'none'
    ? []
    : tls === 'server'
      ? ['--tls']
      : ['--tlsverify', '--tlscacert', path.join(d.dir, 'ca.pem'), '--tlscert', path.join(d.dir, 'client.pem'), '--tlskey', path.join(d.dir, 'client.key')]
  const { stdout } = await run(DOCKER, ['-H', `tcp://${d.host}:${d.port}`, ...opts, 'version', '--format', '{{.Server.Version}}'],
    { env: { ...process.env, DOCKER_CONFIG: d.dir }, timeout: 30_000 })
  return stdout.trim()
}

/** The release part of an engine version: Debian's build `20.10.24+dfsg1` is release 20.10.24. */
const release = (v: string): string => /^\d+(?:\.\d+)+/.exec(v)?.[0] ?? v

const skip = daemonUnavailable(DOCKERD, 'docker.io') || daemonUnavailable(DOCKER, 'docker.io')

test('Docker Engine API on plain TCP: detected with the engine\'s version, and open to anyone', { skip }, async (t) => {
  const d = await startDaemon(dockerd())
  t.teardown(d.stop)
  const version = await serverVersion(d, 'none')
  t.match(version, /^\d+\.\d+\.\d+/, `docker version: ${version}`)
  const service = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Docker', version: release(version) })
  if (version !== release(version)) t.match(service.extraInfo, `build ${version}`, 'the distribution\'s build is kept beside the release')
  t.match(service.extraInfo, /API 1\.\d+/)
  t.ok(service.cpe.includes(`cpe:2.3:a:docker:docker:${release(version)}:*:*:*:*:*:*:*`), service.cpe.join(' '))
  const r = await runChecks({ host: d.host, port: d.port, service, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-DOCKER-API-NOAUTH'])
  t.match(r.exposures[0].evidence, `GET /version answered 200 without credentials: Docker ${version} API 1.`)
})

test('Docker Engine API on TLS without client certificates (--tls): still open to anyone', { skip }, async (t) => {
  const d = await startDaemon(dockerd(certificates(false)))
  t.teardown(d.stop)
  const version = await serverVersion(d, 'server')
  const service = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.ok(service.tls, 'detection completed a TLS handshake')
  t.match(service, { service: 'https', product: 'Docker', version: release(version) })
  const r = await runChecks({ host: d.host, port: d.port, service, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-DOCKER-API-NOAUTH'], 'the certificate (from the test CA, valid, 2048 bits) is no finding')
})

test('Docker Engine API with --tlsverify: no finding, while a client with a certificate from the CA gets in', { skip }, async (t) => {
  const d = await startDaemon(dockerd(certificates(true)))
  t.teardown(d.stop)
  const version = await serverVersion(d, 'verify')
  t.match(version, /^\d+\.\d+\.\d+/, 'the API answers a client with a certificate')
  const service = await detectService({ host: d.host, port: d.port, level: 'light' })
  // The handshake completes as far as the server's certificate; the engine then refuses a client without one.
  t.match(service, { service: 'tls', tls: { issuer: 'CN=vulnscan test CA' } })
  t.equal(service.product, undefined, 'without a client certificate the engine shows nothing of itself')
  const r = await runChecks({ host: d.host, port: d.port, service, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
