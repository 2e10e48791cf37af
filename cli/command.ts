// What a command module is: a function that adds its command to the program, with the kit the program hands it.
// Apart from cli/program.ts, which imports every command module, so that none of them imports the program.
import type { Command } from 'commander'
import type { Context, Io } from './context'

/** What a command module gets to define its command. */
export interface CommandKit {
  io: Io
  /** Runs a command's body with the client and settings from the global options, and records its exit status. */
  run: (command: Command, body: (ctx: Context) => Promise<number>, options?: { needsKey?: boolean }) => Promise<void>
  /** The message for `command` given without its required argument or subcommand. */
  hint: (command: Command, message: string) => Command
}

/** A command module: adds its command (and any subcommands) to the program. */
export type CommandModule = (program: Command, kit: CommandKit) => void
