import { test } from 'tap'
import { keySegment } from '../../../../lib/store/redis/key-segment'

test('keySegment is injective and leaves ordinary ids as they were', async (t) => {
  t.equal(keySegment('scan-1'), 'scan-1')
  t.equal(keySegment('0b7c2f7e-3c1d-4b0e-9a53-2f1f5d1a7e10'), '0b7c2f7e-3c1d-4b0e-9a53-2f1f5d1a7e10')
  const ids = ['a', 'a:state', 'a%3Astate', 'a%253Astate', ':', '%', '%3A', '%25', '::', 'x:y:z', 'x%3Ay:z']
  const keys = ids.map((id) => `p:scan:${keySegment(id)}:state`)
  t.equal(new Set(keys).size, ids.length, 'no two ids share a key')
  for (const id of ids) t.notOk(keySegment(id).includes(':'), `${id} holds no separator once encoded`)
})
