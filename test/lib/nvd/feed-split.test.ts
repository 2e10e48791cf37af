import { test } from 'tap'
import { splitArray } from '../../../lib/nvd/feed-split'
import { allRawFixtures } from '../../support/nvd-fixtures'

async function * chunks (text: string, size: number): AsyncGenerator<Buffer> {
  const buf = Buffer.from(text)
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size)
}

async function collect (text: string, size: number, opts: { key: string, maxElementBytes?: number } = { key: 'vulnerabilities' }): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const v of splitArray(chunks(text, size), opts)) out.push(v)
  return out
}

test('yields each element of the wanted array, whatever the chunking', async (t) => {
  const items = allRawFixtures().map((cve) => ({ cve }))
  const doc = JSON.stringify({ resultsPerPage: 37, format: 'NVD_CVE', vulnerabilities: items, trailer: { x: [1, 2] } })
  for (const size of [1, 7, 4096, 1 << 20]) {
    t.same(await collect(doc, size), items, `chunks of ${size} bytes`)
  }
  const pretty = JSON.stringify({ vulnerabilities: items.slice(0, 3) }, null, 2)
  t.same(await collect(pretty, 13), items.slice(0, 3), 'indented JSON')
})

test('strings that look like structure do not confuse it', async (t) => {
  const tricky = [
    { cve: { id: 'CVE-2024-0001', d: 'a "quoted" } ] { [ text', e: 'back\\slash\\', f: '"vulnerabilities": [' } },
    { cve: { id: 'CVE-2024-0002', d: 'unicode \u00e9\u4e2d\ud83d\ude00 and \\" escaped quote', n: [[{}], []] } }
  ]
  const doc = '{"format":"vulnerabilities","nested":{"vulnerabilities":[{"no":1}]},"n":3,"t":true,' +
    '"vulnerabilities" : ' + JSON.stringify(tricky) + ',"after":"x"}'
  for (const size of [1, 2, 3, 5, 64]) t.same(await collect(doc, size), tricky, `chunks of ${size}`)
})

test('errors: missing array, truncated file, oversized element, not an array', async (t) => {
  await t.rejects(collect('{"other":[1,2]}', 4), /no "vulnerabilities" array/)
  await t.rejects(collect('{"vulnerabilities":[{"cve":{"id":"CVE-2024-0001"}},{"cve":', 4), /unexpected end/)
  await t.rejects(collect('', 4), /not a JSON document/)
  await t.rejects(collect('{"vulnerabilities":{"a":1}}', 4), /not an array/)
  const big = JSON.stringify({ vulnerabilities: [{ cve: { id: 'x', pad: 'y'.repeat(5000) } }] })
  await t.rejects(collect(big, 100, { key: 'vulnerabilities', maxElementBytes: 1000 }), /larger than 1000 bytes/)
  await t.rejects(collect(big, 100000, { key: 'vulnerabilities', maxElementBytes: 1000 }), /larger than 1000 bytes/)
  await t.rejects(collect('{"vulnerabilities":[{"a":1,}]}', 4), /malformed element/)
  t.same(await collect('{"vulnerabilities":[]}', 3), [])
})
