import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { zookeeper } from '../../../../bench/support/daemon-specs'
import { complete, parse } from '../../../../lib/scanner/probes/zookeeper'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('srvr answers: version and mode; a refusal still names ZooKeeper', async (t) => {
  // Debian 12's zookeeper 3.8.0, answering srvr.
  const srvr = Buffer.from('Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: 0/0.0/0\n' +
    'Received: 1\nSent: 0\nConnections: 1\nOutstanding: 0\nZxid: 0x0\nMode: standalone\nNode count: 5\n')
  t.ok(complete(srvr))
  t.same(parse(srvr), { service: 'zookeeper', product: 'Apache ZooKeeper', version: '3.8.0', extraInfo: 'mode standalone' })
  t.same(parse(Buffer.from('srvr is not executed because it is not in the whitelist.\n')),
    { service: 'zookeeper', product: 'Apache ZooKeeper', extraInfo: 'four-letter words disabled' })
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
})

test('Debian\'s ZooKeeper', { skip: daemonUnavailable('/usr/share/zookeeper/bin/zkServer.sh', 'zookeeper') }, async (t) => {
  const d = await startDaemon(zookeeper())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'zookeeper', product: 'Apache ZooKeeper', version: upstream(d.packageVersion), extraInfo: 'mode standalone' })
  t.same(r.cpe, [`cpe:2.3:a:apache:zookeeper:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})
