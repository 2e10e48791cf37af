import { execFile } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import { promisify } from 'node:util'
import { test } from 'tap'
import { certificateInfo, isSelfSigned, openTls } from '../../../lib/scanner/tls'
import { loopbackAddress } from '../../support/loopback'

const run = promisify(execFile)

/** A CA and a leaf it signed, made with openssl for this test run only. */
async function caAndLeaf (): Promise<{ key: string, cert: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-tls-'))
  const f = (n: string): string => path.join(dir, n)
  try {
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'),
      '-days', '10', '-subj', '/CN=Vulnscan Test CA/O=Vulnscan'])
    await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('leaf.key'), '-out', f('leaf.csr'), '-subj', '/CN=localhost'])
    await run('openssl', ['x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
      '-out', f('leaf.pem'), '-days', '5'])
    return { key: fs.readFileSync(f('leaf.key'), 'utf8'), cert: fs.readFileSync(f('leaf.pem'), 'utf8') }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('CA-signed certificate: not self-signed, issuer and validity reported, SNI sent for a name', async (t) => {
  const { key, cert } = await caAndLeaf()
  // The client can finish its handshake before the server callback runs (TLS 1.3): wait for it.
  const sni: Array<string | false | null> = []
  const serverSaw = async (n: number): Promise<string | false | null> => {
    for (let i = 0; i < 100 && sni.length < n; i++) await new Promise((r) => setTimeout(r, 20))
    return sni[n - 1]
  }
  const server = tls.createServer({ key, cert }, (s) => { sni.push(s.servername); s.on('error', () => {}); s.end() })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const session = await openTls({ host: 'localhost', port, timeoutMs: 3000 })
  t.ok(session)
  t.equal(await serverSaw(1), 'localhost')
  session!.socket.destroy()
  const info = session!.info
  t.equal(info.selfSigned, false)
  t.equal(info.subject, 'CN=localhost')
  t.equal(info.issuer, 'CN=Vulnscan Test CA, O=Vulnscan')
  t.match(info.protocol, /^TLSv1\.[23]$/)
  const days = (Date.parse(info.notAfter!) - Date.parse(info.notBefore!)) / 86400e3
  t.ok(days > 4.9 && days < 5.1, `validity ${days} days`)
  const byIp = await openTls({ host: '127.0.0.1', port, timeoutMs: 3000 })
  t.equal(await serverSaw(2), false, 'no SNI for an IP address')
  byIp!.socket.destroy()
})

test('plain-text and silent peers: null, within the timeout', async (t) => {
  const plain = net.createServer((s) => { s.on('error', () => {}); s.end('HTTP/1.1 400 Bad Request\r\n\r\n') })
  const silent = net.createServer((s) => { s.on('error', () => {}) })
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()))
  t.teardown(() => { plain.close(); silent.close() })
  t.equal(await openTls({ host: '127.0.0.1', port: (plain.address() as net.AddressInfo).port, timeoutMs: 3000 }), null)
  const t0 = Date.now()
  t.equal(await openTls({ host: '127.0.0.1', port: (silent.address() as net.AddressInfo).port, timeoutMs: 300 }), null)
  t.ok(Date.now() - t0 < 1500)
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 100)
  const t1 = Date.now()
  t.equal(await openTls({ host: '127.0.0.1', port: (silent.address() as net.AddressInfo).port, timeoutMs: 5000, signal: ac.signal }), null)
  t.ok(Date.now() - t1 < 1000, 'abort honoured')
})

/** Certificates made with openssl for this test only: PEM text by name. */
async function certificates (): Promise<Record<string, string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-selfsigned-'))
  const f = (n: string): string => path.join(dir, n)
  try {
    // A server certificate as `make-ssl-cert` and many appliances make it: self-signed, but its key
    // usage does not allow certificate signing (the case checkIssued() got wrong).
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('leaf.key'), '-out', f('leaf.pem'),
      '-days', '10', '-subj', '/CN=appliance.test', '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment',
      '-addext', 'basicConstraints=critical,CA:FALSE'])
    // A self-signed CA (key usage keyCertSign) and, under the very same name, a certificate it signed
    // for another key: subject equals issuer, yet not self-signed.
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('ca.key'),
      '-out', f('ca.pem'), '-days', '10', '-subj', '/CN=Same Name'])
    await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('twin.key'), '-out', f('twin.csr'), '-subj', '/CN=Same Name'])
    await run('openssl', ['x509', '-req', '-in', f('twin.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
      '-out', f('twin.pem'), '-days', '5'])
    const out: Record<string, string> = {}
    for (const n of ['leaf.key', 'leaf.pem', 'ca.pem', 'twin.pem']) out[n] = fs.readFileSync(f(n), 'utf8')
    return out
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('self-signed detection: subject is issuer and the signature verifies with the certificate\'s own key', async (t) => {
  const pem = await certificates()
  const leaf = new X509Certificate(pem['leaf.pem'])
  t.equal(leaf.checkIssued(leaf), false, 'checkIssued() refuses it (no keyCertSign), which is why it is not used')
  t.equal(isSelfSigned(leaf), true)
  t.equal(isSelfSigned(new X509Certificate(pem['ca.pem'])), true, 'a self-signed CA')
  const twin = new X509Certificate(pem['twin.pem'])
  t.equal(twin.subject, twin.issuer)
  t.equal(isSelfSigned(twin), false, 'same name, signed by another key')
  t.equal(certificateInfo(leaf, 'TLSv1.3').selfSigned, true)

  // And end to end, from a TLS server on a loopback address of its own.
  const host = loopbackAddress()
  const server = tls.createServer({ key: pem['leaf.key'], cert: pem['leaf.pem'] }, (s) => { s.on('error', () => {}); s.end() })
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()))
  t.teardown(() => server.close())
  const session = await openTls({ host, port: (server.address() as net.AddressInfo).port, timeoutMs: 3000 })
  t.ok(session)
  session!.socket.destroy()
  t.equal(session!.info.selfSigned, true)
  t.equal(session!.info.subject, 'CN=appliance.test')
})
