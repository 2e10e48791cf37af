// CVE JSON 5 benchmark (not a test): import a cvelistV5-sized baseline archive into the embedded
// source store, then time matches.
//
// The archive is SYNTHETIC: the real records of test/fixtures/cve5/cves repeated under fresh ids
// (CVE-9xxx-NNNNNN), packed like the release asset (a zip holding cves.zip). Most copies are renamed
// to one of 50,000 made-up products so the product index has a realistic spread; one copy in 1,500
// keeps its real product, so redis, rabbitmq, nginx … each get a few dozen CVEs.
//
//   npx tsx bench/cve5.ts                          300,000 records, 20,000 matches
//   BENCH_RECORDS=20000 npx tsx bench/cve5.ts      a quicker run
//   BENCH_HEAP_MB=768 npx tsx bench/cve5.ts        the import with V8's heap capped (as cve:import runs)
//
// The import runs in a child process so its peak RSS is the import's alone.

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { Readable } from 'node:stream'
import yazl from 'yazl'
import { importZip } from '../lib/cve5/import'
import { matchCve5 } from '../lib/cve5/source'
import { createMemorySourceStore } from '../lib/sources/memory'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 300_000)
const MATCHES = Number(process.env.BENCH_MATCHES ?? 20_000)
const TREE = path.join(__dirname, '..', 'test', 'fixtures', 'cve5', 'cves')

function fixtures (): unknown[] {
  const out: unknown[] = []
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.json')) out.push(JSON.parse(fs.readFileSync(p, 'utf8')))
    }
  }
  walk(TREE)
  return out
}

/** Write a zip whose entries are produced one at a time, as yazl reads them: memory stays flat. */
async function zipOf (entries: Iterator<[string, () => Buffer]>, file: string): Promise<void> {
  const zip = new yazl.ZipFile()
  const done = once(zip.outputStream.pipe(fs.createWriteStream(file)), 'close')
  for (let e = entries.next(); e.done !== true; e = entries.next()) {
    const [name, make] = e.value
    zip.addReadStream(Readable.from((function * () { yield make() })()), name, { compress: true })
  }
  zip.end()
  await done
}

function * synthetic (): Generator<[string, () => Buffer]> {
  const base = fixtures().map((r) => JSON.stringify(r))
  for (let i = 0; i < RECORDS; i++) {
    const id = `CVE-9${String(Math.floor(i / 1_000_000)).padStart(3, '0')}-${String(1_000_000 + i)}`
    const [, year, num] = id.split('-')
    yield [`cves/${year}/${num.slice(0, -3)}xxx/${id}.json`, () => {
      const rec = JSON.parse(base[i % base.length])
      rec.cveMetadata.cveId = id
      if (i % 1500 !== 0) {
        for (const c of [rec.containers.cna, ...(rec.containers.adp ?? [])]) {
          for (const a of c?.affected ?? []) {
            a.vendor = `synthetic-vendor-${i % 50_000}`
            a.product = `synthetic-product-${i % 50_000}`
            delete a.cpes
            delete a.packageName
          }
        }
      }
      return Buffer.from(JSON.stringify(rec, null, 4))
    }]
  }
}

async function importPhase (zip: string, storeFile: string): Promise<void> {
  const store = await createMemorySourceStore({ filePath: storeFile })
  const t0 = process.hrtime.bigint()
  const res = await importZip(store, zip)
  const importMs = Number(process.hrtime.bigint() - t0) / 1e6
  const t1 = process.hrtime.bigint()
  await store.flush()
  const flushMs = Number(process.hrtime.bigint() - t1) / 1e6
  // VmHWM, not getrusage's maxRSS: the latter carries over the parent's peak across exec.
  const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  const peakMb = hwm ? Number(hwm[1]) / 1024 : process.resourceUsage().maxRSS / 1024
  process.stdout.write(JSON.stringify({ read: res.read, added: res.added, importMs, flushMs, peakMb }) + '\n')
}

async function main (): Promise<void> {
  if (process.argv[2] === '--import') {
    await importPhase(process.argv[3], process.argv[4])
    return
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-bench-cve5-'))
  try {
    const inner = path.join(dir, 'cves.zip')
    const outer = path.join(dir, 'baseline.zip')
    const storeFile = path.join(dir, 'sources.ndjson.gz')
    let t = Date.now()
    await zipOf(synthetic(), inner)
    const wrapper = new yazl.ZipFile()
    const wrote = once(wrapper.outputStream.pipe(fs.createWriteStream(outer)), 'close')
    wrapper.addFile(inner, 'cves.zip', { compress: false })
    wrapper.end()
    await wrote
    fs.rmSync(inner)
    process.stdout.write(`built ${RECORDS.toLocaleString('en')}-record archive (${(fs.statSync(outer).size / 1e6).toFixed(0)} MB) in ${((Date.now() - t) / 1000).toFixed(1)} s\n`)
    const heap = process.env.BENCH_HEAP_MB !== undefined ? [`--max-old-space-size=${process.env.BENCH_HEAP_MB}`] : []
    const out = execFileSync(process.execPath, [...heap, '--import', 'tsx', __filename, '--import', outer, storeFile], { encoding: 'utf8', maxBuffer: 1 << 20 })
    const r = JSON.parse(out.trim().split('\n').pop() as string)
    process.stdout.write(`import: ${r.read.toLocaleString('en')} records in ${(r.importMs / 1000).toFixed(1)} s ` +
      `(+ ${(r.flushMs / 1000).toFixed(1)} s writing the store file), peak RSS ${r.peakMb.toFixed(0)} MB\n`)

    t = Date.now()
    const store = await createMemorySourceStore({ filePath: storeFile })
    process.stdout.write(`store file loaded in ${((Date.now() - t) / 1000).toFixed(1)} s\n`)
    const queries = [
      { vendor: 'redis', product: 'redis', version: '7.2.5' },
      { vendor: 'vmware', product: 'rabbitmq', version: '3.10.8' },
      { vendor: 'f5', product: 'nginx', version: '1.22.1' },
      { vendor: 'openbsd', product: 'openssh', version: '9.2p1' },
      { vendor: 'postgresql', product: 'postgresql', version: '15.13' },
      { vendor: 'synthetic-vendor-42', product: 'synthetic-product-42', version: '1.0' },
      { vendor: 'acme', product: 'unknown', version: '1.0' }
    ]
    const times: number[] = []
    let hits = 0
    for (let i = 0; i < MATCHES; i++) {
      const s = process.hrtime.bigint()
      hits += (await matchCve5(store, queries[i % queries.length])).length
      times.push(Number(process.hrtime.bigint() - s) / 1e6)
    }
    times.sort((a, b) => a - b)
    const pct = (p: number): string => times[Math.min(times.length - 1, Math.floor(times.length * p))].toFixed(3)
    process.stdout.write(`match: ${MATCHES.toLocaleString('en')} queries, ${hits.toLocaleString('en')} hits, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms\n`)
  } finally {
    if (process.env.BENCH_KEEP === undefined) fs.rmSync(dir, { recursive: true, force: true })
    else process.stdout.write(`kept ${dir}\n`)
  }
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`)
  process.exitCode = 1
})
