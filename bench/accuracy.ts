// npm run accuracy [-- --runs 3] [--matcher-only] [--json] [--write-labels] [--build-tracker]
// Scores the matcher and the full pipeline (the detection lab scanned by the service) against the labelled set of
// test/accuracy/labels.json: TP/FP/FN per source and per evidence rule, precision, recall, F1, the share of
// potential verdicts, and every miss. With --runs N the lab is scanned N times and the runs must agree (findings,
// ids, statuses, confidence scores). Exits 1 when a score falls below test/accuracy/baseline.json.
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import { buildLabels } from './support/accuracy-labels'
import {
  buildTracker, CHANGELOG_PACKAGES, consistent, formatScore, LABELS_FILE, loadData, loadLabels, readBaseline, regressions,
  runMatcher, runPipeline, score, TRACKER_FILE
} from './support/accuracy'

async function main (): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: { runs: { type: 'string', default: '1' }, 'matcher-only': { type: 'boolean' }, json: { type: 'boolean' }, 'write-labels': { type: 'boolean' }, 'build-tracker': { type: 'boolean' } }
  })
  if (values['build-tracker'] === true) {
    const logs: Record<string, string> = {}
    for (const pkg of Object.keys(CHANGELOG_PACKAGES)) logs[pkg] = execFileSync('zcat', [`/usr/share/doc/${pkg}/changelog.Debian.gz`], { encoding: 'utf8' })
    fs.writeFileSync(TRACKER_FILE, JSON.stringify(buildTracker(logs), null, 2) + '\n')
    process.stdout.write(`wrote ${TRACKER_FILE}\n`)
    return 0
  }
  if (values['write-labels'] === true) {
    const labels = buildLabels()
    fs.writeFileSync(LABELS_FILE, JSON.stringify(labels, null, 1) + '\n')
    process.stdout.write(`wrote ${labels.length} labels to ${LABELS_FILE}\n`)
    return 0
  }
  const runs = Math.max(1, Number(values.runs))
  const labels = loadLabels()
  const base = readBaseline()
  const matcher = score(await runMatcher(labels, await loadData()))
  const problems = regressions('matcher', matcher, base.matcher)
  const report: Record<string, unknown> = { labels: labels.length, matcher }
  process.stdout.write(formatScore('matcher', matcher) + '\n\n')
  if (values['matcher-only'] !== true) {
    const pipelineRuns = await runPipeline(labels, runs)
    const first = pipelineRuns[0]
    if (first.skipped.length > 0) process.stdout.write(`lab daemons skipped: ${first.skipped.map((s) => `${s.name} (${s.reason})`).join('; ')}\n`)
    if (first.outcomes.length > 0) {
      const pipeline = score(first.outcomes)
      report.pipeline = pipeline
      process.stdout.write(formatScore('pipeline', pipeline) + '\n')
      problems.push(...regressions('pipeline', pipeline, base.pipeline))
      if (runs > 1) {
        const c = consistent(pipelineRuns)
        report.consistency = c
        process.stdout.write(c.same
          ? `consistency: ${runs} scans of the lab gave the same ${first.findings.length} findings (ids, statuses, confidence scores)\n`
          : `consistency: the ${runs} scans differ:\n  ${c.differences.join('\n  ')}\n`)
        if (!c.same) problems.push('the scans of the lab differ')
      }
    }
  }
  if (values.json === true) process.stdout.write(JSON.stringify(report, null, 2) + '\n')
  for (const p of problems) process.stdout.write(`REGRESSION: ${p}\n`)
  return problems.length > 0 ? 1 : 0
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  process.stderr.write(`accuracy failed: ${err.stack ?? err.message}\n`)
  process.exitCode = 1
})
