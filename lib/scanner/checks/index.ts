// Exposure checks, run after service detection on each open port whose service one of them applies to. Each
// check is one bounded exchange (or a few) on a fresh connection: it proves or rules out one entry of the
// catalogue (./catalogue.ts) and says so with the evidence it saw. A check that could not reach a conclusion
// (no answer, the connection refused, the budget spent) says that too, so that the worker leaves an earlier
// finding of it standing rather than marking it fixed.

import { Conn } from '../conn'
import { openTls } from '../tls'
import type { ServiceInfo } from '../../domain/services'
import type { CheckSession, CheckTarget, PortCheck, PortChecks } from './session'
import { ACCESS_CHECKS } from './access'
import { DEFAULT_LOGIN_CHECKS } from './default-login'
import { LEGACY_PORT_CHECKS } from './legacy'
import { TRANSPORT_CHECKS } from './transport'

export { evidenceOf } from './session'
export type { CheckResult, CheckSession, CheckTarget, Exposure, PortCheck, PortChecks } from './session'

export const PORT_CHECKS: readonly PortCheck[] = [...ACCESS_CHECKS, ...TRANSPORT_CHECKS, ...LEGACY_PORT_CHECKS, ...DEFAULT_LOGIN_CHECKS]

const DEFAULT_BUDGET_MS = 6000
const REPLY_MS = 3000
const CONNECT_MS = 2000

/** Whether the service runs inside TLS from its first byte (detection reports STARTTLS upgrades in extraInfo). */
export function isTlsFirst (service: ServiceInfo): boolean {
  return service.tls !== undefined && !/\bSTARTTLS\b/.test(service.extraInfo ?? '')
}

/** The checks that apply to a detected service. */
export function checksFor (service: ServiceInfo, checks: readonly PortCheck[] = PORT_CHECKS, intrusive = false): PortCheck[] {
  const secure = isTlsFirst(service)
  return checks.filter((c) => (intrusive || c.intrusive !== true) && c.applies(service, secure))
}

/**
 * Run every check that applies to the port's service, side by side, within the budget. Never throws: a check
 * that fails or times out leaves the port unconcluded.
 */
export async function runChecks (target: CheckTarget, checks: readonly PortCheck[] = PORT_CHECKS): Promise<PortChecks> {
  const todo = checksFor(target.service, checks, target.intrusive === true)
  if (todo.length === 0) return { exposures: [], concluded: true }
  const ac = new AbortController()
  const budget = target.timeoutMs ?? DEFAULT_BUDGET_MS
  const deadline = Date.now() + budget
  const onAbort = (): void => ac.abort()
  if (target.signal?.aborted === true) return { exposures: [], concluded: false }
  target.signal?.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(onAbort, budget)
  const conns = new Set<{ close: () => void }>()
  const remaining = (cap: number): number => Math.max(0, Math.min(cap, deadline - Date.now()))
  const secure = isTlsFirst(target.service)
  const session: CheckSession = {
    host: target.host,
    port: target.port,
    service: target.service,
    hostnames: target.hostnames,
    signal: ac.signal,
    secure,
    wait: () => remaining(REPLY_MS),
    open: async () => {
      if (secure) {
        const wrapped = await openTls({ host: target.host, port: target.port, timeoutMs: remaining(CONNECT_MS + REPLY_MS), signal: ac.signal })
        if (wrapped === null) return null
        const c = new Conn(wrapped.socket, ac.signal)
        conns.add(c)
        return c
      }
      const c = await Conn.open(target.host, target.port, remaining(CONNECT_MS), ac.signal)
      if (c !== null) conns.add(c)
      return c
    }
  }
  try {
    const results = await Promise.all(todo.map(async (c) => await c.run(session).catch(() => null)))
    const exposures = results.flatMap((r) => r ?? [])
    // A check that ran out of time may have returned before the abort reached its reads: its "nothing" is no verdict.
    const concluded = results.every((r) => r !== null) && !ac.signal.aborted
    return { exposures, concluded }
  } finally {
    clearTimeout(timer)
    target.signal?.removeEventListener('abort', onAbort)
    ac.abort()
    for (const c of conns) c.close()
  }
}
