// Debian's own sshd (package openssh-server) started on a random loopback address for a test,
// with a throwaway host key and no PID file, so its real identification string can be probed.
// The configuration is the shared one (bench/support/daemon-specs.ts), which the detection lab runs too.

import { SSHD, sshd } from '../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../bench/support/debian-daemon'

export { SSHD }

export interface DebianSshd {
  host: string
  port: number
  /** The installed package version, as dpkg reports it. */
  packageVersion: string
  stop: () => Promise<void>
}

/**
 * Why the sshd tests cannot run here, or false when they can. Under CI a missing sshd is a
 * failure of the machine setup, not a reason to skip.
 */
export function sshdUnavailable (): string | false {
  return daemonUnavailable(SSHD, 'openssh-server')
}

export async function startDebianSshd (): Promise<DebianSshd> {
  return await startDaemon(sshd())
}
