import { test } from 'tap'
import { buildInfoMsg, decodeBson, encodeBson, isMasterQuery, parse, parseBuildInfo, replyDocument, supportsOpMsg } from '../../../../lib/scanner/probes/mongodb'

// BSON as mongod writes it: ok is a double, localTime a UTC datetime, flags booleans.
type V = number | string | boolean | Date | { int: number }
function bson (doc: Record<string, V>): Buffer {
  const parts: Buffer[] = []
  for (const [k, v] of Object.entries(doc)) {
    const key = Buffer.from(k + '\0')
    if (typeof v === 'number') { const b = Buffer.alloc(8); b.writeDoubleLE(v); parts.push(Buffer.from([1]), key, b) }
    else if (typeof v === 'string') { const s = Buffer.from(v + '\0'); const l = Buffer.alloc(4); l.writeInt32LE(s.length); parts.push(Buffer.from([2]), key, l, s) }
    else if (typeof v === 'boolean') parts.push(Buffer.from([8]), key, Buffer.from([v ? 1 : 0]))
    else if (v instanceof Date) { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(v.getTime())); parts.push(Buffer.from([9]), key, b) }
    else { const b = Buffer.alloc(4); b.writeInt32LE(v.int); parts.push(Buffer.from([0x10]), key, b) }
  }
  const body = Buffer.concat(parts)
  const out = Buffer.alloc(body.length + 5)
  out.writeInt32LE(out.length)
  body.copy(out, 4)
  return out
}

function opReply (doc: Buffer): Buffer {
  const h = Buffer.alloc(36)
  h.writeInt32LE(36 + doc.length, 0); h.writeInt32LE(7, 4); h.writeInt32LE(1, 8); h.writeInt32LE(1, 12)
  h.writeInt32LE(8, 16); h.writeInt32LE(1, 32)
  return Buffer.concat([h, doc])
}

function opMsg (doc: Buffer): Buffer {
  const h = Buffer.alloc(21)
  h.writeInt32LE(21 + doc.length, 0); h.writeInt32LE(8, 4); h.writeInt32LE(2, 8); h.writeInt32LE(2013, 12)
  return Buffer.concat([h, doc])
}

const isMaster = bson({
  ismaster: true, topologyVersion: 'x', maxBsonObjectSize: { int: 16777216 }, maxMessageSizeBytes: { int: 48000000 },
  maxWriteBatchSize: { int: 100000 }, localTime: new Date('2026-11-22T10:00:00Z'), logicalSessionTimeoutMinutes: { int: 30 },
  connectionId: { int: 5 }, minWireVersion: { int: 0 }, maxWireVersion: { int: 21 }, readOnly: false, ok: 1
})

test('probe messages: OP_QUERY isMaster and OP_MSG buildInfo', async (t) => {
  const q = isMasterQuery()
  t.equal(q.readInt32LE(0), q.length)
  t.equal(q.readInt32LE(12), 2004)
  t.ok(q.includes(Buffer.from('admin.$cmd\0')))
  const m = buildInfoMsg()
  t.equal(m.readInt32LE(12), 2013)
  t.same(decodeBson(m.subarray(21)), { buildInfo: 1, $db: 'admin' })
  t.same(decodeBson(encodeBson({ a: 'b', n: 3, t: true })), { a: 'b', n: 3, t: true })
})

test('isMaster reply: MongoDB, version bounded by the wire version', async (t) => {
  const reply = opReply(isMaster)
  t.same(parse(reply), { service: 'mongodb', product: 'MongoDB', extraInfo: 'version 7.0 or later (wire version 21)' })
  t.ok(supportsOpMsg(reply))
})

test('buildInfo gives the exact version; an auth error gives none', async (t) => {
  const build = opMsg(bson({ version: '7.0.2', gitVersion: '02b3c655e1302209ef046da6ba3ef6749dd0b62a', ok: 1 }))
  t.same(parseBuildInfo(build), { service: 'mongodb', product: 'MongoDB', version: '7.0.2', extraInfo: 'git 02b3c655e130' })
  const denied = opMsg(bson({ ok: 0, errmsg: 'command buildInfo requires authentication', code: { int: 13 }, codeName: 'Unauthorized' }))
  t.equal(parseBuildInfo(denied), null)
  t.same(parse(denied), { service: 'mongodb', product: 'MongoDB', extraInfo: 'command buildInfo requires authentication' })
})

test('truncated, oversized and garbage replies', async (t) => {
  const reply = opReply(isMaster)
  t.equal(parse(reply.subarray(0, reply.length - 10)), null)
  t.equal(replyDocument(Buffer.from('HTTP/1.0 200 OK\r\n\r\n')), null)
  const corrupt = Buffer.from(reply)
  corrupt.writeInt32LE(9999, 36)
  t.equal(parse(corrupt), null, 'inner document length beyond the message')
  t.throws(() => decodeBson(Buffer.from([8, 0, 0, 0, 0x42, 0x61, 0, 0])), RangeError)
})
