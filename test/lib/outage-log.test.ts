// OutageLog: one line when a dependency goes away and one when it is back for good, however much it flaps between.
import { test } from 'tap'
import { OutageLog } from '../../lib/outage'

function recorder (): { lines: Array<{ msg: string, obj: Record<string, unknown> }>, log: { warn: (o: object, m: string) => void, info: (o: object, m: string) => void } } {
  const lines: Array<{ msg: string, obj: Record<string, unknown> }> = []
  const push = (obj: object, msg: string): void => { lines.push({ msg, obj: obj as Record<string, unknown> }) }
  return { lines, log: { warn: push, info: push } }
}

const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

test('a dependency that answers one query and fails the next is one outage, not one per flap', async (t) => {
  const { lines, log } = recorder()
  const outages = new OutageLog(log, 60)
  for (let i = 0; i < 50; i++) {
    outages.down('PostgreSQL', refused)
    outages.up('PostgreSQL')
    await sleep(2)
  }
  t.equal(lines.filter((l) => l.msg === 'PostgreSQL unavailable').length, 1, 'one line for the start')
  t.equal(lines.filter((l) => l.msg === 'PostgreSQL available again').length, 0, 'not back while it still fails')
  t.ok(outages.isDown('PostgreSQL'), 'still told as down while it settles')
  await sleep(150)
  const back = lines.filter((l) => l.msg === 'PostgreSQL available again')
  t.equal(back.length, 1, 'one line once it has answered for the settling time')
  t.equal(back[0]?.obj.failures, 50, 'with the failures it counted')
  t.notOk(outages.isDown('PostgreSQL'))
  t.equal(lines[0]?.obj.reason, 'connection refused', 'the reason without an address')
})

test('a new failure after the outage ended is a new outage; dependencies are told apart', async (t) => {
  const { lines, log } = recorder()
  const outages = new OutageLog(log, 20)
  outages.up('Redis')
  t.equal(lines.length, 0, 'an answer with no outage says nothing')
  outages.down('Redis', refused)
  outages.down('PostgreSQL', refused)
  outages.down('Redis', refused)
  outages.up('Redis')
  await sleep(80)
  outages.down('Redis', refused)
  t.same(lines.map((l) => l.msg), ['Redis unavailable', 'PostgreSQL unavailable', 'Redis available again', 'Redis unavailable'])
  t.ok(outages.isDown('PostgreSQL'))
})

test('with no settling time the first answer ends the outage', async (t) => {
  const { lines, log } = recorder()
  const outages = new OutageLog(log, 0)
  outages.down('Redis', refused)
  outages.up('Redis')
  t.same(lines.map((l) => l.msg), ['Redis unavailable', 'Redis available again'])
})
