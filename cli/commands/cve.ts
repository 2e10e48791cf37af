// `vulnscan cve <CVE-id>`: a CVE from the local index and the hosts it affects.
import pc from 'picocolors'
import { api, print, printJson } from '../context'
import { colourSeverity } from '../output'
import type { CommandModule } from '../command'

const cve: CommandModule = (program, kit) => {
  const cmd = program.command('cve')
    .summary('a CVE from the local NVD index and the hosts it affects')
    .description('Shows a CVE as the local NVD index holds it (or its CVE record where the index lacks it) and the hosts with a standing finding of it.')
    .argument('<cve-id>', 'e.g. CVE-2023-28366')
  kit.hint(cmd, 'cve needs one CVE id, e.g. vulnscan cve CVE-2023-28366')
  cmd.action(async (cveId: string) => kit.run(cmd, async (ctx) => {
    const { io } = ctx
    const { data: c } = await api(ctx.client.GET('/vulnerability/{cveId}', { params: { path: { cveId } } }), ctx.baseUrl)
    if (ctx.json) {
      printJson(io, c)
      return 0
    }
    const score = c.cvss === null ? pc.dim('no CVSS score') : `CVSS ${c.cvss.toFixed(1)} (${c.cvssVersion ?? '?'})`
    print(io, `${pc.bold(c.id)}  ${colourSeverity(c.severity)}  ${score}${c.kev ? `  ${pc.bold(pc.red('KEV'))} since ${c.kev.dateAdded}` : ''}`)
    print(io, `${c.vulnStatus}; published ${c.published}, last modified ${c.lastModified}`)
    if (c.cvssVector) print(io, c.cvssVector)
    if (c.cwes.length > 0) print(io, `Weaknesses: ${c.cwes.join(', ')}`)
    print(io, `\n${c.description}\n`)
    if (c.kev?.requiredAction) print(io, `Required action (CISA): ${c.kev.requiredAction}\n`)
    print(io, c.affectedHosts.length === 0 ? 'Affects no scanned host.' : `Affected hosts (${c.affectedHosts.length}): ${c.affectedHosts.join(', ')}`)
    // NVD lists a URL once per source that submitted it; a person needs it once.
    const urls = [...new Set(c.references.map((r) => r.url))]
    for (const url of urls.slice(0, 10)) print(io, `  ${url}`)
    if (urls.length > 10) print(io, `  … ${urls.length - 10} more (--json lists all)`)
    return 0
  }))
}

export default cve
