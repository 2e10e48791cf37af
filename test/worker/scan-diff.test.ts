// A diff after a daemon is stopped between two real scans, on both backends: the first scan finds an SSH daemon on
// a loopback address and CVEs the fixture NVD records give for its version; the daemon stops; the second scan
// finds the port closed; the diff says the port closed and every finding it had is fixed. The per-scan lists
// show each scan's own view.
import { test } from 'tap'
import { createServer, type Server } from 'node:net'
import { backends, build, SERVICE_KEY } from '../helper'
import { freePort, loopbackAddress } from '../support/loopback'
import { startFakeNvd } from '../support/fake-nvd'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>

function sshDaemon (host: string, port: number): Promise<Server> {
  // It reads what clients send (and drops it): a socket left with unread bytes never sees the client's FIN, and
  // close() would wait for it forever (the SSH exposure check sends its own identification line).
  const server = createServer((socket) => { socket.on('error', () => {}); socket.resume(); socket.end('SSH-2.0-OpenSSH_9.2p1\r\n') })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server))
  })
}

test('a daemon stopped between two scans: its port closed and its findings fixed in the diff', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const nvd = await startFakeNvd({ rateLimit: null })
      t.teardown(() => nvd.close())
      const host = loopbackAddress()
      const port = await freePort(host)
      let ssh: Server | null = await sshDaemon(host, port)
      t.teardown(() => new Promise<void>((resolve) => { if (ssh === null) resolve(); else ssh.close(() => resolve()) }))
      const { app } = await build(t, backend, { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl })
      const scan = async (id: string): Promise<Json> => {
        const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: host, type: 'single_ip' }], options: { template: 'standard', ports: String(port) } } })
        t.equal(posted.statusCode, 200, posted.body)
        for (let i = 0; i < 900; i++) {
          const s = (await app.inject({ url: `/app/scan/${id}`, headers: auth })).json() as Json
          if (['completed', 'failed', 'cancelled'].includes(s.status)) return s
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error(`scan ${id} did not end`)
      }

      t.equal((await scan('before')).status, 'completed')
      const seen = (await app.inject({ url: `/vulnerability?scanId=before&limit=500`, headers: auth })).json() as Json
      t.ok(seen.total > 0, `the first scan observed findings on the daemon (${String(seen.total)})`)
      t.ok((seen.items as Json[]).every((f) => f.address === host && f.port === port && f.status === 'open'))

      await new Promise<void>((resolve) => ssh!.close(() => resolve()))
      ssh = null
      t.equal((await scan('after')).status, 'completed')

      const res = await app.inject({ url: '/app/scan/after/diff?limit=1000', headers: auth })
      t.equal(res.statusCode, 200, res.body)
      const d = res.json() as Json
      t.equal(d.against, 'before', 'compared with the previous completed scan of the same target')
      t.same(d.ports.closed, [{ address: host, port, protocol: 'tcp', service: 'ssh', product: 'OpenSSH', version: '9.2p1' }], 'the port closed, with what ran there')
      t.same(d.ports.opened, [])
      t.same([d.hosts.appeared, d.hosts.down], [[], []], 'the host answered both times (a refused connect is an answer)')
      t.equal(d.totals.fixedFindings, seen.total, 'every finding the first scan observed is fixed')
      t.same((d.findings.fixed as Json[]).map((f) => f.id).sort(), (seen.items as Json[]).map((f) => f.id).sort())
      t.ok((d.findings.fixed as Json[]).every((f) => f.status === 'fixed' && f.product === 'OpenSSH' && f.version === '9.2p1'))
      t.same([d.totals.newFindings, d.totals.unchangedFindings], [0, 0])

      // Each scan's own view: the first still lists its findings (fixed now), the second none.
      const afterList = (await app.inject({ url: '/vulnerability?scanId=after', headers: auth })).json() as Json
      t.equal(afterList.total, 0)
      const beforeFixed = (await app.inject({ url: '/vulnerability?scanId=before&status=fixed&limit=500', headers: auth })).json() as Json
      t.equal(beforeFixed.total, seen.total)
      const hostsAfter = (await app.inject({ url: '/host?scanId=after', headers: auth })).json() as Json
      t.same((hostsAfter.items as Json[]).map((h) => [h.address, h.ports.length]), [[host, 0]], 'the host, with no port open now')
    })
  }
})
