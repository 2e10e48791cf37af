// `vulnscan health`: the service's health and what its findings are matched against (needs no key).
import pc from 'picocolors'
import { CliError, EXIT, networkError, print, printJson } from '../context'
import { dataSourcesText } from '../output'
import type { CommandModule } from '../command'

const health: CommandModule = (program, kit) => {
  const cmd = program.command('health')
    .summary('service health (needs no key)')
    .description('Shows whether the store and the queue answer, and what vulnerability data findings are matched against. Needs no key; exits 3 when degraded.')
  cmd.action(async () => kit.run(cmd, async (ctx) => {
    let result
    try {
      result = await ctx.client.GET('/health')
    } catch (err) {
      throw networkError(err, ctx.baseUrl)
    }
    // 503 is a documented answer here (degraded), so it is shown, then reported through the exit status.
    const h = result.data ?? (result.response.status === 503 ? result.error as unknown as typeof result.data : undefined)
    if (h === undefined) throw new CliError(`vulnscan answered ${result.response.status} on /health`, EXIT.API)
    if (ctx.json) printJson(ctx.io, h)
    else {
      const nvd = h.nvd ? `; NVD index: ${h.nvd.cves} CVEs, last sync ${h.nvd.lastSync ?? 'never'}` : ''
      print(ctx.io, `${h.status === 'ok' ? pc.green('ok') : pc.red(h.status)} (version ${h.version}; store ${h.checks.store.backend}: ${h.checks.store.status}; queue ${h.checks.queue.backend}: ${h.checks.queue.status}${nvd})`)
      if (h.dataSources) print(ctx.io, dataSourcesText(h.dataSources))
      for (const w of h.warnings ?? []) print(ctx.io, pc.yellow(`warning: ${w}`))
    }
    return h.status === 'ok' ? EXIT.OK : EXIT.API
  }, { needsKey: false }))
}

export default health
