// One webhook attempt: the deny list at delivery time (names resolved, every address checked), the connection made to
// the address that was checked, the signature over the raw body, no redirects.
import { test } from 'tap'
import { createHmac } from 'node:crypto'
import { sendWebhook, signature } from '../../../lib/webhooks/send'
import { addressRefusal, webhookPolicy, webhookUrlProblem } from '../../../lib/webhooks/policy'
import { startReceiver } from '../../support/webhook-receiver'
import { loopbackAddress } from '../../support/loopback'
import { createServer } from 'node:net'

const open = webhookPolicy({ WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_DENY: '' })
const closed = webhookPolicy({ WEBHOOK_ALLOW: '', WEBHOOK_DENY: '' })

test('the deny list names the range it refuses', async (t) => {
  const cases: [string, RegExp | null][] = [
    ['127.0.0.1', /loopback/], ['10.1.2.3', /private/], ['172.16.0.1', /private/], ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local/], ['100.64.0.1', /carrier-grade NAT/], ['224.0.0.1', /multicast/], ['0.0.0.0', /unspecified/],
    ['255.255.255.255', /broadcast/], ['192.0.2.1', /reserved/], ['::1', /loopback/], ['fe80::1', /link-local/], ['fd00::1', /unique local/],
    ['ff02::1', /multicast/], ['::ffff:127.0.0.1', /127\.0\.0\.1 is a loopback/], ['::ffff:10.0.0.1', /private/], ['64:ff9b::a00:1', /NAT64/],
    ['93.184.216.34', null], ['2606:4700:4700::1111', null]
  ]
  for (const [a, why] of cases) {
    const r = addressRefusal(a, closed)
    if (why === null) t.equal(r, null, `${a} may be used`)
    else t.match(r, why, `${a}: ${String(r)}`)
  }
  t.equal(addressRefusal('127.0.0.1', open), null, 'WEBHOOK_ALLOW lets a range through')
  const both = webhookPolicy({ WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_DENY: '127.0.0.5,93.184.216.0/24' })
  t.match(addressRefusal('127.0.0.5', both), /WEBHOOK_DENY \(127\.0\.0\.5\/32\)/, 'WEBHOOK_DENY wins')
  t.match(addressRefusal('93.184.216.34', both), /WEBHOOK_DENY/, 'and may refuse public addresses')
  t.throws(() => webhookPolicy({ WEBHOOK_ALLOW: '10.0.0.0/33', WEBHOOK_DENY: '' }), /WEBHOOK_ALLOW: '10.0.0.0\/33'/)

  t.match(webhookUrlProblem('ftp://93.184.216.34/x', closed), /http or https/)
  t.match(webhookUrlProblem('http://u:p@93.184.216.34/x', closed), /credentials/)
  t.match(webhookUrlProblem('http://[::1]:8080/x', closed), /::1 is a loopback/)
  t.match(webhookUrlProblem('http://localhost:8080/x', closed), /names this machine/)
  t.match(webhookUrlProblem('http://app.localhost./x', closed), /names this machine/)
  t.match(webhookUrlProblem('http://2130706433/x', closed), /127\.0\.0\.1 is a loopback/, 'a decimal IPv4 is read as the URL parser reads it')
  t.match(webhookUrlProblem('not a url', closed), /is not a URL/)
  t.equal(webhookUrlProblem('https://hooks.example.com/x', closed), null, 'a name is checked at delivery')
})

