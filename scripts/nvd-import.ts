// npm run nvd:import -- [--complete] <nvdcve-2.0-*.json | .json.gz> [...]
// Streams NVD JSON 2.0 feed files into the CVE index (Redis when REDIS_URL is set, otherwise the
// embedded index file NVD_INDEX_FILE). --complete says the files are the NVD's whole feed set (every year):
// once all are imported, a product absent from the index has no known CVEs and is never fetched on demand.

import path from 'node:path'
import pino from 'pino'
import pc from 'picocolors'
import { importFeed } from '../lib/nvd/feed-import'
import { META_AUTHORITATIVE } from '../lib/nvd/sync'
import { openBackends } from '../lib/backends'
import { loadConfig } from '../lib/config'

async function main (): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--')
  const complete = args.includes('--complete')
  const files = args.filter((a) => a !== '--complete')
  // --help asks for this text: it is never a file name (it used to be opened as one).
  const help = args.includes('--help') || args.includes('-h')
  if (files.length === 0 || help) {
    ;(help ? process.stdout : process.stderr).write('usage: npm run nvd:import -- [--complete] <nvdcve-2.0-*.json | .json.gz> [...]\n' +
      '  --complete   the files are the whole NVD feed set: the index is then authoritative (nothing fetched on demand)\n' +
      '  A small sample to try it offline: npm run nvd:import -- samples/nvdcve-2.0-sample.json\n')
    return help ? 0 : 2
  }
  const started = new Date().toISOString()
  const cfg = loadConfig()
  const backends = await openBackends(cfg, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  const index = backends.indexes.cve
  process.stderr.write(`index: ${backends.kind === 'redis' ? 'redis' : 'file ' + cfg.NVD_INDEX_FILE}\n`)
  let failed = 0
  try {
    for (const file of files) {
      const started = Date.now()
      let lastLine = 0
      try {
        const res = await importFeed(file, index, {
          onProgress: (n) => {
            const now = Date.now()
            if (now - lastLine < 1000) return
            lastLine = now
            const rate = Math.round(n / ((now - started) / 1000))
            process.stderr.write(`${path.basename(file)}: ${n.toLocaleString('en')} records read (${rate.toLocaleString('en')}/s)\n`)
          }
        })
        const secs = (Date.now() - started) / 1000
        process.stderr.write(pc.green(`${path.basename(file)}: ${res.records.toLocaleString('en')} records, ` +
          `${res.stored.toLocaleString('en')} new or updated, ${res.skipped} skipped, ${secs.toFixed(1)} s\n`))
        for (const e of res.errors) process.stderr.write(pc.yellow(`  skipped: ${e}\n`))
      } catch (err) {
        failed++
        process.stderr.write(pc.red(`${(err as Error).message}\n`))
      }
    }
    if (complete && failed === 0) {
      // Feed files are regenerated daily: the import is as current as the moment it began, at best.
      await index.setMeta(META_AUTHORITATIVE, started)
      process.stderr.write(`the index is complete as of ${started}: products absent from it have no known CVEs\n`)
    }
    await index.flush()
    const s = await index.stats()
    process.stderr.write(`index now holds ${s.cves.toLocaleString('en')} CVEs for ${s.products.toLocaleString('en')} products\n`)
  } finally {
    await backends.close()
  }
  return failed > 0 ? 1 : 0
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  process.stderr.write(pc.red(`nvd:import failed: ${err.message}\n`))
  process.exitCode = 1
})
