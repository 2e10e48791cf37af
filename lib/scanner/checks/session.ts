// What an exposure check is handed and what it answers: shared by the runner (./index.ts) and the checks.

import type { Conn } from '../conn'
import type { ServiceInfo } from '../../domain/services'
import { printable } from '../probes/common'

/** One exposure a check proved: the catalogue id and what the server said. */
export interface Exposure {
  check: string
  evidence: string
}

export interface CheckTarget {
  host: string
  port: number
  service: ServiceInfo
  /** DNS names the scan was given for this address (the hostname check needs one). */
  hostnames: string[]
  signal?: AbortSignal
  /** The scan asked for the intrusive checks (default logins). */
  intrusive?: boolean
  /** Budget of every check on the port together (default 6 s). */
  timeoutMs?: number
}

/** What the checks of one port concluded. */
export interface PortChecks {
  exposures: Exposure[]
  /** Every applicable check reached a conclusion: what is not in `exposures` is not exposed. */
  concluded: boolean
}

/** What a check is handed: the port, its service, and connections bounded by the port's budget. */
export interface CheckSession {
  host: string
  port: number
  service: ServiceInfo
  hostnames: string[]
  signal: AbortSignal
  /** The service runs inside TLS from the first byte (not after STARTTLS): `open` gives TLS connections. */
  secure: boolean
  /** Milliseconds to wait for one reply, within the budget. */
  wait (): number
  /** A connection to the port (TLS when `secure`), closed by the runner at the end; null when refused. */
  open (): Promise<Conn | null>
}

/** A check's verdict: exposures found (empty: not exposed), or null when it could not tell. */
export type CheckResult = Exposure[] | null

export interface PortCheck {
  /** Catalogue ids the check can report. */
  ids: string[]
  /** Tries logins (default credentials): runs only when the scan asks for intrusive checks. */
  intrusive?: boolean
  applies (service: ServiceInfo, secure: boolean): boolean
  run (s: CheckSession): Promise<CheckResult>
}

/** Evidence text: printable, bounded. */
export function evidenceOf (reply: Buffer | string, max = 300): string {
  const text = typeof reply === 'string' ? reply : printable(reply, max)
  return text.length > max ? text.slice(0, max) + '…' : text
}

/** Open a connection, run `fn` on it, close it; null (no verdict) when the port refuses. */
export async function withConn (s: CheckSession, fn: (c: Conn) => Promise<CheckResult>): Promise<CheckResult> {
  const c = await s.open()
  if (c === null) return null
  try {
    return await fn(c)
  } finally {
    c.close()
  }
}
