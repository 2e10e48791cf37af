// Template engine benchmark (issue 26, section 3).
//
//   npx tsx bench/templates.ts [--count 1000] [--json]
//   npx tsx bench/templates.ts --lab [--daemons redis,nats,...] [--count 1000] [--json]
//
// Load: `--count` templates generated in the format from the project's own (templates/: each copied with a new id
// and a varied word so that no two are the same text), written to a temporary directory and loaded as a scan loads
// them: wall time and the heap they hold. With --lab: the detection lab (bench/support/detect-lab.ts, Debian's
// daemons each on a loopback address of its own) scanned with the `standard` scan template, once without templates
// and once with the project's set plus the generated ones: the wall time of each and the ratio (target: templates
// add at most 20%). Every daemon is stopped at the end, on failure and on Ctrl-C.
// `nuclei` is not installable here (no internet beyond the npm registry and Debian packages): no comparison with it.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { loadDirectory, loadTemplateSet, PROJECT_TEMPLATES_DIR } from '../lib/templates/registry'
import { templatePortRunner } from '../lib/templates/index'
import type { LoadedTemplate } from '../lib/templates/types'
import { scanHosts } from '../lib/scanner/engine'
import { getTemplate } from '../lib/scanner/templates'
import { availableLab } from './support/detect-lab'
import { stopAllDaemons, type RunningDaemon } from './support/debian-daemon'

/** Write `count` templates derived from the project's own into `dir`. */
export function generate (dir: string, count: number): number {
  const sources = fs.readdirSync(PROJECT_TEMPLATES_DIR).filter((f) => f.endsWith('.yaml')).map((f) => fs.readFileSync(path.join(PROJECT_TEMPLATES_DIR, f), 'utf8'))
  for (let i = 0; i < count; i++) {
    const src = sources[i % sources.length]
    const text = src.replace(/^id: (\S+)/m, (_, id: string) => `id: ${id}-gen-${i}`).replace(/^( {2}name: .*)$/m, `$1 (generated ${i})`)
    fs.writeFileSync(path.join(dir, `gen-${i}.yaml`), text)
  }
  return count
}

function heapMb (): number {
  global.gc?.()
  return process.memoryUsage().heapUsed / 1048576
}

export function measureLoad (count: number): { count: number, loaded: number, refused: number, loadMs: number, heapMb: number, templates: LoadedTemplate[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-bench-templates-'))
  try {
    generate(dir, count)
    const before = heapMb()
    const t0 = performance.now()
    const set = loadDirectory(dir, 'user', null, false)
    const loadMs = performance.now() - t0
    const held = heapMb() - before
    return { count, loaded: set.templates.length, refused: set.refused.length, loadMs: Math.round(loadMs), heapMb: Math.round(held * 10) / 10, templates: set.templates }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function labScan (only: string[] | undefined, generated: LoadedTemplate[]): Promise<Record<string, unknown>> {
  const { daemons, skipped } = availableLab(only)
  const running: RunningDaemon[] = []
  const ports = new Set<number>()
  const hosts: { address: string, hostnames: string[] }[] = []
  try {
    for (const d of daemons) {
      try {
        const r = await d.start()
        running.push(r)
        hosts.push({ address: r.host, hostnames: [] })
        for (const p of d.ports(r)) ports.add(p.port)
      } catch (err) {
        skipped.push({ name: d.name, reason: (err as Error).message.slice(0, 200) })
      }
    }
    const template = getTemplate('standard', [...ports])
    const project = loadTemplateSet({ TEMPLATES_DIR: '', TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false }).templates
    const time = async (templates: LoadedTemplate[] | null): Promise<{ ms: number, exposures: number }> => {
      const t0 = performance.now()
      const r = await scanHosts(hosts, { template, discovery: false, ...(templates !== null ? { templates: templatePortRunner(templates, { intrusive: false }) } : {}) })
      return { ms: Math.round(performance.now() - t0), exposures: r.flatMap((h) => h.ports.flatMap((p) => p.exposures ?? [])).length }
    }
    const without = await time(null)
    const withProject = await time(project)
    const withAll = await time([...project, ...generated])
    return {
      daemons: running.length,
      ports: ports.size,
      skipped,
      withoutMs: without.ms,
      withProjectMs: withProject.ms,
      withAllMs: withAll.ms,
      templatesLoaded: project.length + generated.length,
      addedProject: `${Math.round((withProject.ms / without.ms - 1) * 100)}%`,
      addedAll: `${Math.round((withAll.ms / without.ms - 1) * 100)}%`,
      exposures: { without: without.exposures, withProject: withProject.exposures, withAll: withAll.exposures }
    }
  } finally {
    await stopAllDaemons()
  }
}

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '1000' }, lab: { type: 'boolean' }, daemons: { type: 'string' }, json: { type: 'boolean' } } })
  const load = measureLoad(Number(values.count))
  const out: Record<string, unknown> = { load: { ...load, templates: undefined }, nuclei: 'not installable here (no internet beyond npm and Debian): not compared' }
  if (values.lab === true) out.lab = await labScan(values.daemons?.split(','), load.templates)
  if (values.json === true) process.stdout.write(JSON.stringify(out, null, 2) + '\n')
  else {
    process.stdout.write(`load: ${load.loaded} of ${load.count} templates loaded (${load.refused} refused) in ${load.loadMs} ms, ${load.heapMb} MB of heap held\n`)
    if (out.lab !== undefined) process.stdout.write(`lab: ${JSON.stringify(out.lab)}\n`)
    process.stdout.write(`nuclei: ${String(out.nuclei)}\n`)
  }
}

if (require.main === module) {
  process.on('SIGINT', () => { stopAllDaemons().finally(() => process.exit(130)) })
  main().catch(async (err: Error) => {
    await stopAllDaemons()
    process.stderr.write(`bench/templates failed: ${err.message}\n`)
    process.exitCode = 1
  })
}
