// `vulnscan`, the command-line client of the REST API, built on the typed SDK (sdk/) and commander.
// Exit status: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error, 130 interrupted.
import { CliError, EXIT, type Io } from './context'
import { overviewText, runProgram } from './program'

export { CliError, EXIT, type Io } from './context'

/** What `vulnscan --help` prints: every command with its options, generated from the command definitions. */
export const USAGE = overviewText()

/** Runs the CLI on `argv` (the arguments after `vulnscan`); resolves with the exit status, or throws a CliError. */
export function run (argv: string[], io: Io): Promise<number> {
  return runProgram(argv, io)
}

/** The process entry: runs, prints a CliError's message, and sets the exit status. */
export async function main (argv: string[] = process.argv.slice(2)): Promise<void> {
  // `vulnscan report … | head`: the reader is gone, so nothing more can be said to it. Ending quietly is what a
  // pipeline expects (an unhandled EPIPE used to end the CLI with a stack trace).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw err
  })
  const io: Io = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    onInterrupt: (handler) => {
      // A second Ctrl-C ends the process whatever the first one is still waiting for.
      let seen = 0
      const onSigint = (): void => {
        if (++seen > 1) process.exit(EXIT.INTERRUPTED)
        handler()
      }
      process.on('SIGINT', onSigint)
      return () => { process.off('SIGINT', onSigint) }
    }
  }
  let code: number
  try {
    code = await run(argv, io)
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`vulnscan: ${err.message}\n`)
      code = err.exitCode
    } else {
      process.stderr.write(`vulnscan: unexpected error: ${(err as Error).stack ?? String(err)}\n`)
      code = EXIT.API
    }
  }
  process.exitCode = code
  // The command has said all it had to say: a connection left open by an aborted request (or a server that never
  // closes one) must not keep the process alive. Unreferenced, so a process with nothing left exits at once.
  setTimeout(() => process.exit(code), 2000).unref()
}
