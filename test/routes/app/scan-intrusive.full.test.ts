// options.intrusive: false by default, kept on the scan when asked for, on both backends; anything but a boolean is a 400.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'

const auth = { 'x-api-key': SERVICE_KEY }
const target = [{ value: '10.0.0.1', type: 'single_ip' }]

test('POST /app/scan with options.intrusive', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const on = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'int-1', targets: target, options: { intrusive: true } } })
      t.equal(on.statusCode, 200, on.body)
      t.match((await app.inject({ url: '/app/scan/int-1', headers: auth })).json(), { id: 'int-1', intrusive: true })
      const off = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'int-2', targets: target } })
      t.equal(off.statusCode, 200)
      t.notOk('intrusive' in (await app.inject({ url: '/app/scan/int-2', headers: auth })).json(), 'absent: not intrusive')
      const again = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'int-1', targets: target, options: { intrusive: true } } })
      t.equal(again.statusCode, 200, 'the same request again is a no-op')
      const bad = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { targets: target, options: { intrusive: 'yes' } } })
      t.equal(bad.statusCode, 400)
      t.equal(bad.json().code.startsWith('VULNSCAN'), true)
    })
  }
})
