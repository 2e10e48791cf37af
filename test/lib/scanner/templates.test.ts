import { test } from 'tap'
import { allPorts, MODERN_PORTS, TOP_100, TOP_1000 } from '../../../lib/scanner/ports'
import { getTemplate, isTemplateName, TEMPLATES } from '../../../lib/scanner/templates'

test('templates carry the ports, detection level and NVD flag of the design', async (t) => {
  const quick = getTemplate('quick')
  t.equal(quick.detection, 'light')
  t.equal(quick.nvd, true)
  t.same(quick.ports.slice(0, 100), TOP_100)
  for (const p of MODERN_PORTS) t.ok(quick.ports.includes(p), `quick scans ${p}`)

  const standard = getTemplate('standard')
  t.equal(standard.detection, 'full')
  t.equal(standard.nvd, true)
  t.same(standard.ports.slice(0, 1000), TOP_1000)
  t.ok(standard.ports.includes(6379))

  const full = getTemplate('full')
  t.same(full.ports, allPorts())
  t.equal(full.detection, 'full')

  const discovery = getTemplate('discovery')
  t.same(discovery.ports, quick.ports)
  t.equal(discovery.detection, 'none')
  t.equal(discovery.nvd, false)
})

test('a port override replaces the list and keeps the rest of the template', async (t) => {
  const t1 = getTemplate('standard', '22,80,8000-8002')
  t.same(t1.ports, [22, 80, 8000, 8001, 8002])
  t.equal(t1.name, 'standard')
  t.equal(t1.detection, 'full')
  t.same(getTemplate('quick', [443, 22, 443]).ports, [443, 22])
  t.throws(() => getTemplate('quick', '22,99999'), /99999/)
  t.throws(() => getTemplate('quick', []), /empty/)
})

test('unknown names are refused and returned templates are independent copies', async (t) => {
  t.throws(() => getTemplate('aggressive'), /unknown template 'aggressive' \(known: quick, standard, full, discovery\)/)
  t.notOk(isTemplateName('toString'))
  t.ok(isTemplateName('full'))
  const a = getTemplate('quick')
  a.ports.push(1)
  t.not(getTemplate('quick').ports.at(-1), 1)
  t.ok(Object.isFrozen(TEMPLATES.quick.ports))
})
