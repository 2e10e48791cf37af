// Errors raised by Fastify and Node's HTTP parser, before any route runs, keep the { error, code } shape and
// never echo the request back.
import { test } from 'tap'
import { build, SERVICE_KEY } from '../helper'
import { listenOnLoopback, rawBody, rawExchange } from '../support/raw-http'

const auth = { 'x-api-key': SERVICE_KEY }

test('a malformed URL and an over-long path parameter', async (t) => {
  const { app } = await build(t, 'memory')
  const bad = await app.inject({ url: '/host/%ff', headers: auth })
  t.equal(bad.statusCode, 400)
  t.same(Object.keys(bad.json()).sort(), ['code', 'error'])
  t.equal(bad.json().code, 'VULNSCAN_HTTP_BAD_URL')
  t.notMatch(bad.body, /%ff/i, 'the path is not echoed')

  const marker = 'echo' + 'x'.repeat(300)
  const long = await app.inject({ url: `/app/scan/${marker}`, headers: auth })
  t.equal(long.statusCode, 400)
  t.same(Object.keys(long.json()).sort(), ['code', 'error'])
  t.equal(long.json().code, 'VULNSCAN_HTTP_PARAM_TOO_LONG')
  t.notMatch(long.body, /echox/, 'the path is not echoed')
})

test('what the HTTP parser refuses is answered in the error shape', async (t) => {
  const { app } = await build(t, 'memory')
  const where = await listenOnLoopback(app)
  const both = await rawExchange(where, 'POST /app/scan HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
  t.match(both, /^HTTP\/1\.1 400 /)
  t.same(rawBody(both), { error: 'The request is not valid HTTP/1.1', code: 'VULNSCAN_HTTP_BAD_REQUEST' })

  const garbage = await rawExchange(where, 'HELLO\r\n\r\n')
  t.match(garbage, /^HTTP\/1\.1 400 /)
  t.match(rawBody(garbage), { code: 'VULNSCAN_HTTP_BAD_REQUEST' })

  const huge = await rawExchange(where, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1\.1 431 /)
  t.match(rawBody(huge), { code: 'VULNSCAN_HTTP_HEADERS_TOO_LARGE' })

  const ok = await rawExchange(where, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.match(ok, /^HTTP\/1\.1 200 /, 'the server still answers')
})
