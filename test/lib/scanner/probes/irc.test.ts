import fs from 'node:fs'
import path from 'node:path'
import { randomInt } from 'node:crypto'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { inspircd, ngircd } from '../../../../bench/support/daemon-specs'
import { complete, parse, registration } from '../../../../lib/scanner/probes/irc'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'
import { replayServer, type Answer } from '../../../support/replay-server'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('RPL_MYINFO names the server software; NOTICEs and errors only say IRC', async (t) => {
  t.match(registration.toString(), /^NICK \S+\r\nUSER \S+ 0 \* :/)
  const welcome = Buffer.from(':irc.example 001 vulnscan :Welcome\r\n:irc.example 004 vulnscan irc.example InspIRCd-3 BIRSWiko ABCDEFG\r\n' +
    ':irc.example 005 vulnscan AWAYLEN=200 NETWORK=ExampleNet :are supported by this server\r\n')
  t.ok(complete(welcome))
  t.same(parse(welcome), { service: 'irc', product: 'InspIRCd', version: '3', versionPrefix: true, extraInfo: 'server irc.example; network ExampleNet' },
    'InspIRCd names its major release only: marked as the leading part of a version')
  t.same(parse(Buffer.from(':irc.example 004 vulnscan irc.example UnrealIRCd-6.1.4 iowrsxzdHtIDRqpWGTSZ lvhopsmntikraqbeI\r\n')),
    { service: 'irc', product: 'UnrealIRCd', version: '6.1.4', extraInfo: 'server irc.example' })
  t.same(parse(Buffer.from(':irc.example 004 vulnscan irc.example mystery-9 io lv\r\n')),
    { service: 'irc', extraInfo: 'server irc.example; version mystery-9' }, 'an unknown server is not given a product')
  t.same(parse(Buffer.from(':irc.example NOTICE * :*** Looking up your hostname...\r\n')), { service: 'irc' })
  t.same(parse(Buffer.from('NOTICE AUTH :*** Checking Ident\r\n')), { service: 'irc' })
  t.equal(parse(Buffer.from('220 mail.example ESMTP Postfix\r\n')), null, 'numeric replies without a prefix are not IRC')
  t.equal(parse(Buffer.from('ERROR\r\n')), null)
})

test('Debian\'s ngIRCd: silent until registration, and with hostname-lookup NOTICEs', { skip: daemonUnavailable('/usr/sbin/ngircd', 'ngircd') }, async (t) => {
  for (const dns of [false, true]) {
    const d = await startDaemon(ngircd(dns))
    t.teardown(d.stop)
    const r = await detectService({ host: d.host, port: d.port, level: 'full' })
    t.match(r, { service: 'irc', product: 'ngIRCd', version: upstream(d.packageVersion), extraInfo: /^server irc\.vulnscan\.test/ }, `DNS ${dns ? 'on' : 'off'}`)
    t.same(r.cpe, [`cpe:2.3:a:barton:ngircd:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`], "the NVD names ngIRCd barton:ngircd (CVE-2020-14148)")
    const light = await detectService({ host: d.host, port: d.port, level: 'light' })
    t.equal(light.service, 'irc', `light detection on an unknown port still says IRC (${JSON.stringify(light).slice(0, 300)})`)
  }
})

test('Debian\'s InspIRCd: the version as RPL_MYINFO shows it (its major release only)', { skip: daemonUnavailable('/usr/sbin/inspircd', 'inspircd') }, async (t) => {
  const d = await startDaemon(inspircd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'irc', product: 'InspIRCd', version: upstream(d.packageVersion).split('.')[0], versionPrefix: true })
  t.match(r.banner, / 004 vulnscan irc\.vulnscan\.test InspIRCd-\d+ /)
})

const FIXTURES = path.join(__dirname, '../../../fixtures/banners')

/**
 * UnrealIRCd 6 as its code behaves (Debian has no package): the connect NOTICEs at once, a PING cookie on the
 * first NICK, and after NICK, USER and the matching PONG the 001-005 lines of the fixture; QUIT is answered
 * with ERROR and the connection closed. Sources beside the fixtures.
 */
