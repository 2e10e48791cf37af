import { test } from 'tap'
import { allPorts, MODERN_PORTS, parsePortList, TOP_100, TOP_1000, withExtras } from '../../../lib/scanner/ports'

test('top lists are frequency ordered, distinct, and the top 100 is the head of the top 1000', async (t) => {
  t.equal(TOP_1000.length, 1000)
  t.equal(new Set(TOP_1000).size, 1000)
  t.same(TOP_1000.slice(0, 5), [80, 23, 443, 21, 22])
  t.equal(TOP_100.length, 100)
  t.same(TOP_100, TOP_1000.slice(0, 100))
  t.ok(TOP_1000.every((p) => Number.isInteger(p) && p >= 1 && p <= 65535))
  t.ok(TOP_100.includes(3306) && TOP_100.includes(8080))
})

test('modern services the frequency list misses are in the extras', async (t) => {
  for (const p of [6379, 5672, 5671, 1883, 8883, 4222, 11211, 27017, 9200, 9300, 2375, 2376, 6443, 15672,
    5984, 9092, 8086, 8500, 2379, 10250, 5432, 3306, 6380, 8222, 61613, 61616, 25672, 4369, 9093]) {
    t.ok(MODERN_PORTS.includes(p), `extras hold ${p}`)
  }
  t.notOk(TOP_100.includes(6379), 'nmap top 100 lacks redis, which is why extras exist')
  const quick = withExtras(TOP_100)
  t.same(quick.slice(0, 100), TOP_100, 'the base order is kept')
  t.equal(new Set(quick).size, quick.length, 'no duplicates')
  t.ok(quick.includes(6379))
})

test('allPorts is 1..65535', async (t) => {
  const a = allPorts()
  t.equal(a.length, 65535)
  t.equal(a[0], 1)
  t.equal(a[65534], 65535)
})

test('parsePortList parses lists and ranges, keeps order, drops duplicates', async (t) => {
  t.same(parsePortList('22,80,8000-8003'), [22, 80, 8000, 8001, 8002, 8003])
  t.same(parsePortList(' 443 , 80, 443, 79-81 '), [443, 80, 79, 81])
  t.same(parsePortList('1-1'), [1])
  t.equal(parsePortList('1-65535').length, 65535)
})

test('parsePortList names the bad part', async (t) => {
  t.throws(() => parsePortList(''), /empty/)
  t.throws(() => parsePortList('22,,80'), /empty entry/)
  t.throws(() => parsePortList('22,'), /empty entry/)
  t.throws(() => parsePortList('0'), /'0': port 0 is outside 1-65535/)
  t.throws(() => parsePortList('80,65536'), /'65536': port 65536 is outside/)
  t.throws(() => parsePortList('http'), /'http' is not a port/)
  t.throws(() => parsePortList('100-90'), /'100-90': range start 100 is after its end 90/)
  t.throws(() => parsePortList('1-2-3'), /'1-2-3' is not a port/)
  t.throws(() => parsePortList('-5'), /'-5' is not a port/)
  t.throws(() => parsePortList('22.5'), /'22.5' is not a port/)
})
