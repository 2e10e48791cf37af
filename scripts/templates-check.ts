// npm run templates:check -- [<dir> ...] [--json]
// Load every Nuclei-format template under the directories (default: the project's templates/ and TEMPLATES_DIR)
// as a scan would, and print what loads (id, severity, services, ports, intrusive, signed) and what is refused
// and why. Exit code 1 when anything is refused (or a directory is missing), 0 when everything loads.

import { parseArgs } from 'node:util'
import pc from 'picocolors'
import { askedForHelp } from './help'
import { loadConfig } from '../lib/config'
import { loadTemplateSet, type TemplateSet } from '../lib/templates/index'
import { loadDirectory } from '../lib/templates/registry'
import { signingKey } from '../lib/templates/signing'

export const USAGE = 'usage: npm run templates:check -- [<dir> ...] [--json]\n' +
  '       with no directory: the project\'s templates/ and TEMPLATES_DIR, as a scan loads them\n' +
  '       TEMPLATES_SIGNING_CERT and TEMPLATES_REQUIRE_SIGNED apply as they do to scans\n'

interface Out { write: (s: string) => unknown }

export function runCheck (argv: string[], config: { TEMPLATES_DIR: string, TEMPLATES_SIGNING_CERT: string, TEMPLATES_REQUIRE_SIGNED: boolean }, out: Out): number {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, allowPositionals: true })
  let set: TemplateSet
  if (positionals.length === 0) {
    set = loadTemplateSet(config)
  } else {
    const key = config.TEMPLATES_SIGNING_CERT === '' ? null : signingKey(config.TEMPLATES_SIGNING_CERT)
    set = { templates: [], refused: [] }
    for (const dir of positionals) {
      const s = loadDirectory(dir, 'user', key, config.TEMPLATES_REQUIRE_SIGNED)
      set.templates.push(...s.templates)
      set.refused.push(...s.refused)
    }
  }
  if (values.json === true) {
    out.write(JSON.stringify({
      loaded: set.templates.map((t) => ({ id: t.id, file: t.file, severity: t.severity, services: t.services, ports: t.ports, intrusive: t.intrusive, signature: t.signature })),
      refused: set.refused
    }, null, 2) + '\n')
  } else {
    for (const t of set.templates) {
      out.write(`${pc.green('loaded ')} ${t.id} (${t.severity}) services ${t.services.join(',') || '-'} ports ${t.ports.join(',') || '-'}${t.intrusive ? ' intrusive' : ''} ${t.signature}  ${t.file}\n`)
    }
    for (const r of set.refused) out.write(`${pc.red('refused')} ${r.id ?? '?'}  ${r.file}: ${r.reason}\n`)
    out.write(`${set.templates.length} loaded, ${set.refused.length} refused\n`)
  }
  return set.refused.length > 0 ? 1 : 0
}

if (require.main === module && askedForHelp(USAGE)) {
  process.exitCode = 0
} else if (require.main === module) {
  try {
    process.exitCode = runCheck(process.argv.slice(2), loadConfig(), process.stdout)
  } catch (err) {
    process.stderr.write(pc.red(`templates:check failed: ${(err as Error).message}\n`))
    process.exitCode = 2
  }
}
