// Checks of services that let anyone in: each asks the one question a server answers only when it demands no
// credentials, and reads the answer exactly. Every exchange is read-only (an INFO, a statistics dump, a list of
// names, a login that is ended at once); none writes.

import type { Conn } from '../conn'
import { lines } from '../probes/common'
import * as http from '../probes/http'
import * as mongodb from '../probes/mongodb'
import * as mqtt from '../probes/mqtt'
import * as postgresql from '../probes/postgresql'
import * as redis from '../probes/redis'
import { evidenceOf, withConn, type CheckResult, type CheckSession, type PortCheck } from './session'
import { ldapAnonymousRead } from './ldap'
import { zookeeperAnonymousRead } from './zookeeper'

/** Send, then read until `done`: the reply, or null when nothing came (a timeout is no verdict). */
async function ask (c: Conn, s: CheckSession, send: Buffer | null, done: (r: Buffer) => boolean): Promise<Buffer | null> {
  if (send !== null) c.write(send)
  const reply = await c.read(done, s.wait())
  return reply.length > 0 ? reply : null
}

const exposed = (check: string, evidence: string): CheckResult => [{ check, evidence: evidenceOf(evidence) }]

const redisNoAuth: PortCheck = {
  ids: ['VULNSCAN-REDIS-NOAUTH'],
  applies: (svc) => svc.service === 'redis',
  run: async (s) => await withConn(s, async (c) => {
    const reply = await ask(c, s, redis.request, redis.complete)
    if (reply === null) return null
    const text = reply.toString('latin1')
    if (text.startsWith('$') && /\r\nredis_version:/.test(text)) {
      const version = /redis_version:(\S+)/.exec(text)?.[1] ?? ''
      return exposed('VULNSCAN-REDIS-NOAUTH', `INFO server answered without AUTH (redis_version:${version})`)
    }
    return []
  })
}

const memcachedNoAuth: PortCheck = {
  ids: ['VULNSCAN-MEMCACHED-NOAUTH'],
  applies: (svc) => svc.service === 'memcached',
  run: async (s) => await withConn(s, async (c) => {
    const reply = await ask(c, s, Buffer.from('stats\r\n'), (r) => /(^|\n)(END|ERROR|CLIENT_ERROR[^\n]*|SERVER_ERROR[^\n]*)\r?\n$/.test(r.toString('latin1')))
    // memcached with SASL drops a text-protocol client without a word: a refusal, not a silence.
    if (reply === null) return c.closed ? [] : null
    const stats = lines(reply).filter((l) => l.startsWith('STAT '))
    if (stats.length === 0) return []
    const keep = stats.filter((l) => /^STAT (pid|version|curr_items|curr_connections) /.test(l))
    return exposed('VULNSCAN-MEMCACHED-NOAUTH', `stats answered without authentication: ${keep.join('; ')}`)
  })
}

/** OP_MSG `{listDatabases: 1, nameOnly: true, $db: 'admin'}`: names only, nothing else read. */
export function listDatabasesMsg (requestId = 3): Buffer {
  const doc = mongodb.encodeBson({ listDatabases: 1, nameOnly: true, $db: 'admin' })
  const body = Buffer.concat([Buffer.alloc(4), Buffer.from([0]), doc])
  const h = Buffer.alloc(16)
  h.writeInt32LE(16 + body.length, 0)
  h.writeInt32LE(requestId, 4)
  h.writeInt32LE(0, 8)
  h.writeInt32LE(2013, 12)
  return Buffer.concat([h, body])
}

/** The database names of a listDatabases reply, or null when it was refused (`ok: 0`, unauthorized). */
export function parseListDatabases (reply: Buffer): string[] | null {
  const doc = mongodb.replyDocument(reply)
  if (doc === null || doc.ok !== 1 || !Array.isArray(doc.databases)) return null
  return (doc.databases as unknown[]).flatMap((d) => typeof d === 'object' && d !== null && typeof (d as { name?: unknown }).name === 'string' ? [(d as { name: string }).name] : [])
}

const mongodbNoAuth: PortCheck = {
  ids: ['VULNSCAN-MONGODB-NOAUTH'],
  applies: (svc) => svc.service === 'mongodb',
  run: async (s) => await withConn(s, async (c) => {
    const reply = await ask(c, s, listDatabasesMsg(), mongodb.complete)
    if (reply === null) return null
    const names = parseListDatabases(reply)
    if (names === null) return mongodb.replyDocument(reply) === null ? null : []
    return exposed('VULNSCAN-MONGODB-NOAUTH', `listDatabases answered without credentials: ${names.slice(0, 10).join(', ')}`)
  })
}

