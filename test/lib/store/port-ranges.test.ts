import { test } from 'tap'
import { portRanges, portSet, unionRanges } from '../../../lib/store/port-ranges'

test('port lists as range text', async (t) => {
  t.equal(portRanges([80, 22, 21, 23, 8000, 8001, 8002, 22, 443]), '21-23,80,443,8000-8002', 'sorted, repeats dropped, runs joined')
  t.equal(portRanges([]), '')
  t.equal(portRanges(Array.from({ length: 65535 }, (_, i) => i + 1)), '1-65535', 'the full template in a few bytes')
  t.equal(portRanges([0, 70000, 1.5, 22]), '0,22', 'only real port numbers, and 0: the host itself (a credentialed scan\'s package findings)')
  const template = [443, 80]
  t.equal(portRanges(template), portRanges(template), 'the same array, the same text')
  t.equal(unionRanges('21-23,80', '24,79,8080'), '21-24,79-80,8080')
  t.equal(unionRanges('', '22'), '22')
  t.equal(unionRanges('22', ''), '22')

  const set = portSet('21-23,80,443,8000-8002')
  for (const p of [21, 22, 23, 80, 443, 8000, 8002]) t.ok(set.has(p), `${p} in`)
  for (const p of [1, 20, 24, 79, 81, 442, 444, 7999, 8003, 65535]) t.notOk(set.has(p), `${p} out`)
  t.ok(portSet('').empty)
  t.notOk(portSet('').has(22))
  t.equal(portSet('1-65535').has(65535), true)
  t.equal(portSet('22'), portSet('22'), 'parsed once per text')
})
