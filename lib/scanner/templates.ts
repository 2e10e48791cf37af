// Scan templates: which ports, how much service detection, whether findings go to the NVD matcher, whether the
// exposure checks run (discovery runs none: it neither identifies services nor logs in anywhere).

import { allPorts, parsePortList, TOP_100, TOP_1000, withExtras } from './ports'
import type { Template } from './types'
import { TEMPLATE_NAMES, type TemplateName } from '../vocabulary'

const QUICK_PORTS = Object.freeze(withExtras(TOP_100))
const STANDARD_PORTS = Object.freeze(withExtras(TOP_1000))

// Port arrays are frozen and shared: callers that need their own list copy it (getTemplate does).
export const TEMPLATES: Readonly<Record<TemplateName, Readonly<Template>>> = Object.freeze({
  quick: Object.freeze({ name: 'quick', ports: QUICK_PORTS as number[], detection: 'light', nvd: true, checks: true }),
  standard: Object.freeze({ name: 'standard', ports: STANDARD_PORTS as number[], detection: 'full', nvd: true, checks: true }),
  full: Object.freeze({ name: 'full', ports: Object.freeze(allPorts()) as number[], detection: 'full', nvd: true, checks: true }),
  discovery: Object.freeze({ name: 'discovery', ports: QUICK_PORTS as number[], detection: 'none', nvd: false, checks: false })
})

export { TEMPLATE_NAMES }

export function isTemplateName (name: string): name is TemplateName {
  return Object.prototype.hasOwnProperty.call(TEMPLATES, name)
}

/**
 * The named template, with its port list replaced when `portsOverride` is given (a spec such as
 * "22,80,8000-8100" or a list of numbers). Throws an Error for an unknown name or a bad port list.
 */
export function getTemplate (name: string, portsOverride?: string | number[]): Template {
  if (!isTemplateName(name)) {
    throw new Error(`unknown template '${name}' (known: ${TEMPLATE_NAMES.join(', ')})`)
  }
  const t = TEMPLATES[name]
  let ports: number[]
  if (portsOverride === undefined) ports = [...t.ports]
  else if (typeof portsOverride === 'string') ports = parsePortList(portsOverride)
  else ports = parsePortList(portsOverride.join(','))
  return { name: t.name, ports, detection: t.detection, nvd: t.nvd, checks: t.checks }
}