const zookeeperNoAuth: PortCheck = {
  ids: ['VULNSCAN-ZOOKEEPER-NOAUTH'],
  applies: (svc) => svc.service === 'zookeeper',
  run: async (s) => await withConn(s, async (c) => {
    const r = await zookeeperAnonymousRead(c, s.wait)
    if (r === null) return null
    if ('refused' in r) return []
    return exposed('VULNSCAN-ZOOKEEPER-NOAUTH', `a session without credentials listed the root znode: ${r.children.slice(0, 10).join(', ')}`)
  })
}

const postgresqlTrust: PortCheck = {
  ids: ['VULNSCAN-POSTGRESQL-TRUST'],
  applies: (svc) => svc.service === 'postgresql',
  run: async (s) => await withConn(s, async (c) => {
    const reply = await ask(c, s, postgresql.startupMessage(postgresql.STARTUP_USER), postgresql.complete)
    if (reply === null) return null
    const first = postgresql.messages(reply)[0]
    if (first === undefined) return null
    if (first.type === 'R' && first.body.length >= 4 && first.body.readInt32BE(0) === 0) {
      c.write(postgresql.terminate)
      return exposed('VULNSCAN-POSTGRESQL-TRUST', `startup for user ${postgresql.STARTUP_USER} without a password answered AuthenticationOk`)
    }
    return first.type === 'R' || first.type === 'E' ? [] : null
  })
}

const mqttAnonymous: PortCheck = {
  ids: ['VULNSCAN-MQTT-ANONYMOUS'],
  applies: (svc) => svc.service === 'mqtt' || svc.service === 'mqtts',
  run: async (s) => await withConn(s, async (c) => {
    const reply = await ask(c, s, mqtt.connectPacket('vulnscan-check'), mqtt.completeConnack)
    if (reply === null) return c.closed ? [] : null
    const ack = mqtt.parseConnack(reply)
    if (ack === null) return null
    if (!ack.accepted) return []
    c.write(mqtt.disconnect)
    return exposed('VULNSCAN-MQTT-ANONYMOUS', 'CONNECT without user name or password answered CONNACK 0 (connection accepted)')
  })
}

const ftpAnonymous: PortCheck = {
  ids: ['VULNSCAN-FTP-ANONYMOUS'],
  applies: (svc) => svc.service === 'ftp',
  run: async (s) => await withConn(s, async (c) => {
    const lastLine = (r: Buffer): string | undefined => lines(r).filter((l) => /^\d{3}(?: |$)/.test(l)).pop()
    const done = (r: Buffer): boolean => lastLine(r) !== undefined
    const greeting = await ask(c, s, null, done)
    if (greeting === null || !/^220/.test(lastLine(greeting) ?? '')) return null
    const user = await ask(c, s, Buffer.from('USER anonymous\r\n'), done)
    if (user === null) return null
    let answer = lastLine(user) ?? ''
    if (answer.startsWith('331')) {
      const pass = await ask(c, s, Buffer.from('PASS anonymous@vulnscan.invalid\r\n'), done)
      if (pass === null) return null
      answer = lastLine(pass) ?? ''
    }
    if (!answer.startsWith('230')) return /^[45]\d\d/.test(answer) ? [] : null
    c.write(Buffer.from('QUIT\r\n'))
    return exposed('VULNSCAN-FTP-ANONYMOUS', `USER anonymous accepted: ${answer}`)
  })
}

const rsyncModules: PortCheck = {
  ids: ['VULNSCAN-RSYNC-OPEN-MODULES'],
  applies: (svc) => svc.service === 'rsync',
  run: async (s) => await withConn(s, async (c) => {
    const greeting = await ask(c, s, null, (r) => r.includes(0x0a))
    const m = greeting === null ? null : /^@RSYNCD: (\d+)(?:\.(\d+))?/.exec(greeting.toString('latin1'))
    if (m === null) return null
    // Protocol 30 (rsync 3.0), which every daemon since understands without a digest list (32 wants one), then
    // the module "" : the daemon lists its listable modules and ends.
    c.write(Buffer.from(`@RSYNCD: ${Math.min(30, Number(m[1]))}.0\n\n`))
    const reply = await ask(c, s, null, (r) => /@RSYNCD: EXIT\r?\n/.test(r.toString('latin1')) || /^@ERROR/m.test(r.toString('latin1')))
    if (reply === null) return c.closed ? [] : null
    const modules = lines(reply).filter((l) => l.length > 0 && !l.startsWith('@RSYNCD:') && !l.startsWith('@ERROR'))
    if (modules.length === 0) return []
    return exposed('VULNSCAN-RSYNC-OPEN-MODULES', `modules listed: ${modules.slice(0, 10).map((l) => l.split('\t')[0].trim()).join(', ')}`)
  })
}

