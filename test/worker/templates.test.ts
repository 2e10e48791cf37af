// Acceptance (issue 26): a template in the Nuclei format, in a directory named by TEMPLATES_DIR, runs against a real
// Redis on a random 127.x address and a port that is not Redis's own, and produces a finding with source template
// and the template's id as rule, on both backends. The template is bound to the service detection found there, not
// to the port it declares (6379). A re-scan after the exposure is gone marks the finding fixed.
import { test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { backends, build, SERVICE_KEY } from '../helper'
import { accepts, daemonUnavailable, startDaemon, type RunningDaemon } from '../support/debian-daemon'

const auth = { 'x-api-key': SERVICE_KEY }
const REDIS = '/usr/bin/redis-server'

// Written for this test: a user's own template, as a user would write one.
const TEMPLATE = `id: acme-redis-info-open

info:
  name: Redis INFO readable without a password (ACME's own check)
  author: acme
  severity: high
  tags: redis,network,acme
  classification:
    cwe-id: CWE-306

tcp:
  - host:
      - "{{Hostname}}"
    port: 6379
    inputs:
      - data: "INFO server\\r\\n"
    read-size: 4096
    matchers-condition: and
    matchers:
      - type: word
        words:
          - "redis_version:"
      - type: word
        words:
          - "NOAUTH"
        negative: true
    extractors:
      - type: regex
        group: 1
        regex:
          - "redis_version:([0-9.]+)"
`

/** Redis on its own random address and random free port (never 6379), or on the given ones again. */
async function redisOn (where: { host: string, port: number } | null, password: string | null): Promise<RunningDaemon> {
  return await startDaemon({
    pkg: 'redis-server',
    binary: REDIS,
    args: ({ dir, host, port }) => ['--port', String(where?.port ?? port), '--bind', where?.host ?? host, '--dir', dir, '--save', '', '--appendonly', 'no',
      ...(password === null ? [] : ['--requirepass', password])],
    ready: async ({ host, port }) => await accepts(where?.host ?? host, where?.port ?? port)
  })
}

for (const backend of ['memory', 'redis'] as const) {
  test(`a user template finds its service on a non-default port (${backend})`, { skip: daemonUnavailable(REDIS, 'redis-server') }, async (t) => {
    if (backend === 'redis' && !(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-templates-'))
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
    fs.writeFileSync(path.join(dir, 'acme-redis-info-open.yaml'), TEMPLATE)
    // standard: full detection, which tries Redis's probe on any port (quick tries it on Redis's own ports only).
    const { app } = await build(t, backend, { WORKER_ENABLED: true, NVD_ON_DEMAND: false, TEMPLATES_DIR: dir })

    // A random free port on the daemon's own random loopback address: not Redis's 6379.
    let daemon = await redisOn(null, null)
    const { host: address, port } = daemon
    t.not(port, 6379)
    t.teardown(async () => { await daemon.stop() })

    const listed = await app.inject({ url: '/templates', headers: auth })
    t.equal(listed.statusCode, 200, listed.body)
    t.match(listed.json().items.find((x: Record<string, unknown>) => x.id === 'acme-redis-info-open'), { severity: 'high', source: 'user', signed: 'unsigned', tags: ['redis', 'network', 'acme'], services: ['redis'], ports: [6379] })

    const scan = async (id: string): Promise<Record<string, any>> => {
      const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: address, type: 'single_ip' }], options: { template: 'standard', ports: String(port) } } })
      t.equal(posted.statusCode, 200, posted.body)
      const deadline = Date.now() + 60_000
      for (;;) {
        const s = (await app.inject({ url: `/app/scan/${id}`, headers: auth })).json()
        if (['completed', 'failed', 'cancelled'].includes(s.status)) return s
        if (Date.now() > deadline) throw new Error(`scan ${id} did not end`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const templateFindings = async (status = 'open'): Promise<Record<string, any>[]> =>
      (await app.inject({ url: `/vulnerability?source=template&status=${status}&host=${address}`, headers: auth })).json().items

    const first = await scan('tpl-1')
    t.equal(first.status, 'completed', first.reason)
    const found = await templateFindings()
    t.equal(found.length, 1, JSON.stringify(found))
    t.match(found[0], {
      cveId: 'VULNSCAN-TEMPLATE-ACME-REDIS-INFO-OPEN',
      address,
      port,
      source: 'template',
      rule: 'acme-redis-info-open',
      severity: 'high',
      status: 'open',
      confidence: 'high',
      confidenceScore: 85,
      evidence: /template acme-redis-info-open; .*extracted: \d+\.\d+/
    })
    t.ok(first.summary.findings.high >= 1, 'the summary counts it')

    // The fix: a password on the same address and port; the template's finding is fixed.
    await daemon.stop()
    daemon = await redisOn({ host: address, port }, 'a-long-test-password')
    t.equal((await scan('tpl-2')).status, 'completed')
    t.same(await templateFindings('open'), [])
    t.match(await templateFindings('fixed'), [{ rule: 'acme-redis-info-open', lastScanId: 'tpl-1' }])
  })
}
