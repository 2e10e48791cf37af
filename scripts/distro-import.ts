// npm run distro:import -- <Debian tracker JSON | URL> [--ubuntu <file | directory | URL>]
// Imports distribution tracker data into the source store (Redis when REDIS_URL is set,
// otherwise the embedded file beside the NVD index).

import { runDistroImport } from '../lib/distro/import-command'
import { openSourceStore } from './open-source-store'

async function main (): Promise<number> {
  const opened = await openSourceStore()
  process.stderr.write(`source store: ${opened.where}\n`)
  try {
    return await runDistroImport(process.argv.slice(2).filter((a) => a !== '--'), opened.store,
      (line) => process.stdout.write(line + '\n'), (line) => process.stderr.write(line + '\n'), { defaultUrl: opened.config.DEBIAN_TRACKER_URL })
  } finally {
    await opened.close()
  }
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  process.stderr.write(`${err.message}\n`)
  process.exitCode = 1
})