// Scan targets refuse the deprecated IPv4-compatible IPv6 addresses (::a.b.c.d); the webhook policy let
// http://[::127.0.0.1]/ through, which some stacks send to 127.0.0.1. Refused whatever WEBHOOK_ALLOW says.
test('IPv4-compatible IPv6 addresses are refused, in a URL and at delivery', async (t) => {
  const everything = webhookPolicy({ WEBHOOK_ALLOW: '::/0,0.0.0.0/0', WEBHOOK_DENY: '' })
  for (const url of ['http://[::127.0.0.1]/', 'http://[::7f00:1]:8080/x', 'https://[::10.0.0.1]/hook', 'http://[::5db8:d822]/']) {
    t.match(webhookUrlProblem(url, closed), /deprecated IPv4-compatible IPv6 address/, url)
    t.match(webhookUrlProblem(url, everything), /deprecated IPv4-compatible/, `${url}, even with WEBHOOK_ALLOW covering it`)
  }
  for (const a of ['::127.0.0.1', '::7f00:1', '::93.184.216.34']) t.match(addressRefusal(a, everything), /IPv4-compatible/, `a name resolving to ${a}`)
  t.match(addressRefusal('::1', closed), /loopback/, '::1 stays the loopback address')
  t.equal(addressRefusal('::ffff:93.184.216.34', closed), null, 'an IPv4-mapped public address is still the public IPv4 host')
})

test('a delivery is signed, sent to the checked address, and refused for a denied one', async (t) => {
  const rx = await startReceiver([204])
  t.teardown(() => rx.close())
  const body = JSON.stringify({ id: 'e1', event: 'webhook.test' })
  const base = { body, secret: 'whsec_test', event: 'webhook.test', eventId: 'e1', timeoutMs: 2000 }

  const ok = await sendWebhook({ ...base, url: rx.url, policy: open })
  t.match(ok, { statusCode: 204, error: null, permanent: false })
  const [got] = await rx.waitFor(1)
  t.equal(got.body, body, 'the raw body as signed')
  t.equal(got.headers['x-vulnscan-signature-256'], `sha256=${createHmac('sha256', 'whsec_test').update(body).digest('hex')}`)
  t.equal(got.headers['x-vulnscan-signature-256'], signature('whsec_test', body))
  t.equal(got.headers['x-vulnscan-event'], 'webhook.test')
  t.equal(got.headers['x-vulnscan-delivery'], 'e1')

  // A name is resolved once, each answer checked, and the connection goes to the checked address: the name stays
  // in the Host header only.
  const named = await sendWebhook({ ...base, url: `http://hooks.example.test:${rx.port}/hook`, policy: open, resolve: async () => [rx.host] })
  t.equal(named.statusCode, 204)
  t.equal((await rx.waitFor(2))[1].headers.host, `hooks.example.test:${rx.port}`)

  // Refused: an address literal, a name that resolves to a denied address (DNS rebinding), or to one among others.
  const refused = [
    await sendWebhook({ ...base, url: rx.url, policy: closed }),
    await sendWebhook({ ...base, url: `http://hooks.example.test:${rx.port}/hook`, policy: closed, resolve: async () => [rx.host] }),
    await sendWebhook({ ...base, url: `http://hooks.example.test:${rx.port}/hook`, policy: open, resolve: async () => ['93.184.216.34', '10.0.0.1'] })
  ]
  for (const r of refused) t.match(r, { statusCode: null, error: /^refused: /, permanent: true })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(rx.received.length, 2, 'nothing reached the receiver from a refused delivery')
})

test('a redirect is not followed, a slow receiver times out', async (t) => {
  const redirect = await startReceiver([302])
  t.teardown(() => redirect.close())
  const r = await sendWebhook({ url: redirect.url, body: '{}', secret: 's', event: 'e', eventId: 'i', policy: open, timeoutMs: 2000 })
  t.match(r, { statusCode: 302, error: /redirects are not followed/ })
  t.equal(redirect.received.length, 1)

  const host = loopbackAddress()
  // Reads (so it sees the client go) and never answers.
  const silent = createServer((socket) => socket.resume())
  await new Promise<void>((resolve) => silent.listen(0, host, () => resolve()))
  t.teardown(() => new Promise<void>((resolve) => silent.close(() => resolve())))
  const port = (silent.address() as { port: number }).port
  const slow = await sendWebhook({ url: `http://${host}:${port}/`, body: '{}', secret: 's', event: 'e', eventId: 'i', policy: open, timeoutMs: 300 })
  t.match(slow, { statusCode: null, error: 'no answer within 300 ms', permanent: false })
})
