// Every operation of the API has its CLI command (issue 14): each operationId under `paths` in openapi.yaml is mapped
// here to the command that calls it, and that command exists. A new route without a command fails this test: add the
// command, and its operationId here.
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import type { Command } from 'commander'
import { buildProgram } from '../../cli/program'

/** operationId → the command (words after `vulnscan`) that calls it. */
const COMMAND_OF: Record<string, string> = {
  listAudit: 'audit',
  listRefusedRequests: 'audit refused',
  createApiKey: 'keys create',
  listApiKeys: 'keys list',
  updateApiKey: 'keys update',
  revokeApiKey: 'keys revoke',
  createCredential: 'credentials create',
  listCredentials: 'credentials list',
  getCredential: 'credentials show',
  updateCredential: 'credentials update',
  deleteCredential: 'credentials delete',
  rotateCredentialsKey: 'credentials rotate',
  createWebhook: 'webhook create',
  listWebhooks: 'webhook list',
  getWebhook: 'webhook show',
  updateWebhook: 'webhook update',
  deleteWebhook: 'webhook delete',
  listWebhookDeliveries: 'webhook deliveries',
  testWebhook: 'webhook test',
  retryWebhookDelivery: 'webhook retry',
  createIntegration: 'integrations create',
  listIntegrations: 'integrations list',
  getIntegration: 'integrations show',
  updateIntegration: 'integrations update',
  deleteIntegration: 'integrations delete',
  syncIntegration: 'integrations sync',
  listIntegrationDeliveries: 'integrations deliveries',
  createScan: 'scan',
  listScans: 'scans',
  getScan: 'status',
  cancelScan: 'cancel',
  diffScan: 'diff',
  getScanReport: 'report',
  createScanReportLink: 'report', // report --link
  getSharedScanReport: 'report', // the link report --link prints, opened by a browser without a key
  listTemplates: 'templates',
  streamScanEvents: 'status', // status --wait and scan --wait follow the event stream
  createSchedule: 'schedule create',
  listSchedules: 'schedule list',
  getSchedule: 'schedule show',
  updateSchedule: 'schedule update', // and schedule enable / disable
  deleteSchedule: 'schedule delete',
  getHealth: 'health',
  listHosts: 'hosts',
  getHost: 'host show',
  deleteHost: 'host delete',
  setHostTags: 'tags set', // and tags clear
  changeHostTags: 'tags add', // and tags remove
  listHostFindings: 'host show',
  getHostReport: 'host report',
  getFindingsReport: 'vulns', // vulns --document cyclonedx | openvex
  listFindings: 'vulns',
  getCve: 'cve',
  decideFinding: 'decide'
}

function find (program: Command, words: string[]): Command | undefined {
  let cmd: Command | undefined = program
  for (const w of words) cmd = cmd?.commands.find((c) => c.name() === w)
  return cmd
}

test('every API operation has a CLI command', async (t) => {
  const doc = parse(readFileSync(join(__dirname, '..', '..', 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> }
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ id: op.operationId, where: `${method.toUpperCase()} ${path}` })))
  t.ok(operations.length >= Object.keys(COMMAND_OF).length, `${operations.length} operations`)
  const { program } = buildProgram({ stdout: process.stdout, stderr: process.stderr, env: {} })
  for (const { id, where } of operations) {
    const words = COMMAND_OF[id]
    t.ok(words, `${id} (${where}) has a command: add it to cli/commands and map it here`)
    if (words !== undefined) t.ok(find(program, words.split(' ')), `vulnscan ${words} exists (${id})`)
  }
  const documented = new Set(operations.map((o) => o.id))
  for (const id of Object.keys(COMMAND_OF)) t.ok(documented.has(id), `${id} is still an operation of openapi.yaml`)
})
