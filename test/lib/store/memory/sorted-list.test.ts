import { test } from 'tap'
import { SortedList } from '../../../../lib/store/memory/sorted-list'

interface Item { value: number, id: string }
const order = (a: Item, b: Item): number => a.value - b.value || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

// A small deterministic generator, so that a failure is the same on every run.
function random (seed: number): () => number {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
}

test('a sorted list matches a plain sorted array through thousands of inserts and deletes', async (t) => {
  const rnd = random(7)
  const list = new SortedList<Item>(order)
  const live = new Map<string, Item>()
  let failedDeletes = 0
  for (let step = 0; step < 6000; step++) {
    if (live.size > 0 && rnd() < 0.35) {
      const ids = [...live.keys()]
      const id = ids[Math.floor(rnd() * ids.length)]
      if (!list.delete(live.get(id)!)) failedDeletes++
      live.delete(id)
    } else {
      // Few distinct values: most comparisons are decided by the id.
      const item = { value: Math.floor(rnd() * 20), id: `i${step}` }
      list.insert(item)
      live.set(item.id, item)
    }
  }
  t.equal(failedDeletes, 0, 'every present item is found and deleted')
  const reference = [...live.values()].sort(order)
  t.equal(list.size, reference.length)
  t.same(list.toArray(), reference, 'ascending order kept')
  t.equal(list.delete({ value: 3, id: 'none' }), false, 'an absent item is not deleted')
  for (const offset of [0, 1, 511, 512, 1023, 1024, reference.length - 3, reference.length, reference.length + 5]) {
    t.same(list.slice('asc', offset, 7), reference.slice(offset, offset + 7), `asc page at ${offset}`)
    t.same(list.slice('desc', offset, 7), [...reference].reverse().slice(offset, offset + 7), `desc page at ${offset}`)
  }
  const seen: Item[] = []
  list.walk('desc', 10, (item) => { seen.push(item); return seen.length < 3 })
  t.same(seen, [...reference].reverse().slice(10, 13), 'a walk stops when told')
  t.same(list.slice('asc', 0, 0), [])
})

test('reset builds the list from items in any order', async (t) => {
  const list = new SortedList<Item>(order)
  const items = Array.from({ length: 3000 }, (_, i) => ({ value: (i * 7919) % 13, id: String(i).padStart(5, '0') }))
  list.reset(items)
  t.same(list.toArray(), [...items].sort(order))
  t.equal(list.size, 3000)
  for (const item of items.slice(0, 2990)) list.delete(item)
  t.same(list.toArray(), items.slice(2990).sort(order), 'thinned chunks still read in order')
  list.reset([])
  t.equal(list.size, 0)
  t.same(list.slice('desc', 0, 5), [])
})
