import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { inspircd, ngircd } from '../../../../bench/support/daemon-specs'
import { complete, parse, registration } from '../../../../lib/scanner/probes/irc'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

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
