// Every `npm run` script answers --help (and -h) with its usage on stdout and exit 0, before it opens a store or
// reads a file: `npm run nvd:import -- --help` used to open a file named `--help`.

/** True when the command line asks for help; prints `usage` then. */
export function askedForHelp (usage: string, argv: readonly string[] = process.argv.slice(2)): boolean {
  if (!argv.some((a) => a === '--help' || a === '-h')) return false
  process.stdout.write(usage.endsWith('\n') ? usage : `${usage}\n`)
  return true
}
