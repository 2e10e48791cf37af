// The words the API, the CLI and the code share, each written once: the schemas, the CLI's help and the
// queue read them from here, and a test holds the three together.

/** Scan priority: 5 is the most urgent, 1 the least. */
export const PRIORITY_MIN = 1
export const PRIORITY_MAX = 5
export const DEFAULT_PRIORITY = 3
