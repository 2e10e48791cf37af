// A short-lived signed link opens a scan's HTML report in a browser without a key (issue 23, item 8), and only as
// long as, and only as far as, the key that asked for it may read the scan.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'

test('report links', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const admin = { 'x-api-key': SERVICE_KEY }
      const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: admin, payload: { id: 'linked', targets: [{ type: 'single_ip', value: '127.0.0.9' }] } })
      t.equal(posted.statusCode, 200)
      const notYet = await app.inject({ method: 'POST', url: '/app/scan/linked/report/link', headers: admin, payload: {} })
      t.equal(notYet.statusCode, 409, 'a queued scan has no report to link to')
      await app.store.updateScan('linked', { status: 'completed', finishedAt: new Date().toISOString() })

      const reader = (await app.inject({ method: 'POST', url: '/admin/keys', headers: admin, payload: { label: 'viewer', role: 'reader' } })).json() as { key: string, id: string }
      const made = await app.inject({ method: 'POST', url: '/app/scan/linked/report/link', headers: { 'x-api-key': reader.key }, payload: { expiresIn: 120 } })
      t.equal(made.statusCode, 200, 'a reader may ask for a link')
      const { url, expiresAt } = made.json() as { url: string, expiresAt: string }
      t.match(url, /^\/app\/scan\/linked\/report\/shared\?token=[\w-]+\.[\w-]+$/)
      t.ok(Math.abs(Date.parse(expiresAt) - Date.now() - 120_000) < 5000, 'expires when asked')

      const opened = await app.inject({ url })
      t.equal(opened.statusCode, 200, 'opens without a key')
      t.match(opened.headers['content-type'], /^text\/html/)
      t.match(opened.headers['content-disposition'], /^inline;/, 'shown in the browser, not downloaded')
      t.match(opened.headers['content-security-policy'], /default-src 'none'/)
      t.match(opened.body, /<html/)

      const token = new URL(url, 'http://x').searchParams.get('token') as string
      const [body, sig] = token.split('.')
      const changed = await app.inject({ url: `/app/scan/linked/report/shared?token=${body}.${sig.slice(0, -2)}AA` })
      t.match(changed, { statusCode: 403 }, 'a changed signature is refused')
      t.match(changed.json(), { code: 'VULNSCAN_REPORT_LINK_REFUSED' })
      const forged = Buffer.from(JSON.stringify([1, 'linked', 'html', {}, 'service', Date.now() + 60_000])).toString('base64url')
      t.equal((await app.inject({ url: `/app/scan/linked/report/shared?token=${forged}.${sig}` })).statusCode, 403, 'a body made up to act as the infrastructure key is refused')
      t.equal((await app.inject({ url: `/app/scan/other/report/shared?token=${token}` })).statusCode, 403, 'for another scan: refused')

      const revoked = await app.inject({ method: 'DELETE', url: `/admin/keys/${reader.id}`, headers: admin })
      t.equal(revoked.statusCode, 204)
      const after = await app.inject({ url })
      t.equal(after.statusCode, 403, 'revoking the key ends its links')
      t.match(after.json().error, /revoked/)

      const short = (await app.inject({ method: 'POST', url: '/app/scan/linked/report/link', headers: admin, payload: { expiresIn: 60, format: 'json' } })).json() as { url: string }
      const json = await app.inject({ url: short.url })
      t.equal(json.statusCode, 200)
      t.match(json.headers['content-disposition'], /^attachment;/, 'other formats come as attachments')
      t.equal((await app.inject({ method: 'POST', url: '/app/scan/linked/report/link', headers: admin, payload: { expiresIn: 7200 } })).statusCode, 400, 'at most an hour')
      t.equal((await app.inject({ method: 'POST', url: '/app/scan/nope/report/link', headers: admin, payload: {} })).statusCode, 404)
    })
  }
})
