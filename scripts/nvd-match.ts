// npm run nvd:match -- <cpe 2.3 name> [--json]
// Prints the CVEs the local index gives for a CPE, with the criterion that matched and why.

import pino from 'pino'
import pc from 'picocolors'
import { openBackends } from '../lib/backends'
import { loadConfig } from '../lib/config'
import type { CveMatch } from '../lib/nvd/types'

function order (a: CveMatch, b: CveMatch): number {
  return (b.cve.cvss ?? -1) - (a.cve.cvss ?? -1) || (a.cve.id < b.cve.id ? 1 : -1)
}

async function main (): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--')
  const json = args.includes('--json')
  const cpe = args.find((a) => !a.startsWith('--'))
  if (cpe === undefined) {
    process.stderr.write('usage: npm run nvd:match -- <cpe 2.3 name> [--json]\n' +
      'e.g.   npm run nvd:match -- cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*\n')
    return 2
  }
  const cfg = loadConfig()
  const backends = await openBackends(cfg, pino({ level: 'warn' }, pino.destination(2)))
  const index = backends.indexes.cve
  try {
    const started = process.hrtime.bigint()
    const matches = (await index.match(cpe)).sort(order)
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    if (json) {
      process.stdout.write(JSON.stringify(matches.map((m) => ({
        id: m.cve.id,
        cvss: m.cve.cvss,
        cvssVersion: m.cve.cvssVersion,
        severity: m.cve.severity,
        kev: m.cve.kev !== null,
        confidence: m.productOnly === true ? 'product-only' : m.confidence,
        criterion: m.criterion,
        reason: m.reason,
        requiresPlatform: m.requiresPlatform
      })), null, 2) + '\n')
      return 0
    }
    const stats = await index.stats()
    process.stdout.write(`${pc.bold(cpe)}: ${matches.length} CVE(s) from an index of ${stats.cves.toLocaleString('en')} (${ms.toFixed(2)} ms)\n`)
    for (const m of matches) {
      const sev = m.cve.severity === null ? 'no score' : `${m.cve.severity} ${String(m.cve.cvss)} (v${String(m.cve.cvssVersion)})`
      const tags = [m.cve.kev !== null ? pc.red('KEV') : '', m.productOnly === true ? pc.yellow('product only') : '',
        m.confidence === 'platform' ? pc.yellow('needs platform') : ''].filter((x) => x !== '').join(' ')
      process.stdout.write(`\n${pc.bold(m.cve.id)}  ${sev}  ${tags}\n`)
      process.stdout.write(`  criterion: ${m.criterion.criteria}\n  why:       ${m.reason}\n`)
      if (m.requiresPlatform !== undefined) process.stdout.write(`  requires one of: ${m.requiresPlatform.join(', ')}\n`)
    }
    return 0
  } finally {
    await backends.close()
  }
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  process.stderr.write(pc.red(`nvd:match failed: ${err.message}\n`))
  process.exitCode = 1
})
