import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { influxd } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('InfluxDB from Debian: product and version from its X-Influxdb-Version header', { skip: daemonUnavailable('/usr/bin/influxd', 'influxdb') }, async (t) => {
  const d = await startDaemon(influxd())
  t.teardown(d.stop)
  // dpkg says 1.6.7~rc0-1+b13; the header says 1.6.7~rc0 (Debian's spelling of upstream's 1.6.7-rc0).
  const wire = d.packageVersion.replace(/^\d+:/, '').replace(/-[^-]*$/, '')
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'InfluxDB', version: wire, banner: /X-Influxdb-Version: / })
  t.same(r.cpe, [`cpe:2.3:a:influxdata:influxdb:${wire.replace(/~.*$/, '')}:*:*:*:*:*:*:*`])
})
