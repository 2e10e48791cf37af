// The timeout a long test file asks tap for. A file's t.setTimeout replaces the runner's --timeout for it, so a file
// that needs longer than the suite's default must not shorten what the command line gives: it takes the longer of
// its own estimate and `tap --timeout` (TAP_TIMEOUT, which the runner passes down), and none when that is 0.
export function fileTimeout (ownMs: number, env: Record<string, string | undefined> = process.env): number {
  const given = env.TAP_TIMEOUT
  if (given === '0') return 0
  const fromCommandLine = given === undefined || !Number.isFinite(Number(given)) ? 0 : Number(given) * 1000
  return Math.max(ownMs, fromCommandLine)
}
