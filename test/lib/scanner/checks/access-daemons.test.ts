// Checks of services that let anyone in, each against the real daemon from Debian's packages started on a
// loopback address of its own, configured both ways: exposed (a finding) and fixed (none, and a conclusion).

import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { accepts, daemonUnavailable, startDaemon } from '../../../support/debian-daemon'
import { postgresServerAvailable, startPrivatePostgres } from '../../../support/postgres-server'

/** Detect the service as a scan does, then run the checks that apply to it. */
async function check (host: string, port: number): Promise<{ service: string, ids: string[], evidence: string[], concluded: boolean }> {
  const service = await detectService({ host, port, level: 'full' })
  const r = await runChecks({ host, port, service, hostnames: [] })
  return { service: service.service, ids: r.exposures.map((e) => e.check), evidence: r.exposures.map((e) => e.evidence), concluded: r.concluded }
}

const redisBin = '/usr/bin/redis-server'
for (const password of [null, 'a-long-test-password'] as const) {
  test(`Redis ${password === null ? 'without' : 'with'} requirepass`, { skip: daemonUnavailable(redisBin, 'redis-server') }, async (t) => {
    const d = await startDaemon({
      pkg: 'redis-server',
      binary: redisBin,
      args: ({ host, port, dir }) => ['--port', String(port), '--bind', host, '--dir', dir, '--save', '', '--appendonly', 'no',
        ...(password === null ? [] : ['--requirepass', password])]
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'redis')
    t.ok(r.concluded)
    if (password === null) {
      t.same(r.ids, ['VULNSCAN-REDIS-NOAUTH'])
      t.match(r.evidence[0], /INFO server answered without AUTH \(redis_version:\d/)
    } else {
      t.same(r.ids, [])
    }
  })
}

const mosquittoBin = '/usr/sbin/mosquitto'
for (const anonymous of [true, false]) {
  test(`Mosquitto with allow_anonymous ${String(anonymous)}`, { skip: daemonUnavailable(mosquittoBin, 'mosquitto') }, async (t) => {
    const d = await startDaemon({
      pkg: 'mosquitto',
      binary: mosquittoBin,
      files: ({ host, port }) => ({
        'mosquitto.conf': ['persistence false', 'log_dest stderr', `listener ${port} ${host}`, `allow_anonymous ${String(anonymous)}`, ''].join('\n')
      }),
      args: ({ dir }) => ['-c', path.join(dir, 'mosquitto.conf')]
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'mqtt')
    t.ok(r.concluded)
    t.same(r.ids, anonymous ? ['VULNSCAN-MQTT-ANONYMOUS'] : [])
  })
}

const memcachedBin = '/usr/bin/memcached'
for (const sasl of [false, true]) {
  // memcached's own authentication of the text protocol (an auth file, `-Y`) is the fix without a SASL setup.
  test(`memcached ${sasl ? 'with' : 'without'} authentication`, { skip: daemonUnavailable(memcachedBin, 'memcached') }, async (t) => {
    const d = await startDaemon({
      pkg: 'memcached',
      binary: memcachedBin,
      files: () => ({ auth: 'vulnscan:a-long-test-password\n' }),
      // memcached drops to nobody and must still read its auth file.
      prepare: () => [['chmod', ['755', '.']], ['chmod', ['644', 'auth']]],
      // Its own port on the test's own address: found there as a scan finds it.
      args: ({ host, dir }) => ['-l', host, '-p', '11211', '-U', '0', '-u', 'nobody', ...(sasl ? ['-Y', path.join(dir, 'auth')] : [])],
      ready: async ({ host }) => await accepts(host, 11211)
    })
    t.teardown(d.stop)
    const service = await detectService({ host: d.host, port: 11211, level: 'light' })
    // With authentication on, `version` is refused too, and detection cannot name the service: the check is asked anyway.
    const r = await runChecks({ host: d.host, port: 11211, service: sasl ? { service: 'memcached', cpe: [] } : service, hostnames: [] })
    if (!sasl) t.equal(service.service, 'memcached')
    t.ok(r.concluded)
    t.same(r.exposures.map((e) => e.check), sasl ? [] : ['VULNSCAN-MEMCACHED-NOAUTH'])
    if (!sasl) t.match(r.exposures[0].evidence, /STAT pid \d+; STAT version 1\./)
  })
}

const rsyncBin = '/usr/bin/rsync'
for (const list of [true, false]) {
  test(`rsync daemon with list = ${list ? 'yes' : 'no'}`, { skip: daemonUnavailable(rsyncBin, 'rsync') }, async (t) => {
    const d = await startDaemon({
      pkg: 'rsync',
      binary: rsyncBin,
      files: ({ dir }) => ({
        'rsyncd.conf': ['use chroot = no', 'uid = nobody', 'gid = nogroup', `pid file = ${path.join(dir, 'rsyncd.pid')}`,
          '[public]', `  path = ${dir}`, '  comment = test share', '  read only = yes', `  list = ${list ? 'yes' : 'no'}`, ''].join('\n')
      }),
      args: ({ host, port, dir }) => ['--daemon', '--no-detach', `--address=${host}`, `--port=${port}`, `--config=${path.join(dir, 'rsyncd.conf')}`, '--log-file=/dev/stderr']
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'rsync')
    t.ok(r.concluded)
    t.same(r.ids, list ? ['VULNSCAN-RSYNC-OPEN-MODULES'] : [])
    if (list) t.match(r.evidence[0], 'modules listed: public')
  })
}

const etcdBin = '/usr/bin/etcd'
for (const auth of [false, true]) {
  test(`etcd ${auth ? 'with' : 'without'} authentication`, { skip: daemonUnavailable(etcdBin, 'etcd-server') }, async (t) => {
    // The peer port beside the client port (nothing else listens on the test's own address).
    const peerOf = (port: number): number => port < 65535 ? port + 1 : port - 1
    const d = await startDaemon({
      pkg: 'etcd-server',
      binary: etcdBin,
      args: ({ host, port, dir }) => ['--name', 'test', '--data-dir', path.join(dir, 'data'), '--listen-client-urls', `http://${host}:${port}`,
        '--advertise-client-urls', `http://${host}:${port}`, '--listen-peer-urls', `http://${host}:${peerOf(port)}`,
        '--initial-advertise-peer-urls', `http://${host}:${peerOf(port)}`, '--initial-cluster', `test=http://${host}:${peerOf(port)}`, '--log-outputs', 'stderr'],
      ready: async ({ host, port }) => {
        try {
          return (await fetch(`http://${host}:${port}/version`)).ok
        } catch {
          return false
        }
      },
      env: () => ({ ETCD_UNSUPPORTED_ARCH: process.arch })
    })
    t.teardown(d.stop)
    const base = `http://${d.host}:${d.port}`
    const post = async (p: string, body: object): Promise<void> => {
      const res = await fetch(base + p, { method: 'POST', body: JSON.stringify(body) })
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`)
    }
    await post('/v3/kv/put', { key: Buffer.from('app/secret').toString('base64'), value: Buffer.from('x').toString('base64') })
    if (auth) {
      await post('/v3/auth/role/add', { name: 'root' })
      await post('/v3/auth/user/add', { name: 'root', password: 'a-long-test-password' })
      await post('/v3/auth/user/grant', { user: 'root', role: 'root' })
      await post('/v3/auth/enable', {})
    }
    const r = await check(d.host, d.port)
    t.equal(r.service, 'http')
    t.ok(r.concluded)
    t.same(r.ids, auth ? [] : ['VULNSCAN-ETCD-NOAUTH'])
    if (!auth) t.match(r.evidence[0], /answered 200 without credentials: revision \d+, 1 key/)
  })
}

for (const auth of ['trust', 'scram-sha-256'] as const) {
  test(`PostgreSQL with ${auth} authentication`, { skip: postgresServerAvailable() ? false : 'PostgreSQL 15 server binaries are absent' }, async (t) => {
    const pg = await startPrivatePostgres({ auth })
    t.teardown(pg.destroy)
    const r = await check(pg.host, pg.port)
    t.equal(r.service, 'postgresql')
    t.ok(r.concluded)
    t.same(r.ids, auth === 'trust' ? ['VULNSCAN-POSTGRESQL-TRUST'] : [])
  })
}
