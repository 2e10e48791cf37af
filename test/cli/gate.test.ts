// --fail-on's help says what the gate does: a finding counts by its severity, an exposure finding without CVSS
// included (the help used to say findings without a CVSS score never trigger it, while a critical exposure did).
import { test } from 'tap'
import { failing, gateOptions } from '../../cli/gate'
import type { Finding } from '../../cli/output'

test('the gate and its help agree on findings without CVSS', async (t) => {
  const exposure = { severity: 'critical', cvss: null, status: 'open', confidence: 'high' } as unknown as Finding
  const unknown = { severity: 'unknown', cvss: null, status: 'open', confidence: 'high' } as unknown as Finding
  t.same(failing([exposure, unknown], { failOn: 'critical' }), [exposure], 'a critical exposure without CVSS trips it; unknown severity does not')
  const help = gateOptions()[0].description
  t.notMatch(help, /without a CVSS score[^;]*never trigger/, 'the help does not say the opposite')
  t.match(help, /exposure finding without a CVSS score counts/)
})
