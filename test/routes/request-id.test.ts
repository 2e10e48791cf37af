// A client's X-Request-Id is kept only when short and plain; anything else is replaced by a generated id.
import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import app, { serverOptions } from '../../app'
import { loadConfig } from '../../lib/config'
import { SERVICE_KEY } from '../helper'

test('X-Request-Id: a bounded safe format or a generated id', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(chunk.toString()); cb() } })
  const config = loadConfig({ SERVICE_API_KEY: SERVICE_KEY, LOG_LEVEL: 'info' }, {})
  const fastify = Fastify({ ...serverOptions(config), logger: { ...(serverOptions(config).logger as object), stream } })
  await fastify.register(app, { config })
  t.teardown(() => fastify.close())
  fastify.results.listHosts = async () => { throw new Error('boom') }
  const idOf = async (given?: string): Promise<string> => {
    const res = await fastify.inject({ url: '/host', headers: { 'x-api-key': SERVICE_KEY, ...(given === undefined ? {} : { 'x-request-id': given }) } })
    return (/request (\S+)\)/.exec(res.json().error) as RegExpExecArray)[1]
  }
  t.equal(await idOf('trace-1234.abc_DEF'), 'trace-1234.abc_DEF', 'a plain id is kept for correlation')
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
  for (const bad of ['a'.repeat(65), 'x"} {"level":60,"msg":"forged', 'id with spaces', '<script>', '../../etc', '']) {
    const id = await idOf(bad)
    t.match(id, uuid, `${JSON.stringify(bad.slice(0, 20))} is replaced`)
  }
  t.match(await idOf(), uuid, 'generated when absent')
  t.notOk(lines.some((l) => l.includes('forged')), 'the spoofed text never reaches the logs')
})
