// options.intrusive reaches the exposure checks: scanHosts hands `intrusive` to every port's checks, false unless asked.
import { randomInt } from 'node:crypto'
import * as net from 'node:net'
import { test } from 'tap'
import { scanHosts } from '../../../lib/scanner/engine'
import { getTemplate } from '../../../lib/scanner/templates'
import type { CheckTarget } from '../../../lib/scanner/checks/index'

test('the checks are told whether the scan is intrusive', async (t) => {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const server = net.createServer((s) => { s.on('error', () => {}); s.end() })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  for (const intrusive of [undefined, true] as const) {
    const seen: CheckTarget[] = []
    await scanHosts([{ address: host, hostnames: [] }], {
      template: getTemplate('quick', String(port)),
      ...(intrusive !== undefined ? { intrusive } : {}),
      detect: async () => ({ service: 'mysql', cpe: [] }),
      checks: async (target) => { seen.push(target); return { exposures: [], concluded: true } }
    })
    t.equal(seen.length, 1)
    t.equal(seen[0].intrusive, intrusive === true, `intrusive ${String(intrusive)}`)
  }
})
