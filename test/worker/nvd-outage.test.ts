// The NVD unreachable during a scan: the scan still completes, says which products it could not
// check, and those are matched once the NVD answers again.
import { test } from 'tap'
import { build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { localDaemons } from '../support/daemons'
import { expectedCves } from '../support/expected-cves'

const auth = { 'x-api-key': SERVICE_KEY }

test('a scan during an NVD outage completes, lists unchecked products, and they are matched later', async (t) => {
  const mosquitto = (await localDaemons()).find((d) => d.product === 'Mosquitto')
  if (!mosquitto) return t.pass('skipped: no Mosquitto broker runs here')
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(() => nvd.close())
  // No back-off after the outage: this test is about matching once the NVD answers again.
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl, NVD_BACKOFF: 0 })
  const waitEnd = async (id: string): Promise<Record<string, any>> => {
    for (let i = 0; i < 400; i++) {
      const scan = (await app.inject({ url: `/app/scan/${id}`, headers: auth })).json()
      if (['completed', 'failed', 'cancelled'].includes(scan.status)) return scan
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`scan ${id} did not end`)
  }

  nvd.setDown('reset')
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'outage', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { ports: String(mosquitto.port) } } })
  const during = await waitEnd('outage')
  t.equal(during.status, 'completed', 'the scan completes without the NVD')
  t.same(during.summary.uncheckedProducts, ['eclipse:mosquitto'], 'and says what it could not check')
  // CVE findings only: the broker's exposure findings (anonymous clients) need no NVD and are there already.
  const cveIds = async (): Promise<string[]> => (await app.inject({ url: '/vulnerability?limit=500', headers: auth })).json().items
    .filter((f: { source: string }) => f.source !== 'vulnscan').map((f: { cveId: string }) => f.cveId).sort()
  t.same(await cveIds(), [], 'no CVE finding yet')

  nvd.setDown(false)
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'later', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'discovery', ports: '1' } } })
  t.equal((await waitEnd('later')).status, 'completed')
  const want = expectedCves(['eclipse:mosquitto'], mosquitto.version)
  let got: string[] = []
  for (let i = 0; i < 50 && got.length < want.length; i++) {
    got = await cveIds()
    if (got.length < want.length) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.same(got, want, 'the products are matched once the NVD answers')
})
