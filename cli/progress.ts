// The one-line progress of a followed scan, fitted to the terminal: the percentage, the state and the hosts are
// always kept; the bar narrows, then the ports go, and a long scan id is shortened before any of those.

export interface ProgressState {
  status: string
  percent: number
  hostsDone: number
  hostsTotal: number | string
  portsDone: number
  portsTotal: number | string
}

const BAR_MIN = 10
const BAR_MAX = 40
const ID_MIN = 8

/** `id` cut to `width` characters, the cut marked with an ellipsis. */
export function shortenId (id: string, width: number): string {
  if (id.length <= width) return id
  return `${id.slice(0, Math.max(1, width - 1))}…`
}

function bar (percent: number, width: number): string {
  const full = Math.round((Math.max(0, Math.min(100, percent)) / 100) * width)
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}]`
}

/**
 * The line for `columns` terminal columns. It uses at most `columns - 1` of them: writing the last column
 * makes some terminals wrap, and a wrapped line is not redrawn in place.
 */
export function progressLine (id: string, p: ProgressState, columns: number): string {
  const budget = columns - 1
  const core = `${String(Math.floor(p.percent)).padStart(3)}% | ${p.status} | hosts ${p.hostsDone}/${p.hostsTotal}`
  const ports = ` | ports ${p.portsDone}/${p.portsTotal}`

  // The full id with a bar and the ports, the bar as wide as the room allows.
  const room = budget - id.length - core.length - ports.length - 4
  if (room >= BAR_MIN) return `${id} ${bar(p.percent, Math.min(BAR_MAX, room))} ${core}${ports}`
  // A shortened id, keeping the smallest bar and the ports.
  const idRoom = budget - core.length - ports.length - BAR_MIN - 4
  if (idRoom >= ID_MIN) return `${shortenId(id, idRoom)} ${bar(p.percent, BAR_MIN)} ${core}${ports}`
  // No bar; then no ports: the percentage says as much, and the state and hosts are what a person looks for.
  for (const tail of [ports, '']) {
    const left = budget - core.length - tail.length - 1
    if (left >= Math.min(ID_MIN, id.length)) return `${shortenId(id, left)} ${core}${tail}`
  }
  // Too narrow for any id: the core alone, which is never cut (a wrapped line beats a lost host count).
  return core.trimStart()
}

/** The terminal's width: the stream's own, else $COLUMNS, else 80. */
export function terminalColumns (stream: { columns?: number }, env: Record<string, string | undefined>): number {
  if (typeof stream.columns === 'number' && stream.columns > 0) return stream.columns
  const fromEnv = Number(env.COLUMNS)
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 80
}
