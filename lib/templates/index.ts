// The template engine as the scanner sees it: the templates of a port run beside its exposure checks, and what they
// prove becomes exposures (and then findings of source `template`, lib/match/exposures.ts).

import { isTlsFirst } from '../scanner/checks/index'
import type { CheckTarget, PortChecks } from '../scanner/checks/index'
import { runTemplates } from './run'
import type { LoadedTemplate } from './types'
import type { TemplateHit } from '../domain/services'

export { loadTemplate, isRefusal, INTRUSIVE_TAGS } from './load'
export { loadTemplateSet, templateSet, templateDirs, PROJECT_TEMPLATES_DIR, type TemplateSet, type TemplateConfig } from './registry'
export type { LoadedTemplate, Refusal } from './types'

/** The finding id of a template: `VULNSCAN-TEMPLATE-<ID>` (the finding's `rule` is the id itself). */
export function templateFindingId (id: string): string {
  return `VULNSCAN-TEMPLATE-${id.toUpperCase().replace(/_/g, '-')}`
}

export interface PortRunnerOptions {
  /** Run intrusive templates too (the scan's `options.intrusive`). */
  intrusive: boolean
  /** Budget of all templates on one port (default 8 s). */
  timeoutMs?: number
  /** Templates at once on one port (default 4). */
  concurrency?: number
}

/** The engine's `templates` hook for a loaded set (undefined when the set is empty: nothing to run). */
export function templatePortRunner (templates: readonly LoadedTemplate[], opts: PortRunnerOptions): ((target: CheckTarget) => Promise<PortChecks>) | undefined {
  if (templates.length === 0) return undefined
  return async (target) => {
    const r = await runTemplates({
      host: target.host,
      port: target.port,
      service: target.service.service,
      secure: isTlsFirst(target.service),
      signal: target.signal,
      intrusive: opts.intrusive,
      timeoutMs: opts.timeoutMs,
      concurrency: opts.concurrency
    }, templates)
    return { exposures: r.hits.map((h: TemplateHit) => ({ check: h.id, evidence: h.evidence, template: h })), concluded: r.concluded }
  }
}
