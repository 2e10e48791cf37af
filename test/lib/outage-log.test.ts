// OutageLog: one line when a dependency goes away and one when it answers again; a dependency that flaps is told
// once per quiet period, and an outage that starts inside it is told only if it lasts.
import { test } from 'tap'
import { OutageLog } from '../../lib/outage'

function recorder (): { lines: Array<{ msg: string, obj: Record<string, unknown> }>, log: { warn: (o: object, m: string) => void, info: (o: object, m: string) => void } } {
  const lines: Array<{ msg: string, obj: Record<string, unknown> }> = []
  const push = (obj: object, msg: string): void => { lines.push({ msg, obj: obj as Record<string, unknown> }) }
  return { lines, log: { warn: push, info: push } }
}

const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

test('a dependency that answers one query and fails the next is told once per quiet period, not once per flap', async (t) => {
  const { lines, log } = recorder()
  const outages = new OutageLog(log, 10_000)
  for (let i = 0; i < 200; i++) {
    outages.down('PostgreSQL', refused)
    outages.up('PostgreSQL')
  }
  t.same(lines.map((l) => l.msg), ['PostgreSQL unavailable', 'PostgreSQL available again'], 'the first outage and its end; the flaps after it are quiet')
  t.equal(lines[0]?.obj.reason, 'connection refused', 'the reason without an address')
  t.notOk(outages.isDown('PostgreSQL'), 'an outage ends at the first answer')
})

test('an outage that starts in the quiet period is told once it lasts, and its end with it', async (t) => {
  const { lines, log } = recorder()
  const outages = new OutageLog(log, 50)
  outages.down('Redis', refused)
  outages.up('Redis')
  outages.down('Redis', refused)
  t.equal(lines.length, 2, 'not yet: it may be a flap')
  t.ok(outages.isDown('Redis'), 'but it is down')
  await sleep(120)
  t.same(lines.map((l) => l.msg), ['Redis unavailable', 'Redis available again', 'Redis unavailable'], 'it lasted: told')
  outages.up('Redis')
  t.equal(lines[3]?.msg, 'Redis available again', 'and its end')
  await sleep(60)
  outages.down('Redis', refused)
  t.equal(lines[4]?.msg, 'Redis unavailable', 'after the quiet period a new outage is told at once')
})

test('dependencies are told apart', async (t) => {
  const { lines, log } = recorder()
  const outages = new OutageLog(log, 10_000)
  outages.up('Redis')
  t.equal(lines.length, 0, 'an answer with no outage says nothing')
  outages.down('Redis', refused)
  outages.down('PostgreSQL', refused)
  t.same(lines.map((l) => l.msg), ['Redis unavailable', 'PostgreSQL unavailable'])
  t.ok(outages.isDown('PostgreSQL'))
})
