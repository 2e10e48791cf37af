// Credentialed collection against Debian's real sshd on a random loopback address, reading this machine's own
// dpkg database; and every fault ending with its reason in bounded time.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { MemoryStore } from '../../../lib/store/memory/store'
import { collectHost, type CollectDeps } from '../../../lib/credentialed/collect'
import { semaphore } from '../../../lib/credentialed/scanning'
import type { OpenedCredential } from '../../../lib/credentials/vault'
import { silentServers } from '../../support/silent-servers'
import { loopbackAddress } from '../../support/loopback'
import { createScanUser, keyPair, sshLabUnavailable, startLabSshd } from '../../support/ssh-lab'

const skip = sshLabUnavailable()

function deps (store = new MemoryStore(), limits: Partial<CollectDeps['limits']> = {}): CollectDeps {
  return { store, limits: { connectTimeoutMs: 10_000, commandTimeoutMs: 30_000, outputMaxBytes: 16 * 1024 * 1024, ...limits }, limit: semaphore(8) }
}

t.test('credentialed collection on the real sshd', { skip }, async (t) => {
  const user = createScanUser()
  t.teardown(user.remove)
  const key = keyPair()
  const other = keyPair()
  const sshd = await startLabSshd({ user: user.name, authorizedKeys: [key.publicKey], password: true })
  t.teardown(sshd.stop)
  const cred = (over: Partial<OpenedCredential> = {}): OpenedCredential => ({ id: 'c1', name: 'lab', username: user.name, port: sshd.port, privateKey: key.privateKey, hostKeys: [], scope: [], ...over })

  t.test('reads the OS, the machine\'s whole dpkg database and the running kernel', async (t) => {
    const started = Date.now()
    const out = await collectHost(sshd.host, [cred()], deps())
    t.ok(out.ok, out.ok ? 'collected' : `${out.reason}: ${out.message}`)
    if (!out.ok) return
    const local = spawnSync('dpkg-query', ['-W', '-f=${db:Status-Abbrev}\\n'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l[1] === 'i').length
    t.equal(out.inventory.os.id, 'debian')
    t.ok(out.inventory.os.codename, `release ${out.inventory.os.codename}`)
    t.equal(out.inventory.format, 'dpkg')
    t.equal(out.inventory.packages.length, local, `${local} installed packages, as dpkg-query says`)
    const ssh = out.inventory.packages.find((p) => p.name === 'openssh-server')
    t.equal(ssh?.source, 'openssh')
    t.equal(ssh?.sourceVersion, spawnSync('dpkg-query', ['-W', '-f=${source:Version}', 'openssh-server'], { encoding: 'utf8' }).stdout)
    t.equal(out.inventory.kernel, spawnSync('uname', ['-r'], { encoding: 'utf8' }).stdout.trim())
    t.comment(`collected ${out.inventory.packages.length} packages in ${Date.now() - started} ms`)
  })

  t.test('a password login works; a wrong one fails as auth', async (t) => {
    const ok = await collectHost(sshd.host, [cred({ privateKey: undefined, password: user.password })], deps())
    t.ok(ok.ok, ok.ok ? 'password login' : ok.message)
    const bad = await collectHost(sshd.host, [cred({ privateKey: undefined, password: `${user.password}x` })], deps())
    t.equal(bad.ok ? 'ok' : bad.reason, 'auth')
    t.notOk(!bad.ok && bad.message.includes(user.password), 'the message holds no password')
  })

  t.test('a wrong key fails as auth; the next credential is then tried', async (t) => {
    const bad = await collectHost(sshd.host, [cred({ privateKey: other.privateKey })], deps())
    t.equal(bad.ok ? 'ok' : bad.reason, 'auth')
    const next = await collectHost(sshd.host, [cred({ id: 'wrong', privateKey: other.privateKey }), cred()], deps())
    t.ok(next.ok && next.credentialId === 'c1', 'the second credential logged in')
  })

  t.test('host keys: trusted on first use, a change refused; a pinned key must match', async (t) => {
    const store = new MemoryStore()
    const first = await collectHost(sshd.host, [cred()], deps(store))
    t.ok(first.ok)
    t.equal((await store.getHostKey('c1', sshd.host))?.fingerprint, sshd.hostKey.fingerprint, 'recorded at the first login')
    // The same address and port, another host key: a new server, or a man in the middle.
    await sshd.stop()
    const again = await startLabSshd({ user: user.name, authorizedKeys: [key.publicKey], host: sshd.host, port: sshd.port })
    t.teardown(again.stop)
    const changed = await collectHost(sshd.host, [cred()], deps(store))
    t.equal(changed.ok ? 'ok' : changed.reason, 'host-key')
    t.match(changed.ok ? '' : changed.message, /host key changed/)
    t.match(changed.ok ? '' : changed.message, again.hostKey.fingerprint)
    const pinned = await collectHost(sshd.host, [cred({ hostKeys: [{ host: sshd.host, fingerprint: again.hostKey.fingerprint }] })], deps(store))
    t.ok(pinned.ok, 'the pinned key wins over the recorded one')
    const wrongPin = await collectHost(sshd.host, [cred({ hostKeys: [{ host: sshd.host, fingerprint: sshd.hostKey.fingerprint }] })], deps(new MemoryStore()))
    t.equal(wrongPin.ok ? 'ok' : wrongPin.reason, 'host-key')

    t.test('a package list that hangs, overflows or is missing ends with its reason', async (t) => {
      again.setFault('hang')
      let started = Date.now()
      const hang = await collectHost(again.host, [cred()], deps(new MemoryStore(), { commandTimeoutMs: 2000 }))
      t.equal(hang.ok ? 'ok' : hang.reason, 'timeout')
      t.ok(Date.now() - started < 20_000, `ended in ${Date.now() - started} ms`)
      again.setFault('huge')
      started = Date.now()
      const huge = await collectHost(again.host, [cred()], deps())
      t.equal(huge.ok ? 'ok' : huge.reason, 'output-limit', huge.ok ? '' : huge.message)
      t.ok(Date.now() - started < 60_000, `50 MB list stopped in ${Date.now() - started} ms`)
      again.setFault('missing')
      const missing = await collectHost(again.host, [cred()], deps())
      t.equal(missing.ok ? 'ok' : missing.reason, 'no-command')
      again.setFault('none')
      t.ok((await collectHost(again.host, [cred()], deps())).ok, 'and the next collection works')
    })
  })
})

t.test('a server that accepts and never answers ends as timeout', async (t) => {
  const host = loopbackAddress()
  const silent = await silentServers([{ address: host, port: 0 }])
  t.teardown(silent.close)
  const started = Date.now()
  const out = await collectHost(host, [{ id: 'c', name: 'c', username: 'x', port: silent.ports[0], password: 'irrelevant-secret', hostKeys: [], scope: [] }], deps(new MemoryStore(), { connectTimeoutMs: 1500 }))
  t.equal(out.ok ? 'ok' : out.reason, 'timeout')
  t.ok(Date.now() - started < 10_000, `ended in ${Date.now() - started} ms`)
})

t.test('a host outside every credential\'s scope is not logged in to', async (t) => {
  const out = await collectHost('127.9.9.9', [{ id: 'c', name: 'c', username: 'x', port: 22, password: 'pw-secret', hostKeys: [], scope: ['10.0.0.0/8'] }], deps())
  t.equal(out.ok ? 'ok' : out.reason, 'scope')
})
