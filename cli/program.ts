// The commander program: global options, one module per command (cli/commands), the overview `vulnscan --help`
// prints, and commander's own errors turned into usage errors (exit 2) worded like every other message.
import { Command, CommanderError, Help, Option } from 'commander'
import { version } from '../package.json'
import { COMMANDS } from './commands'
import { CliError, createContext, EXIT, usage, type Context, type Io } from './context'
import { gateOptions } from './gate'
import type { CommandKit } from './command'

export const EXIT_TEXT = 'Exit status: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error, 130 interrupted (a followed scan goes on).'

export interface Built {
  program: Command
  /** The exit status the action recorded (undefined when none ran, e.g. for --help). */
  exitCode: () => number | undefined
}

/** An option line of the overview: the flags padded to a column, the description wrapped beside it. */
function item (helper: Help, indent: number, width: number, term: string, description: string): string[] {
  const total = helper.helpWidth ?? 80
  // A term longer than its column pushes the description right, as long as 40 columns (what commander wraps to) are left.
  const column = Math.max(indent + width, indent + term.length + 2)
  if (total - column < 40) {
    const under = indent + width
    const text = helper.boxWrap(description, Math.max(40, total - under)).split('\n')
    return [`${' '.repeat(indent)}${term}`, ...text.map((l) => ' '.repeat(under) + l)]
  }
  const text = helper.boxWrap(description, total - column).split('\n')
  return [`${' '.repeat(indent)}${term.padEnd(column - indent)}${text[0]}`, ...text.slice(1).map((l) => ' '.repeat(column) + l)]
}

function argumentsText (cmd: Command): string {
  return cmd.registeredArguments.map((a) => {
    const name = `${a.name()}${a.variadic ? '…' : ''}`
    return a.required ? `<${name}>` : `[${name}]`
  }).join(' ')
}

/**
 * Options several commands share (the CI gate), described once in the overview rather than under each command.
 * Known by flag and description: `webhook create --min-confidence` is a filter of its own, not the gate's.
 */
const SHARED = new Map(gateOptions().map((o) => [o.long, o.description]))

/** `vulnscan --help`: every command with its options, then the shared options and those every command takes. */
function overview (program: Command, helper: Help): string {
  // Wrapped to the terminal (80 columns when it does not say): long descriptions continue under themselves.
  const wide = Object.assign(Object.create(helper) as Help, { helpWidth: Math.max(80, helper.helpWidth ?? 80) })
  const width = wide.helpWidth ?? 80
  const out = ['Usage: vulnscan <command> [options]', '', wide.boxWrap(program.description(), width), '', 'Commands:']
  const shared = new Map<string, { option: Option, where: string[] }>()
  const visit = (cmd: Command, prefix: string): void => {
    for (const sub of cmd.commands) {
      if ((sub as unknown as { _hidden?: boolean })._hidden === true) continue
      const isDefault = (cmd as unknown as { _defaultCommandName?: string })._defaultCommandName === sub.name()
      if (sub.commands.length > 0) {
        visit(sub, `${prefix}${sub.name()} `)
        continue
      }
      const name = `${prefix}${isDefault ? '' : `${sub.name()} `}`.trim()
      out.push(...item(wide, 2, 26, `${name} ${argumentsText(sub)}`.trim(), sub.summary() || sub.description()))
      for (const opt of wide.visibleOptions(sub)) {
        if (opt.long === '--help') continue
        if (opt.long !== undefined && SHARED.get(opt.long) === opt.description) {
          const entry = shared.get(opt.long) ?? { option: opt, where: [] }
          entry.where.push(name)
          shared.set(opt.long, entry)
          continue
        }
        out.push(...item(wide, 4, 24, opt.flags, wide.optionDescription(opt)))
      }
    }
  }
  visit(program, '')
  if (shared.size > 0) out.push('', `The CI gate (${[...shared.values()][0].where.join(', ')}):`)
  for (const { option } of shared.values()) out.push(...item(wide, 2, 26, option.flags, wide.optionDescription(option)))
  out.push('', 'Options for every command:')
  for (const opt of wide.visibleOptions(program)) out.push(...item(wide, 2, 26, opt.flags, wide.optionDescription(opt)))
  out.push('', wide.boxWrap('Run \'vulnscan <command> --help\' for one command\'s help. The options for every command go before or after it.', width), '', wide.boxWrap(EXIT_TEXT, width), '')
  return out.join('\n')
}

