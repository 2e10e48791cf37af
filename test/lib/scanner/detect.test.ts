import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import { promisify } from 'node:util'
import { test } from 'tap'
import { detectService } from '../../../lib/scanner/detect'
import { encodeBson } from '../../../lib/scanner/probes/mongodb'

const run = promisify(execFile)

/** A loopback address of our own so fixed ports (8080, 8443) do not collide with other tests. */
const HOST = `127.${80 + crypto.randomInt(40)}.${crypto.randomInt(1, 250)}.${crypto.randomInt(1, 250)}`

interface Started { port: number, server: net.Server, sockets: Set<net.Socket> }

/** Start a TCP server on HOST; keeps its sockets so the test can check we closed ours. */
async function serve (t: tap.Test, onConn: (s: net.Socket) => void, port = 0): Promise<Started> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    onConn(s)
    // Keep reading so the server sees our FIN, as a real daemon does.
    s.resume()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, HOST, () => resolve())
  })
  t.teardown(() => {
    for (const s of sockets) s.destroy()
    server.close()
  })
  return { port: (server.address() as net.AddressInfo).port, server, sockets }
}

/** Waits until the server saw all our connections close (detectService must destroy them). */
async function allClosed (st: Started, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (st.sockets.size === 0) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return st.sockets.size === 0
}

