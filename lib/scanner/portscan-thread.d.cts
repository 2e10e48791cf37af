/** Replaces the socket layer in tests: calls cb once (error code such as 'ECONNREFUSED', or null when
 * connected, with the local address and port); returns a function that abandons the attempt. */
export type ConnectFn = (
  address: string, port: number, family: number,
  cb: (code: string | null, localAddress?: string, localPort?: number) => void
) => () => void

export interface ConnectExecutor {
  setHosts (hosts: { address: string, family: number }[]): void
  start (id: number, hostIndex: number, port: number, timeoutMs: number): void
  abortHost (hostIndex: number): void
  retime (hostIndex: number, timeoutMs: number): void
  abortAll (): void
  readonly inflight: number
  readonly raw: boolean
  /** Attempts made on a refused socket connected again (tests). */
  readonly reused: number
}

export function createExecutor (
  report: (id: number, outcome: number, rttUs: number, localPort: number) => void,
  options?: { useRaw?: boolean, reuse?: boolean, connect?: ConnectFn }
): ConnectExecutor

export const rawAvailable: boolean

export const OUTCOME: {
  readonly OPEN: 0
  readonly CLOSED: 1
  readonly TIMEOUT: 2
  readonly UNREACH: 3
  readonly RESOURCE: 4
  readonly FILTERED: 5
  readonly SELF: 6
  readonly ABORTED: 7
}