function allCommands (cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(allCommands)]
}

function path (cmd: Command): string {
  const names: string[] = []
  for (let c: Command | null = cmd; c !== null && c.parent !== null; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/** Commander's message ("error: unknown option '--x'\n(Did you mean --y?)") as a sentence of ours. */
function sentence (err: CommanderError): string {
  const text = err.message.replace(/^error: /, '')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

export function buildProgram (io: Io): Built {
  let exitCode: number | undefined
  const hints = new WeakMap<Command, string>()
  const kit: CommandKit = {
    io,
    run: async (command, body, options) => {
      exitCode = await body(createContext(command, io, options))
    },
    hint: (command, message) => {
      hints.set(command, message)
      return command
    }
  }

  const program = new Command('vulnscan')
    .description('The command-line client of the vulnscan REST API: post and follow scans, list hosts and findings, decide on findings, schedule scans, manage webhooks and keys.')
    .usage('<command> [options]')
    .version(version, '-V, --version', 'print the client\'s version')
    .helpOption('-h, --help', 'show help (for one command: vulnscan <command> --help)')
    .addOption(new Option('--url <url>', 'service URL (default: $VULNSCAN_URL, else http://127.0.0.1:3000)'))
    .addOption(new Option('--key <key>', 'API key (default: $VULNSCAN_API_KEY)'))
    .addOption(new Option('--json', 'print the API\'s JSON instead of tables'))
    .addOption(new Option('--wide', 'print every table column, however wide (tables otherwise fit the terminal, dropping the least useful columns first)'))
    .addOption(new Option('--request-timeout <seconds>', 'give up on a request the server does not answer (default: 60)'))
    .showSuggestionAfterError(true)
    // Inherited by the commands defined below: their help lists the global options too.
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // Errors are reported once, by main, with the exit status; commander's own copy would repeat them.
      writeErr: () => {},
      outputError: () => {}
    })
  for (const register of COMMANDS) register(program, kit)
  // Set after the commands are defined, so only the program's own help is the overview.
  program.configureHelp({ showGlobalOptions: true, formatHelp: (cmd, h) => cmd === program ? overview(program, h) : Help.prototype.formatHelp.call(h, cmd, h) })

  const known = new Set(allCommands(program).flatMap((c) => c.options.map((o) => o.long)))
  for (const cmd of allCommands(program)) {
    cmd.exitOverride((err) => {
      if (err.exitCode === 0) throw err
      const where = path(cmd)
      switch (err.code) {
        case 'commander.help':
          // A command with subcommands, given none.
          throw usage(hints.get(cmd) ?? (cmd === program ? 'No command given.' : `${where} needs one of: ${cmd.commands.map((c) => c.name()).join(', ')}.`))
        case 'commander.missingArgument':
          throw usage(hints.get(cmd) ?? sentence(err))
        case 'commander.unknownOption': {
          const flag = /'([^']+)'/.exec(err.message)?.[1]?.replace(/=.*$/, '')
          if (flag !== undefined && known.has(flag) && cmd !== program) throw usage(`'${where}' does not take ${flag}.`)
          if (flag !== undefined && known.has(flag)) throw usage(`${flag} goes after the command it belongs to, e.g. vulnscan vulns ${flag} …`)
          throw usage(sentence(err))
        }
        default:
          throw usage(sentence(err))
      }
    })
  }
  return { program, exitCode: () => exitCode }
}

/** Parses `argv` (the arguments after `vulnscan`) and runs the command; resolves with the exit status. */
export async function runProgram (argv: string[], io: Io): Promise<number> {
  const { program, exitCode } = buildProgram(io)
  try {
    await program.parseAsync(argv, { from: 'user' })
  } catch (err) {
    if (err instanceof CommanderError && err.exitCode === 0) return EXIT.OK
    throw err
  }
  const code = exitCode()
  if (code === undefined) throw new CliError('No command ran.', EXIT.USAGE)
  return code
}

/** The overview `vulnscan --help` prints. */
export function overviewText (): string {
  const { program } = buildProgram({ stdout: process.stdout, stderr: process.stderr, env: {} })
  return program.helpInformation()
}