const ldapAnonymous: PortCheck = {
  ids: ['VULNSCAN-LDAP-ANONYMOUS-READ'],
  applies: (svc) => svc.service === 'ldap' || svc.service === 'ldaps',
  run: async (s) => await withConn(s, async (c) => {
    const r = await ldapAnonymousRead(c, s.wait)
    if (r === null) return null
    if (r.entries === 0) return []
    return exposed('VULNSCAN-LDAP-ANONYMOUS-READ', `anonymous one-level search of ${r.base} returned entries: ${r.sample.join('; ')}`)
  })
}

/** One HTTP exchange on a fresh connection: the parsed response, or null when none came. */
async function httpAsk (s: CheckSession, method: string, path: string, body?: string): Promise<http.HttpResponse | null> {
  const c = await s.open()
  if (c === null) return null
  try {
    const h = s.host.includes(':') ? `[${s.host}]` : s.host
    const head = `${method} ${path} HTTP/1.1\r\nHost: ${h}:${s.port}\r\nUser-Agent: Mozilla/5.0 (compatible; vulnscan)\r\nAccept: application/json\r\nConnection: close\r\n` +
      (body !== undefined ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '') + '\r\n'
    c.write(Buffer.from(head + (body ?? ''), 'latin1'))
    const reply = await c.read(http.complete, s.wait())
    const res = http.parseResponse(reply)
    return res !== null && res.bodyComplete ? res : null
  } finally {
    c.close()
  }
}

function json (body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
}

const isHttp = (svc: { service: string }): boolean => svc.service === 'http' || svc.service === 'https'

const elasticsearchNoAuth: PortCheck = {
  ids: ['VULNSCAN-ELASTICSEARCH-NOAUTH'],
  applies: (svc) => isHttp(svc) && (svc.product === 'Elasticsearch' || svc.product === 'OpenSearch'),
  run: async (s) => {
    const res = await httpAsk(s, 'GET', '/')
    if (res === null) return null
    const d = json(res.body) as { cluster_name?: unknown, version?: { number?: unknown } } | undefined
    if (res.status === 200 && typeof d === 'object' && d !== null && typeof d.cluster_name === 'string') {
      return exposed('VULNSCAN-ELASTICSEARCH-NOAUTH', `GET / answered 200 without credentials: cluster ${d.cluster_name}, version ${String(d.version?.number ?? 'unknown')}`)
    }
    return []
  }
}

const couchdbNoAuth: PortCheck = {
  ids: ['VULNSCAN-COUCHDB-NOAUTH'],
  applies: (svc) => isHttp(svc) && svc.product === 'CouchDB',
  run: async (s) => {
    const res = await httpAsk(s, 'GET', '/_all_dbs')
    if (res === null) return null
    const d = json(res.body)
    if (res.status === 200 && Array.isArray(d)) {
      return exposed('VULNSCAN-COUCHDB-NOAUTH', `GET /_all_dbs answered 200 without credentials: ${d.length} database(s) (${d.slice(0, 10).map(String).join(', ')})`)
    }
    return []
  }
}

const etcdNoAuth: PortCheck = {
  ids: ['VULNSCAN-ETCD-NOAUTH'],
  applies: (svc) => isHttp(svc) && svc.product === 'etcd',
  run: async (s) => {
    // Every key from "\0" on, keys only, at most one: proves read access, reads no value.
    const res = await httpAsk(s, 'POST', '/v3/kv/range', JSON.stringify({ key: 'AA==', range_end: 'AA==', keys_only: true, limit: 1 }))
    if (res === null) return null
    const d = json(res.body) as { header?: { revision?: unknown }, count?: unknown } | undefined
    if (res.status === 200 && typeof d === 'object' && d !== null && d.header !== undefined) {
      return exposed('VULNSCAN-ETCD-NOAUTH', `POST /v3/kv/range (keys only) answered 200 without credentials: revision ${String(d.header.revision ?? '?')}, ${String(d.count ?? 0)} key(s)`)
    }
    return []
  }
}

const dockerNoAuth: PortCheck = {
  ids: ['VULNSCAN-DOCKER-API-NOAUTH'],
  applies: (svc) => isHttp(svc) && svc.product === 'Docker',
  run: async (s) => {
    const res = await httpAsk(s, 'GET', '/version')
    if (res === null) return null
    const d = json(res.body) as { ApiVersion?: unknown, Version?: unknown } | undefined
    if (res.status === 200 && typeof d === 'object' && d !== null && typeof d.ApiVersion === 'string') {
      return exposed('VULNSCAN-DOCKER-API-NOAUTH', `GET /version answered 200 without credentials: Docker ${String(d.Version ?? '')} API ${d.ApiVersion}`)
    }
    return []
  }
}

export const ACCESS_CHECKS: readonly PortCheck[] = [
  redisNoAuth, memcachedNoAuth, mongodbNoAuth, zookeeperNoAuth, postgresqlTrust, mqttAnonymous, ftpAnonymous, rsyncModules,
  ldapAnonymous, elasticsearchNoAuth, couchdbNoAuth, etcdNoAuth, dockerNoAuth
]

