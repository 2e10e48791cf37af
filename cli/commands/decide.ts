// `vulnscan decide <finding-id> <decision>`: accept a risk, mark a false positive, or withdraw the decision.
import { api, oneOf, print, printJson, usage } from '../context'
import type { CommandModule } from '../command'

const DECISIONS = ['accepted', 'false_positive', 'open'] as const

const decide: CommandModule = (program, kit) => {
  const cmd = program.command('decide')
    .summary('decide on a finding: accepted | false_positive | open (withdraws a decision)')
    .description('Records a decision on a finding (its id is in --json output, or in the tables with --ids); later scans keep it. accepted: a known risk; false_positive: not really affected; open: withdraws an earlier decision.')
    .argument('<finding-id>')
    .argument('<decision>', DECISIONS.join(' | '))
    .option('-m, --comment <text>', 'why; kept with the finding')
  kit.hint(cmd, 'decide needs a finding id and a decision, e.g. vulnscan decide 0123456789abcdef01234567 accepted --comment "isolated lab"')
  cmd.action(async (id: string, decision: string, opts: { comment?: string }) => kit.run(cmd, async (ctx) => {
    const status = oneOf('decision', decision, DECISIONS)
    if (status === undefined) throw usage('decide needs a decision.')
    const { data: f } = await api(ctx.client.PATCH('/vulnerability/finding/{id}', {
      params: { path: { id } },
      body: { status, ...(opts.comment !== undefined ? { comment: opts.comment } : {}) }
    }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, f)
    else print(ctx.io, `${f.cveId} on ${f.address}:${f.port}${f.protocol === 'udp' ? '/udp' : ''} is now ${f.status}.`)
    return 0
  }))
}

export default decide
