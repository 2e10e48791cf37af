// npm run cpe:import -- <CPE API 2.0 page .json | .json.gz | directory of pages>
// npm run cpe:import -- --api                 (pages through NVD_API_URL/cpes/2.0, with NVD_API_KEY when set)
// Learns renamed products from the NVD's CPE dictionary (deprecated names and what replaced them) into the alias
// table the matcher reads beside the hand-kept aliases. Each import replaces the previous one.

import pino from 'pino'
import pc from 'picocolors'
import { openBackends } from '../lib/backends'
import { loadConfig } from '../lib/config'
import { collectFromApi, collectFromFiles, writeAliases } from '../lib/cpe/dictionary'

export const USAGE = 'usage: npm run cpe:import -- <cpes page .json | .json.gz | directory>\n       npm run cpe:import -- --api\n'

async function main (): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--')
  if (args.length !== 1) {
    process.stderr.write(USAGE)
    return 2
  }
  const cfg = loadConfig()
  const backends = await openBackends(cfg, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  try {
    const api = args[0] === '--api'
    const collected = api
      ? await collectFromApi({
        baseUrl: cfg.NVD_API_URL,
        ...(cfg.NVD_API_KEY !== undefined ? { apiKey: cfg.NVD_API_KEY } : {}),
        progress: (seen, total) => process.stderr.write(`${seen.toLocaleString('en')} of ${total.toLocaleString('en')} CPE names read\n`)
      })
      : await collectFromFiles(args[0])
    const r = await writeAliases(backends.indexes.sources, collected, api ? `${cfg.NVD_API_URL}/cpes/2.0` : args[0])
    process.stdout.write(`${r.entries.toLocaleString('en')} CPE names read, ${r.deprecated.toLocaleString('en')} deprecated: ${r.renames} vendor:product renames for ${r.products} products\n`)
    return 0
  } finally {
    await backends.close()
  }
}

if (require.main === module) {
  main().then((code) => { process.exitCode = code }, (err: Error) => {
    process.stderr.write(pc.red(`cpe:import failed: ${err.message}\n`))
    process.exitCode = 1
  })
}