let cert: { key: string, cert: string } | undefined
async function selfSigned (): Promise<{ key: string, cert: string }> {
  if (cert) return cert
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-detect-'))
  try {
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'k.pem'),
      '-out', path.join(dir, 'c.pem'), '-days', '30', '-subj', '/CN=scan-target.test/O=Vulnscan Test'])
    cert = { key: fs.readFileSync(path.join(dir, 'k.pem'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'c.pem'), 'utf8') }
    return cert
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function httpReply (server: string, body = '<html><title>Hello</title></html>'): string {
  return `HTTP/1.1 200 OK\r\nServer: ${server}\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
}

/** Answer an HTTP request once its head has arrived, as a real server does. */
function httpServer (server: string) {
  return (s: net.Socket): void => {
    let buf = ''
    s.on('data', (d) => {
      buf += d.toString('latin1')
      if (buf.includes('\r\n\r\n')) s.end(buf.startsWith('GET ') ? httpReply(server) : 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')
    })
  }
}

test('slow SSH banner on an unknown port', async (t) => {
  const st = await serve(t, (s) => {
    const timer = setTimeout(() => s.write('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n'), 700)
    s.on('close', () => clearTimeout(timer))
  })
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.equal(r.service, 'ssh')
  t.equal(r.product, 'OpenSSH')
  t.equal(r.version, '9.2p1')
  t.equal(r.distro, 'deb12u3')
  t.same(r.cpe, ['cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*', 'cpe:2.3:a:openssh:openssh:9.2:p1:*:*:*:*:*:*'])
  t.ok(await allClosed(st), 'connection closed')
})

test('silent port: unknown within the budget, every connection closed', async (t) => {
  const st = await serve(t, () => {})
  const t0 = Date.now()
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  const took = Date.now() - t0
  t.same(r, { service: 'unknown', cpe: [] })
  t.ok(took < 8500, `light detection of a silent port took ${took} ms`)
  t.ok(await allClosed(st), 'connections closed')
  const t1 = Date.now()
  await detectService({ host: HOST, port: st.port, level: 'full', timeoutMs: 1200 })
  t.ok(Date.now() - t1 < 2500, 'timeoutMs bounds the whole detection')
  t.ok(await allClosed(st), 'connections closed after the deadline too')
})

test('abort stops detection quickly', async (t) => {
  const st = await serve(t, () => {})
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 200)
  const t0 = Date.now()
  const r = await detectService({ host: HOST, port: st.port, level: 'full', signal: ac.signal })
  t.equal(r.service, 'unknown')
  t.ok(Date.now() - t0 < 1000, `returned ${Date.now() - t0} ms after start`)
  t.ok(await allClosed(st))
  const pre = new AbortController()
  pre.abort()
  t.same(await detectService({ host: HOST, port: st.port, level: 'light', signal: pre.signal }), { service: 'unknown', cpe: [] })
})

test('garbage reply: unknown, banner kept, escaped and bounded', async (t) => {
  const st = await serve(t, (s) => s.write(Buffer.concat([Buffer.from('\x00\x01garbage\xff', 'latin1'), crypto.randomBytes(5000)])))
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.equal(r.service, 'unknown')
  t.match(r.banner, /^\\x00\\x01garbage\\xff/)
  t.ok(r.banner!.length <= 512)
  t.ok(await allClosed(st))
})

test('a peer that floods is read only up to the cap', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 0x41)
  let sent = 0
  const st = await serve(t, (s) => {
    const pump = (): void => {
      while (!s.destroyed && sent < 50 * 1024 * 1024 && s.write(chunk)) sent += chunk.length
      if (!s.destroyed && sent < 50 * 1024 * 1024) s.once('drain', pump)
    }
    pump()
  })
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.equal(r.service, 'unknown')
  t.ok(r.banner!.length <= 512)
  t.ok(sent < 50 * 1024 * 1024, `stopped reading (peer wrote ${sent} bytes before we closed)`)
  t.ok(await allClosed(st))
})

test('refused port: unknown, fast', async (t) => {
  const st = await serve(t, () => {})
  const port = st.port
  await new Promise<void>((resolve) => st.server.close(() => resolve()))
  const t0 = Date.now()
  t.same(await detectService({ host: HOST, port, level: 'full' }), { service: 'unknown', cpe: [] })
  t.ok(Date.now() - t0 < 1000)
})

test('HTTP with a Server header on an unknown port (fallback) and on 8080 (own probe)', async (t) => {
  const st = await serve(t, httpServer('nginx/1.22.1'))
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.equal(r.service, 'http')
  t.equal(r.product, 'nginx')
  t.equal(r.version, '1.22.1')
  t.same(r.cpe, ['cpe:2.3:a:f5:nginx:1.22.1:*:*:*:*:*:*:*', 'cpe:2.3:a:nginx:nginx:1.22.1:*:*:*:*:*:*:*'])
  t.ok(await allClosed(st))
  const st8080 = await serve(t, httpServer('Apache/2.4.57 (Debian)'), 8080)
  const t0 = Date.now()
  const r2 = await detectService({ host: HOST, port: st8080.port, level: 'light' })
  t.match(r2, { service: 'http', product: 'Apache httpd', version: '2.4.57', distro: 'Debian' })
  t.ok(Date.now() - t0 < 1000, 'no banner wait on an HTTP port')
})

test('TLS with a self-signed certificate: unwrapped, certificate reported, HTTP inside', async (t) => {
  const { key, cert } = await selfSigned()
  const sockets = new Set<tls.TLSSocket>()
  const server = tls.createServer({ key, cert }, (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    httpServer('nginx/1.25.3')(s)
  })
  server.on('tlsClientError', () => {})
  await new Promise<void>((resolve) => server.listen(0, HOST, () => resolve()))
  t.teardown(() => { for (const s of sockets) s.destroy(); server.close() })
  const port = (server.address() as net.AddressInfo).port
  const r = await detectService({ host: HOST, port, level: 'light' })
  t.equal(r.service, 'https')
  t.equal(r.product, 'nginx')
  t.equal(r.version, '1.25.3')
  t.equal(r.tls?.selfSigned, true)
  t.match(r.tls?.subject, /CN=scan-target\.test/)
  t.match(r.tls?.issuer, /O=Vulnscan Test/)
  t.match(r.tls?.protocol, /^TLSv1\.[23]$/)
  const notAfter = Date.parse(r.tls!.notAfter!)
  t.ok(notAfter > Date.now() + 29 * 86400e3 && notAfter < Date.now() + 31 * 86400e3, 'expiry read from the certificate')
})

test('TLS on 8443 (handshake first) and an IMAP banner inside TLS', async (t) => {
  const { key, cert } = await selfSigned()
  const servers: tls.Server[] = []
  t.teardown(() => { for (const s of servers) s.close() })
  const start = async (port: number, onConn: (s: tls.TLSSocket) => void): Promise<number> => {
    const server = tls.createServer({ key, cert }, (s) => { s.on('error', () => {}); onConn(s) })
    server.on('tlsClientError', () => {})
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(port, HOST, () => resolve()))
    return (server.address() as net.AddressInfo).port
  }
  const https = await start(8443, (s) => httpServer('Microsoft-IIS/10.0')(s))
  const r = await detectService({ host: HOST, port: https, level: 'light' })
  t.match(r, { service: 'https', product: 'Microsoft IIS httpd', version: '10.0' })
  t.same(r.cpe, ['cpe:2.3:a:microsoft:internet_information_services:10.0:*:*:*:*:*:*:*'])
  const imaps = await start(0, (s) => s.write('* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE AUTH=PLAIN] Dovecot (Debian) ready.\r\n'))
  const r2 = await detectService({ host: HOST, port: imaps, level: 'full' })
  t.match(r2, { service: 'imap', product: 'Dovecot', distro: 'Debian' })
  t.equal(r2.tls?.selfSigned, true)
})

test('STARTTLS on SMTP (full level): certificate read after the upgrade', async (t) => {
  const { key, cert } = await selfSigned()
  const st = await serve(t, (s) => {
    s.write('220 mx.scan-target.test ESMTP Postfix (Debian/GNU)\r\n')
    let buf = ''
    const onData = (d: Buffer): void => {
      buf += d.toString('latin1')
      let nl: number
      while ((nl = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 2)
        if (/^EHLO/i.test(line)) s.write('250-mx.scan-target.test\r\n250-PIPELINING\r\n250 STARTTLS\r\n')
        else if (/^QUIT/i.test(line)) s.end('221 2.0.0 Bye\r\n')
        else if (/^STARTTLS/i.test(line)) {
          s.removeListener('data', onData)
          s.write('220 2.0.0 Ready to start TLS\r\n')
          const secure = new tls.TLSSocket(s, { isServer: true, key, cert })
          secure.on('error', () => {})
          secure.resume()
          return
        }
      }
    }
    s.on('data', onData)
  })
  const full = await detectService({ host: HOST, port: st.port, level: 'full' })
  t.match(full, { service: 'smtp', product: 'Postfix', distro: 'Debian' })
  t.match(full.extraInfo, /STARTTLS/)
  t.equal(full.tls?.selfSigned, true)
  t.match(full.tls?.subject, /CN=scan-target\.test/)
  const light = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.match(light, { service: 'smtp', product: 'Postfix' })
  t.equal(light.tls, undefined, 'light detection does not upgrade')
  t.ok(await allClosed(st))
})

test('a bare 220 greeting on an unknown port is settled with EHLO', async (t) => {
  const lineServer = (answer: string) => (s: net.Socket): void => {
    s.write('220 Service ready\r\n')
    s.on('data', (d) => {
      if (/^EHLO/.test(d.toString())) s.write(answer)
      if (/^QUIT/.test(d.toString())) s.end('221 Bye\r\n')
    })
  }
  const ftpSt = await serve(t, lineServer("500 'EHLO vulnscan.invalid': command not understood\r\n"))
  t.match(await detectService({ host: HOST, port: ftpSt.port, level: 'light' }), { service: 'ftp' })
  const smtpSt = await serve(t, lineServer('250-scan-target.test\r\n250 PIPELINING\r\n'))
  t.match(await detectService({ host: HOST, port: smtpSt.port, level: 'light' }), { service: 'smtp' })
})

test('a server-first service on an unexpected port and Redis on its own port', async (t) => {
  const st = await serve(t, (s) => s.write('220 (vsFTPd 3.0.3)\r\n'))
  t.match(await detectService({ host: HOST, port: st.port, level: 'light' }), { service: 'ftp', product: 'vsftpd', version: '3.0.3' })
  const redisLike = await serve(t, (s) => s.on('data', () => s.write('-NOAUTH Authentication required.\r\n')), 6379)
  t.match(await detectService({ host: HOST, port: redisLike.port, level: 'light' }), { service: 'redis', product: 'Redis', extraInfo: 'authentication required' })
  t.ok(await allClosed(redisLike))
})

test('PostgreSQL that wants a password: product, and a version range from protocol negotiation', async (t) => {
  const negotiation = fs.readFileSync(path.join(__dirname, '../../fixtures/banners/postgresql-protocol-negotiation.bin'))
  const st = await serve(t, (s) => s.once('data', (d: Buffer) => {
    // A 3.0 startup gets an MD5 challenge; any other protocol the captured refusal.
    if (d.readInt32BE(4) === 196608) s.write(Buffer.from([0x52, 0, 0, 0, 12, 0, 0, 0, 5, 9, 8, 7, 6]))
    else s.end(negotiation)
  }), 5432)
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.same(r, {
    service: 'postgresql', product: 'PostgreSQL', extraInfo: 'version 14 or later; authentication: MD5 password',
    cpe: ['cpe:2.3:a:postgresql:postgresql:*:*:*:*:*:*:*:*'], banner: 'R\\x00\\x00\\x00\\x0c\\x00\\x00\\x00\\x05\\x09\\x08\\x07\\x06'
  })
  t.ok(await allClosed(st))
})

test('full level finds client-first services on unexpected ports; light does not try them', async (t) => {
  const st = await serve(t, (s) => s.on('data', (d: Buffer) => {
    s.write(d.toString('latin1') === 'version\r\n' ? 'VERSION 1.6.18\r\n' : 'ERROR\r\n')
  }))
  const full = await detectService({ host: HOST, port: st.port, level: 'full' })
  t.match(full, { service: 'memcached', product: 'memcached', version: '1.6.18' })
  t.same(full.cpe, ['cpe:2.3:a:memcached:memcached:1.6.18:*:*:*:*:*:*:*'])
  const light = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.equal(light.service, 'unknown')
  t.equal(light.banner, 'ERROR\\r\\n', 'the reply it did get is kept')
  t.ok(await allClosed(st))
})

test('full level: once a probe names the protocol, the fallbacks still out get a grace, not their whole wait', async (t) => {
  // HTTP with no Server header (a bare name). The probes that come before HTTP (IRC's registration,
  // the TLS ClientHello) are refused at once, so nothing still out can take HTTP's place on a tie;
  // other requests get silence (as ZooKeeper's `srvr` does from an XMPP server) or, on the second
  // server, an end, except memcached's `version`, answered late but within the grace: a later probe
  // that says more.
  const server = (others: 'silent' | 'memcached') => (s: net.Socket): void => {
    let buf = ''
    s.on('data', (d: Buffer) => {
      if (!buf && (d[0] === 0x16 || d.toString('latin1').startsWith('NICK '))) return s.destroy()
      buf += d.toString('latin1')
      if (buf.startsWith('GET ')) {
        if (buf.includes('\r\n\r\n')) s.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
      } else if (others === 'memcached') {
        if (buf === 'version\r\n') setTimeout(() => s.end('VERSION 1.6.18\r\n'), 300)
        else s.end()
      }
    })
  }
  const quiet = await serve(t, server('silent'))
  const t0 = Date.now()
  const r = await detectService({ host: HOST, port: quiet.port, level: 'full' })
  const took = Date.now() - t0
  t.match(r, { service: 'http', product: undefined, version: undefined })
  // The banner wait (4 s) and the grace (1 s), not the silent probes' wait (3 s).
  t.ok(took < 6000, `took ${took} ms`)
  t.ok(await allClosed(quiet), 'the probes cut short are closed')
  const late = await serve(t, server('memcached'))
  t.match(await detectService({ host: HOST, port: late.port, level: 'full' }), { service: 'memcached', product: 'memcached', version: '1.6.18' })
  t.ok(await allClosed(late))
})

test('MongoDB on 27017: isMaster, then buildInfo as OP_MSG for the exact version', async (t) => {
  const reply = (requestId: number, op: number, doc: Buffer): Buffer => {
    const head = Buffer.alloc(op === 1 ? 36 : 21)
    head.writeInt32LE(head.length + doc.length, 0)
    head.writeInt32LE(100 + requestId, 4)
    head.writeInt32LE(requestId, 8)
    head.writeInt32LE(op, 12)
    if (op === 1) head.writeInt32LE(1, 32)
    return Buffer.concat([head, doc])
  }
  const seen: number[] = []
  const st = await serve(t, (s) => s.on('data', (d: Buffer) => {
    const op = d.readInt32LE(12)
    seen.push(op)
    if (op === 2004) s.write(reply(d.readInt32LE(4), 1, encodeBson({ ismaster: true, maxWireVersion: 21, minWireVersion: 0, ok: 1 })))
    else if (op === 2013) s.write(reply(d.readInt32LE(4), 2013, encodeBson({ version: '7.0.2', ok: 1 })))
  }), 27017)
  const r = await detectService({ host: HOST, port: st.port, level: 'light' })
  t.match(r, { service: 'mongodb', product: 'MongoDB', version: '7.0.2' })
  t.same(r.cpe, ['cpe:2.3:a:mongodb:mongodb:7.0.2:*:*:*:*:*:*:*'])
  t.same(seen, [2004, 2013], 'OP_QUERY isMaster, then OP_MSG buildInfo')
})

// The real daemons on this machine, compared with what each reports about itself.

async function listening (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => resolve(false))
  })
}

async function daemon (t: tap.Test, port: number, name: string, fn: (t: tap.Test) => Promise<void>): Promise<void> {
  const skip = (await listening(port)) ? false : `${name} is not listening on 127.0.0.1:${port}`
  await t.test(name, { skip }, async (t2) => { await fn(t2) })
}

test('real daemons on this machine', async (t) => {
  await daemon(t, 6379, 'Redis', async (t) => {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', 'INFO', 'server'])
    const want = /redis_version:(\S+)/.exec(stdout)![1]
    const r = await detectService({ host: '127.0.0.1', port: 6379, level: 'light' })
    t.match(r, { service: 'redis', product: 'Redis', version: want })
    t.same(r.cpe, [`cpe:2.3:a:redis:redis:${want}:*:*:*:*:*:*:*`])
  })
  await daemon(t, 5432, 'PostgreSQL', async (t) => {
    const { stdout } = await run('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-Atc', 'show server_version'])
    const raw = stdout.trim()
    const r = await detectService({ host: '127.0.0.1', port: 5432, level: 'light' })
    t.match(r, { service: 'postgresql', product: 'PostgreSQL', version: raw.split(' ')[0] })
    const deb = /deb\d+u\d+/.exec(raw)
    if (deb) t.equal(r.distro, deb[0])
    t.match(r.extraInfo, /no authentication required/)
  })
  await daemon(t, 3306, 'MariaDB', async (t) => {
    const { stdout } = await run('mariadb', ['-h', '127.0.0.1', '-u', 'root', '-Nse', 'select version()'])
    const raw = stdout.trim()
    const r = await detectService({ host: '127.0.0.1', port: 3306, level: 'light' })
    t.match(r, { service: 'mysql', product: 'MariaDB', version: raw.split('-')[0] })
    const deb = /deb\d+u\d+/.exec(raw)
    if (deb) t.equal(r.distro, deb[0])
  })
  await daemon(t, 5672, 'RabbitMQ', async (t) => {
    const { stdout } = await run('rabbitmq-diagnostics', ['server_version', '-q'], { timeout: 60000 })
    const want = stdout.trim().split('\n').pop()!.trim()
    const r = await detectService({ host: '127.0.0.1', port: 5672, level: 'light' })
    t.match(r, { service: 'amqp', product: 'RabbitMQ', version: want })
    t.ok(r.cpe.includes(`cpe:2.3:a:vmware:rabbitmq:${want}:*:*:*:*:*:*:*`))
  })
  await daemon(t, 1883, 'Mosquitto', async (t) => {
    const { stdout } = await run('mosquitto', ['-h']).catch((e: { stdout: string }) => e)
    const want = /mosquitto version (\S+)/.exec(stdout)![1]
    const r = await detectService({ host: '127.0.0.1', port: 1883, level: 'light' })
    t.match(r, { service: 'mqtt', product: 'Mosquitto', version: want })
  })
  await daemon(t, 4222, 'NATS', async (t) => {
    const { stdout } = await run('nats-server', ['--version'])
    const want = /v(\d[\w.]*)/.exec(stdout)![1]
    const r = await detectService({ host: '127.0.0.1', port: 4222, level: 'light' })
    t.match(r, { service: 'nats', product: 'NATS Server', version: want })
    t.same(r.cpe, [`cpe:2.3:a:linuxfoundation:nats-server:${want}:*:*:*:*:*:*:*`])
  })
})
