// X11 connection setup against answers recorded from Debian's Xvfb (fixtures' .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, parse, parseSetup, setupRequest, xorgVersion } from '../../../lib/scanner/probes/x11'
import { cpesFor } from '../../../lib/cpe/aliases'

const fixture = (name: string): Buffer => readFileSync(path.join(__dirname, '../../fixtures/banners', name))

t.test('the setup request: little-endian, 11.0, no authorization', async (t) => {
  t.same([...setupRequest], [0x6c, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0])
})

t.test('Xvfb with -ac: Success, X.Org and its version from the release number', async (t) => {
  const ok = fixture('xvfb-21.1.7-setup-success.bin')
  t.ok(complete(ok))
  t.notOk(complete(ok.subarray(0, 200)))
  t.match(parseSetup(ok), { status: 'success', major: 11, minor: 0, vendor: 'The X.Org Foundation', release: 12101007, screens: 1, size: '1280x1024' })
  t.same(parse(ok), {
    service: 'x11',
    product: 'X.Org X server',
    version: '21.1.7',
    extraInfo: 'X11 11.0; access granted without authorization; 1 screen (1280x1024)'
  })
  t.same(cpesFor('X.Org X server', '21.1.7'), ['cpe:2.3:a:x.org:xorg-server:21.1.7:*:*:*:*:*:*:*'])
})

t.test('Xvfb with -auth: Failed with its reason', async (t) => {
  const no = fixture('xvfb-21.1.7-setup-failed.bin')
  t.ok(complete(no))
  t.same(parse(no), {
    service: 'x11',
    extraInfo: 'X11 11.0; access refused; "Authorization required, but no authorization protocol specified"'
  })
})

t.test('release numbers and other bytes', async (t) => {
  t.equal(xorgVersion(12013000), '1.20.13')
  t.equal(xorgVersion(12101007), '21.1.7')
  t.equal(xorgVersion(12302000), '23.2.0')
  t.equal(xorgVersion(70000000), undefined, 'not X.Org numbering')
  t.equal(parse(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parse(Buffer.from([1, 0, 3, 0, 0, 0, 0, 0])), null, 'protocol 3 is no X11')
})
