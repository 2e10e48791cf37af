// The progress line of a followed scan fits the terminal: at 80 columns the percentage, the state and the hosts
// stay whole and a long scan id is shortened; with room, the full id, a bar and the ports.
import { test } from 'tap'
import { progressLine, shortenId, terminalColumns } from '../../cli/progress'

const UUID = '3f6c2a9e-8d41-4b7a-9c55-0e2f1d7b8a64'
const running = { status: 'running', percent: 42.7, hostsDone: 113, hostsTotal: 256, portsDone: 11300, portsTotal: 25600 }

test('at 80 columns: percentage, state and hosts kept, a long id shortened', async (t) => {
  const line = progressLine(UUID, running, 80)
  t.ok(line.length <= 79, `fits in 79 columns (the 80th would wrap on some terminals): ${line.length}`)
  t.match(line, / 42% \| running \| hosts 113\/256/)
  t.match(line, /^3f6c2a9e/, 'the id begins the line')
  t.match(line, /…/, 'shortened, the cut marked')
  t.notMatch(line, UUID, 'not in full')

  const long = progressLine('nightly-'.repeat(12), { ...running, status: 'completed', percent: 100, hostsDone: 256, portsDone: 25600 }, 80)
  t.ok(long.length <= 79)
  t.match(long, /100% \| completed \| hosts 256\/256/)
})

test('with room: the full id, a bar and the ports', async (t) => {
  const line = progressLine(UUID, running, 160)
  t.ok(line.length <= 159)
  t.match(line, new RegExp(`^${UUID} \\[█+░+\\]  42% \\| running \\| hosts 113/256 \\| ports 11300/25600$`))
  const short = progressLine('cli-wait', { ...running, percent: 100, status: 'completed' }, 80)
  t.match(short, /^cli-wait \[█+\] 100% \| completed \| hosts 113\/256 \| ports 11300\/25600$/, 'a short id fits whole at 80 columns')
})

test('narrower still: the bar, then the ports go; the core never does', async (t) => {
  for (const columns of [60, 50, 40, 30]) {
    const line = progressLine(UUID, running, columns)
    t.ok(line.length <= columns - 1, `${columns} columns: ${JSON.stringify(line)}`)
    t.match(line, /42% \| running \| hosts 113\/256/)
  }
  t.notMatch(progressLine(UUID, running, 50), /\[/, 'no bar at 50 columns')
  t.notMatch(progressLine(UUID, running, 40), /ports/, 'no ports at 40 columns')
})

test('shortenId and terminalColumns', async (t) => {
  t.equal(shortenId('abc', 8), 'abc')
  t.equal(shortenId('abcdefghijkl', 8), 'abcdefg…')
  t.equal(terminalColumns({ columns: 132 }, { COLUMNS: '80' }), 132, 'the terminal\'s own width first')
  t.equal(terminalColumns({ columns: 0 }, { COLUMNS: '80' }), 80, 'then $COLUMNS')
  t.equal(terminalColumns({}, {}), 80, 'else 80')
})
