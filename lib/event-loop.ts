// Long work in the API process (reports, diffs) gives the event loop a turn now and then, so that other requests
// (/health first) are answered meanwhile instead of after it.

/** Resolves after the event loop has run its pending I/O: awaited between pieces of a long piece of work. */
export function turn (): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
