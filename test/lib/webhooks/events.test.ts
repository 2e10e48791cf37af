// Which events are queued for which webhooks, on both backends: finding.new for findings first seen by a write,
// filtered per webhook (severity, KEV, confidence), once per event; scan events by subscription; both formats.
import { test } from 'tap'
import type { DeliveryJobData, DeliveryQueue } from '../../../lib/queue/types'
import type { ScanRecord, WebhookRecord } from '../../../lib/store/types'
import { createNotifier } from '../../../lib/webhooks/events'
import { backends, openBackendsIn } from '../../helper'
import { finding, write } from '../../support/results'

class Captured implements DeliveryQueue {
  readonly kind = 'memory' as const
  readonly jobs = new Map<string, DeliveryJobData>()
  async add (id: string, job: DeliveryJobData): Promise<void> { if (!this.jobs.has(id)) this.jobs.set(id, job) }
  async process (): Promise<void> {}
  async close (): Promise<void> {}
}

function hook (id: string, events: WebhookRecord['events'], filter: WebhookRecord['filter'] = {}, format: WebhookRecord['format'] = 'json', at = Date.now()): WebhookRecord {
  const iso = new Date(at).toISOString()
  return { id, url: 'https://hooks.example.com/x', events, filter, format, enabled: true, description: '', secret: 's', createdAt: iso, updatedAt: iso, createdBy: 'service' }
}

type Json = Record<string, any>
const bodies = (q: Captured, webhookId: string): Json[] => [...q.jobs.values()].filter((j) => j.webhookId === webhookId).map((j) => JSON.parse(j.body) as Json)

test('finding.new: new findings only, each webhook\'s filter, once', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store, results } = await openBackendsIn(t, backend)
      const q = new Captured()
      const notifier = createNotifier({ store, results, deliveries: q, log: { warn: () => {} } })
      await store.createWebhook(hook('all', ['finding.new'], {}, 'json', 1000))
      await store.createWebhook(hook('critical-kev', ['finding.new'], { minSeverity: 'critical', kevOnly: true }, 'json', 2000))
      await store.createWebhook(hook('high-confidence', ['finding.new'], { minConfidence: 'high' }, 'slack', 3000))
      await store.createWebhook(hook('scans-only', ['scan.completed'], {}, 'json', 4000))
      await store.createWebhook({ ...hook('off', ['finding.new'], {}, 'json', 5000), enabled: false })

      const host = '127.0.0.2'
      const ssh = finding(host, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1', 'medium')
      const redis = finding(host, 6379, 'CVE-2022-0543', 'Redis', '5.0.7', 'high')
      const at1 = '2026-04-01T00:00:00.000Z'
      const w1 = write({ address: host, at: at1, scanId: 's1', services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }], findings: [ssh] })
      t.equal((await results.recordHost(w1)).newFindings, 1)
      await notifier.findingsNew({ id: 's1' }, host, at1, w1.findings)
      t.match(bodies(q, 'all'), [{ event: 'finding.new', host, scan: { id: 's1' }, findings: [{ cveId: 'CVE-2024-6387', port: 22, severity: 'high', kev: false, confidence: 'medium' }] }])
      t.same(bodies(q, 'critical-kev'), [], 'high, not KEV: filtered out')
      t.same(bodies(q, 'high-confidence'), [], 'medium confidence: filtered out')
      t.same(bodies(q, 'scans-only').concat(bodies(q, 'off')), [], 'not subscribed, or disabled')

      // The next scan sees both: only the Redis one is new.
      const at2 = '2026-04-02T00:00:00.000Z'
      const w2 = write({ address: host, at: at2, scanId: 's2', services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }, { port: 6379, service: 'redis', product: 'Redis', version: '5.0.7' }], findings: [ssh, redis] })
      t.equal((await results.recordHost(w2)).newFindings, 1)
      await notifier.findingsNew({ id: 's2', scheduleId: 'sched-1' }, host, at2, w2.findings)
      await notifier.findingsNew({ id: 's2', scheduleId: 'sched-1' }, host, at2, w2.findings)
      const all = bodies(q, 'all')
      t.equal(all.length, 2, 'the repeated call queued nothing more')
      t.match(all[1], { scan: { id: 's2', scheduleId: 'sched-1' }, findings: [{ cveId: 'CVE-2022-0543', severity: 'critical', kev: true }] })
      t.equal(all[1].findings.length, 1, 'the finding seen before is not new')
      t.match(bodies(q, 'critical-kev'), [{ findings: [{ cveId: 'CVE-2022-0543' }] }])
      const slack = [...q.jobs.values()].filter((j) => j.webhookId === 'high-confidence')
      t.equal(slack.length, 1)
      t.match(JSON.parse(slack[0].body), { text: /^vulnscan: 1 new finding on 127\.0\.0\.2 \(scan s2\)\n• CVE-2022-0543 \(critical, CVSS 10, KEV\) on port 6379: Redis 5\.0\.7$/ })
    })
  }
})

test('scan events go to their subscribers, once per scan and webhook', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store, results } = await openBackendsIn(t, backend)
      const q = new Captured()
      const notifier = createNotifier({ store, results, deliveries: q, log: { warn: () => {} } })
      await store.createWebhook(hook('failures', ['scan.failed', 'scan.cancelled'], { kevOnly: true }))
      await store.createWebhook(hook('slack', ['scan.completed'], {}, 'slack'))
      const scan: ScanRecord = {
        id: 'sc-1', status: 'failed', reason: 'time limit of 10 s exceeded', targets: [{ value: '127.0.0.1', type: 'single_ip' }], template: 'quick', priority: 3,
        requestHash: 'secret-hash', createdAt: new Date().toISOString(), finishedAt: new Date().toISOString(), createdBy: 'k1', keyScope: ['127.0.0.0/8'],
        progress: { hostsTotal: 1, hostsDone: 1, portsTotal: 1, portsDone: 1, percent: 100 }
      }
      await notifier.scanEnded(scan)
      await notifier.scanEnded(scan)
      const failures = bodies(q, 'failures')
      t.equal(failures.length, 1, 'one event, whatever the filter (filters are for findings)')
      t.match(failures[0], { event: 'scan.failed', scan: { id: 'sc-1', status: 'failed', reason: 'time limit of 10 s exceeded' } })
      t.notOk('requestHash' in failures[0].scan || 'createdBy' in failures[0].scan || 'keyScope' in failures[0].scan, 'nothing internal')
      await notifier.scanEnded({ ...scan, id: 'sc-2', status: 'completed', reason: undefined, summary: { hostsUp: 1, hostsDown: 0, openPorts: 3, findings: { critical: 1, high: 2, medium: 0, low: 0, none: 0, unknown: 0 }, uncheckedProducts: [], excluded: [] } })
      t.match(JSON.parse([...q.jobs.values()].find((j) => j.webhookId === 'slack')!.body), { text: 'vulnscan: scan sc-2 completed — 1 hosts up, 3 open ports, findings: 1 critical, 2 high' })
      await notifier.scanEnded({ ...scan, id: 'sc-3', status: 'running' })
      t.equal(q.jobs.size, 2, 'a scan that has not ended tells nothing')
    })
  }
})
