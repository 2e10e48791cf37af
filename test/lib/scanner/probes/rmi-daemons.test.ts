// Debian's rmiregistry (openjdk-17-jre-headless) binds every address: it runs in a network namespace of its own
// and is detected there on 1099 of a random 127.x address.
import { existsSync } from 'node:fs'
import { test } from 'tap'
import { detectInNamespace, namespaceUnavailable } from '../../../support/netns'

const RMIREGISTRY = '/usr/lib/jvm/java-17-openjdk-amd64/bin/rmiregistry'
const skip = namespaceUnavailable() || (!existsSync(RMIREGISTRY) && process.env.CI !== 'true' ? 'rmiregistry is not installed (openjdk-17-jre-headless)' : false)

test('rmiregistry: java-rmi named by its ProtocolAck', { skip }, async (t) => {
  const r = await detectInNamespace(t, [RMIREGISTRY, '1099'], 1099)
  t.match(r.service, { service: 'java-rmi', extraInfo: /^JRMP ProtocolAck; sees the client as 127\.[\d.]+:\d+$/ })
  t.same(r.exposures, [])
})
