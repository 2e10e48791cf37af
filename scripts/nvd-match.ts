// npm run nvd:match -- <cpe 2.3 name> [--distro <family>:<release>:<source package>:<package version>] [--json]
// What a scan would conclude for one product, from every source at once: NVD configurations, the CNA's and
// CISA's affected data, the distribution tracker, KEV and EPSS; each CVE with its source, rule, status and
// confidence. Checks the matcher without a scan.

import { askedForHelp } from './help'
import { parseArgs } from 'node:util'
import pino from 'pino'
import pc from 'picocolors'
import { openBackends } from '../lib/backends'
import { loadConfig } from '../lib/config'
import { parseCpe, unescapeCpeValue } from '../lib/cpe/name'
import { DISTRO_FAMILIES, isDistroFamily } from '../lib/distro/families'
import type { DistroPackage } from '../lib/distro/package'
import { matchService, type MatchDeps } from '../lib/match/service'
import { dataSources, sourceLines, type DataSources } from '../lib/sources/registry'
import type { ServiceInfo } from '../lib/domain/services'

export const USAGE = `usage: npm run nvd:match -- <cpe 2.3 name> [--distro <${DISTRO_FAMILIES.join('|')}>:<release>:<source package>:<package version>] [--json]\n` +
  'e.g.   npm run nvd:match -- cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:* --distro debian:bookworm:openssh:1:9.2p1-2+deb12u10\n'

interface Out { write: (s: string) => unknown }

/** `debian:bookworm:openssh:1:9.2p1-2+deb12u10` (the version may hold colons: an epoch). */
export function parseDistroArg (text: string): DistroPackage | string {
  const [family, release, source, ...rest] = text.split(':')
  const version = rest.join(':')
  if (!isDistroFamily(family)) return `--distro must start with ${DISTRO_FAMILIES.map((f) => `${f}:`).join(' or ')}, not '${family}'`
  if (!release || !source || !version) return '--distro needs family:codename:source package:package version'
  return { family, release, source, version, evidence: 'given with --distro' }
}

/** The service a scan would have seen behind a CPE name: 9.2 + update p1 is the banner's 9.2p1. */
export function serviceOf (cpe: string): ServiceInfo | null {
  const p = parseCpe(cpe)
  if (p === null) return null
  const version = unescapeCpeValue(p.version)
  const update = unescapeCpeValue(p.update)
  const known = version !== '*' && version !== '-' && version !== ''
  const full = known && /^[a-z]+\d*$/i.test(update) ? version + update : version
  return { service: 'unknown', product: unescapeCpeValue(p.product), ...(known ? { version: full } : {}), cpe: [cpe] }
}

export async function runMatch (argv: string[], deps: MatchDeps, out: Out, matchedAgainst?: () => Promise<DataSources>): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv.filter((a) => a !== '--'), allowPositionals: true, options: { distro: { type: 'string' }, json: { type: 'boolean' } } })
  } catch (err) {
    out.write(`${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  const service = positionals.length === 1 ? serviceOf(positionals[0]) : null
  if (service === null) {
    out.write(positionals.length === 1 ? `not a CPE 2.3 name: ${positionals[0]}\n${USAGE}` : USAGE)
    return 2
  }
  const distro = values.distro === undefined ? null : parseDistroArg(values.distro)
  if (typeof distro === 'string') {
    out.write(`${distro}\n${USAGE}`)
    return 2
  }
  const started = process.hrtime.bigint()
  const m = await matchService(service, deps, { distroPackage: distro })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  const aliasOf = new Map(m.aliases.map((a) => [a.cpe, a]))
  const verdicts = m.verdicts.map((v) => ({
    id: v.cveId,
    source: v.source,
    rule: v.rule,
    status: v.observed,
    matchedCpe: v.matchedCpe,
    // Which name decided: the service's own CPE name, or an alias imported from the NVD's CPE dictionary.
    alias: aliasOf.has(v.matchedCpe) ? { ...(aliasOf.get(v.matchedCpe) as object) } : null,
    confidence: v.confidence,
    confidenceScore: v.confidenceScore ?? null,
    confidenceNote: v.confidenceNote,
    severity: v.severity,
    cvss: v.cvss,
    cvssVersion: v.cvssVersion,
    kev: v.kev,
    epss: v.epss,
    distribution: v.distribution
  }))
  if (values.json === true) {
    const against = matchedAgainst === undefined ? {} : { matchedAgainst: await matchedAgainst() }
    out.write(JSON.stringify({ cpe: positionals[0], version: service.version ?? null, distro, verdicts, disagreements: m.disagreements, ...against }, null, 2) + '\n')
    return 0
  }
  out.write(`${pc.bold(positionals[0])}${distro !== null ? ` on ${distro.family} ${distro.release} ${distro.source} ${distro.version}` : ''}: ${verdicts.length} CVE(s) (${ms.toFixed(2)} ms)\n`)
  for (const v of verdicts) {
    const score = v.cvss === null ? 'no score' : `${v.severity} ${v.cvss} (v${v.cvssVersion ?? '?'})`
    const status = v.status === 'open' ? pc.red(v.status) : pc.green(v.status)
    const tags = [v.kev !== null ? pc.red(v.kev.ransomware === true ? 'KEV+ransomware' : 'KEV') : '', v.epss !== null ? `EPSS ${(v.epss.score * 100).toFixed(1)}%` : ''].filter(Boolean).join(' ')
    out.write(`\n${pc.bold(v.id)}  ${status}  ${score}  ${v.confidence} confidence (${v.confidenceScore ?? '?'})  ${tags}\n  source: ${v.source}\n  rule:   ${v.rule}\n`)
    const a = aliasOf.get(v.matchedCpe)
    out.write(a !== undefined
      ? `  name:   ${v.matchedCpe}, an alias of ${a.of} imported from the NVD's CPE dictionary (${a.deprecated} deprecated by ${a.by})\n`
      : `  name:   ${v.matchedCpe}\n`)
    if (v.confidenceNote !== null) out.write(`  note:   ${v.confidenceNote}\n`)
  }
  for (const d of m.disagreements) out.write(pc.yellow(`\n${d}\n`))
  if (matchedAgainst !== undefined) {
    const d = await matchedAgainst()
    const against = sourceLines(d).map((s) => `${s.title} ${s.line === null ? 'not imported' : s.line.held}`)
    out.write(pc.dim(`\nmatched against: ${against.join(', ')}\n`))
  }
  return 0
}

async function main (): Promise<number> {
  const config = loadConfig()
  const backends = await openBackends(config, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  try {
    const { cve, sources } = backends.indexes
    return await runMatch(process.argv.slice(2), { nvd: cve, sources }, process.stdout, async () => await dataSources(cve, sources))
  } finally {
    await backends.close()
  }
}

if (require.main === module && askedForHelp(USAGE)) {
  process.exitCode = 0
} else if (require.main === module) {
  main().then((code) => { process.exitCode = code }, (err: Error) => {
    process.stderr.write(pc.red(`nvd:match failed: ${err.message}\n`))
    process.exitCode = 1
  })
}
