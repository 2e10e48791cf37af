// A promise given a time limit: what stalls (a dependency that stopped answering) fails in bounded time instead.

/** `fn`'s answer, or a rejection with `message` once `ms` have passed without one. `fn` itself is not stopped. */
export async function withinMs<T> (fn: () => Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(message)), ms) })
  try {
    return await Promise.race([fn(), late])
  } finally {
    clearTimeout(timer)
  }
}