function unrealircd (host: () => string) {
  const welcome = fs.readFileSync(path.join(FIXTURES, 'unrealircd-6.1.5-welcome.irc'), 'latin1')
  let nick = ''
  let user = ''
  let pong = false
  const cookie = randomInt(1, 0xffffffff).toString(16).toUpperCase()
  return (bytes: Buffer): Answer => {
    const end = bytes.lastIndexOf(0x0a)
    if (end < 0) return undefined
    const out: string[] = []
    for (const line of bytes.subarray(0, end).toString('latin1').split('\n').map((l) => l.replace(/\r$/, ''))) {
      const [cmd, arg] = line.split(' ')
      if (cmd === 'NICK' && !nick) { nick = arg; out.push(`PING :${cookie}\r\n`) }
      else if (cmd === 'USER') user = arg
      else if (cmd === 'PONG') pong = line.replace(/^PONG :?/, '') === cookie
      else if (cmd === 'QUIT') return { send: Buffer.from(`ERROR :Closing Link: ${nick}[${host()}] (Quit: ${nick})\r\n`), end: true }
      if (nick && user && pong && !out.some((o) => o.startsWith(':irc.vulnscan.test 001'))) {
        out.push(welcome.replaceAll('{nick}', nick).replaceAll('{user}', user).replaceAll('{host}', host()))
        pong = false
      }
    }
    return { send: Buffer.from(out.join('')), rest: bytes.subarray(end + 1) }
  }
}

test('UnrealIRCd 6: NOTICE lines, a PING cookie, then RPL_MYINFO naming UnrealIRCd-6.1.5', async (t) => {
  const connect = fs.readFileSync(path.join(FIXTURES, 'unrealircd-6.1.5-connect.irc'))
  let address = ''
  const s = await replayServer(unrealircd(() => address), connect)
  address = s.host
  t.teardown(s.close)
  t.same(parse(connect), { service: 'irc' }, 'the connect NOTICEs alone say IRC and no product')
  const r = await detectService({ host: s.host, port: s.port, level: 'full' })
  t.match(r, { service: 'irc', product: 'UnrealIRCd', version: '6.1.5', extraInfo: 'server irc.vulnscan.test; network VulnscanTest' })
  t.same(r.cpe, ['cpe:2.3:a:unrealircd:unrealircd:6.1.5:*:*:*:*:*:*:*'])
  // The QUIT is written as detection ends: give it a moment to arrive.
  for (let i = 0; i < 20 && !s.seen.some((b) => b.includes('QUIT')); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  const said = s.seen.map((b) => b.toString('latin1')).join('')
  t.match(said, /^NICK vulnscan\r\nUSER vulnscan 0 \* :vulnscan\r\n/, 'registration')
  t.match(said, /PONG :[0-9A-F]+\r\n/, 'the ping cookie was answered, without which UnrealIRCd never registers the client')
  t.match(said, /QUIT :vulnscan\r\n$/, 'and the session ended with QUIT')
})

test('UnrealIRCd 3.2 named itself Unreal<version> in RPL_MYINFO', async (t) => {
  // include/version.h of the 3.2 series (unrealircd/unrealircd, commit 00933ef23b8e133384b059682ab5dddaa20347f9):
  // PATCH1..4 "3" ".2" ".4" "-pre1" after BASE_VERSION "Unreal" (src/version.c.SH, commit 0028f6ad6404057949bf1d147aad361c13cd8a5a).
  t.same(parse(Buffer.from(':irc.example 004 vulnscan irc.example Unreal3.2.4-pre1 iowghraAsORTVSxNCWqBzvdHtGp lvhopsmntikrRcaqOALQbSeIKVfMCuzNTGj\r\n')),
    { service: 'irc', product: 'UnrealIRCd', version: '3.2.4-pre1', extraInfo: 'server irc.example' })
  t.same(parse(Buffer.from(':irc.example 004 vulnscan irc.example UnrealFoo io lv\r\n')),
    { service: 'irc', extraInfo: 'server irc.example; version UnrealFoo' }, 'Unreal without a 3.x version is not claimed')
})
