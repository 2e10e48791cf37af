// What a process that could not start says: a sentence an operator can act on, never a stack trace for a setting
// that is missing or a database that refuses the login (those used to end in one). A stack is kept for the
// failures nobody foresaw, where it is the only clue.

/** A start-up failure caused by the configuration or the environment, with a message that says what to do. */
export class StartupError extends Error {
  override readonly name = 'StartupError'
}

/** The text after "vulnscan failed to start: ". */
export function startupMessage (err: unknown): string {
  // A wrong or missing CREDENTIALS_KEY (lib/secrets.ts) is a setting too.
  if (err instanceof StartupError || (err as Error).name === 'SecretKeyError') return (err as Error).message
  return (err as Error).stack ?? String(err)
}
