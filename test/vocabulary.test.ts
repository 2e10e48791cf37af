// The scan vocabulary is written once (lib/vocabulary.ts); the API schema, the CLI's help and the code must all
// say the same, and this test fails the day one of them is written out by hand and drifts.
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import {
  DEFAULT_PRIORITY, DEFAULT_TEMPLATE, PRIORITY_MAX, PRIORITY_MIN, SCAN_STATUSES, TEMPLATE_NAMES
} from '../lib/vocabulary'
import { ScanListQuerySchema, ScanOptionsSchema, ScanRequestSchema, ScanStatusSchema } from '../schemas/scan'
import { USAGE } from '../cli/main'
import { TEMPLATES } from '../lib/scanner/templates'
import { fromQueuePriority, toQueuePriority } from '../lib/queue/types'
import { newScanRecord } from '../lib/scans'
import { isTerminal } from '../lib/store/types'

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const doc = parse(readFileSync(join(__dirname, '..', 'openapi.yaml'), 'utf8'))
const component = (name: string): any => doc.components.schemas[name]

test('the API schema and its published document say what the vocabulary says', async (t) => {
  const priority = ScanRequestSchema.properties.priority
  t.match(priority, { minimum: PRIORITY_MIN, maximum: PRIORITY_MAX, default: DEFAULT_PRIORITY })
  t.match(component('ScanRequest').properties.priority, { minimum: PRIORITY_MIN, maximum: PRIORITY_MAX, default: DEFAULT_PRIORITY })
  t.match(component('ScanRequest').properties.priority.description, `default ${DEFAULT_PRIORITY}`)

  t.same(ScanOptionsSchema.properties.template.enum, TEMPLATE_NAMES)
  t.equal(ScanOptionsSchema.properties.template.default, DEFAULT_TEMPLATE)
  t.same(component('ScanOptions').properties.template.enum, TEMPLATE_NAMES)
  for (const name of TEMPLATE_NAMES) t.match(ScanOptionsSchema.properties.template.description, `${name}:`, `the template description explains ${name}`)

  t.same(ScanStatusSchema.enum, SCAN_STATUSES)
  t.same(ScanListQuerySchema.properties.status.enum, SCAN_STATUSES)
  t.same(component('ScanStatus').enum, SCAN_STATUSES)
})

test('the CLI help and its checks say what the vocabulary says', async (t) => {
  t.match(USAGE, `--template <name>   ${TEMPLATE_NAMES.join(' | ')} (default: ${DEFAULT_TEMPLATE})`)
  t.match(USAGE, `--priority <${PRIORITY_MIN}-${PRIORITY_MAX}>`)
  t.match(USAGE, `${PRIORITY_MAX} is the most urgent (default: ${DEFAULT_PRIORITY})`)
})

test('the code says what the vocabulary says', async (t) => {
  t.same(Object.keys(TEMPLATES), TEMPLATE_NAMES, 'every template name has a template, and no other exists')
  for (const name of TEMPLATE_NAMES) t.equal(TEMPLATES[name].name, name)

  const record = newScanRecord({ targets: [{ value: '127.0.0.1', type: 'single_ip' }] }, 'service')
  t.equal(record.priority, DEFAULT_PRIORITY, 'a scan posted without a priority gets the default')
  t.equal(record.template, DEFAULT_TEMPLATE, 'and the default template')
  t.equal(record.status, SCAN_STATUSES[0], 'a new scan starts in the first status')
  t.same(SCAN_STATUSES.filter((s) => isTerminal(s)), ['completed', 'failed', 'cancelled'], 'the terminal statuses are among them')

  const priorities = range(PRIORITY_MIN, PRIORITY_MAX)
  const queued = priorities.map(toQueuePriority)
  t.same([...queued].sort((a, b) => a - b), queued.slice().reverse(), 'the most urgent API priority is served first by BullMQ')
  t.ok(queued.every((p) => p >= 1), 'BullMQ priorities are positive')
  t.same(queued.map(fromQueuePriority), priorities, 'and map back')
  t.equal(fromQueuePriority(undefined), DEFAULT_PRIORITY, 'a job without a priority has the default')
})
