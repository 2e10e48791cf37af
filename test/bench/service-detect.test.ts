// How the service-detection lab reads nmap and judges both tools, since its table is what the README
// reports. The nmap output is a real run of nmap 7.93 -sV on two lab daemons (Mosquitto over TLS on
// 8883; HAProxy's error-page frontend and its statistics page), saved from bench/service-detect.ts's
// own nmap command line.

import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { judge, parseNmapHosts } from '../../bench/service-detect'
import { expectedVersion, LAB, versionIs } from '../../bench/support/detect-lab'

const xml = readFileSync(path.join(__dirname, '../fixtures/nmap/lab-mosquitto-haproxy.xml'), 'utf8')

test('nmap output read per address: the name it probed, never a port-table guess', async (t) => {
  const hosts = parseNmapHosts(xml)
  t.same([...hosts.keys()], ['127.248.48.94', '127.207.192.211'])
  t.same(hosts.get('127.248.48.94')?.find((p) => p.port === 8883), { port: 8883, name: 'mosquitto version 2.0.11' })
  const haproxy = hosts.get('127.207.192.211') ?? []
  t.same(haproxy.map((p) => p.port), [8883, 42615, 42616])
  t.ok(haproxy.every((p) => p.name === undefined && p.product === undefined),
    'HAProxy\'s pages fingerprinted but unmatched, and 8883 closed there: nmap names none of them')
})

test('judged by what the wire shows', async (t) => {
  const hosts = parseNmapHosts(xml)
  const mqttNmap = hosts.get('127.248.48.94')!.find((p) => p.port === 8883)!
  const mqtt = { service: 'mqtt', product: 'Mosquitto', version: '2.0.11' }
  t.match(judge({ ...mqtt, cpe: [] }, mqttNmap, { ...mqtt, version: 'full' }, '2.0.11'), { oursRight: true, nmapRight: true, verdict: 'same' },
    'nmap\'s version inside its service name counts')
  t.match(judge({ ...mqtt, version: '2.0.1', cpe: [] }, mqttNmap, { ...mqtt, version: 'full' }, '2.0.11'), { oursRight: false, nmapRight: true, verdict: 'worse' })
  t.match(judge({ service: 'unknown', cpe: [] }, mqttNmap, { ...mqtt, version: 'full' }, '2.0.11'), { agreement: 'we-unnamed', verdict: 'worse' })

  const web = hosts.get('127.207.192.211')!.find((p) => p.port === 42615)!
  const haproxy = { service: 'http', product: 'HAProxy' }
  t.match(judge({ ...haproxy, cpe: [] }, web, { ...haproxy, version: 'none' }, undefined), { agreement: 'nmap-unnamed', oursRight: true, verdict: 'better' })
  t.match(judge({ ...haproxy, version: '2.6.12', cpe: [] }, web, { ...haproxy, version: 'none' }, undefined), { oursRight: false },
    'a version where the wire shows none is wrong, even if true of the daemon')
  t.match(judge({ service: 'unknown', cpe: [] }, web, { ...haproxy, version: 'none' }, undefined), { verdict: 'same', agreement: 'both-unnamed' })
  t.match(judge({ service: 'http', product: 'nginx', cpe: [] }, web, { ...haproxy, version: 'none' }, undefined), { agreement: 'nmap-unnamed', verdict: 'differ' },
    'a wrong name is not better than none')

  const slapd = { service: 'ldap', product: 'OpenLDAP' }
  t.match(judge({ ...slapd, cpe: [] }, { port: 389, name: 'ldap', product: 'OpenLDAP', version: '2.2.X - 2.3.X' }, { ...slapd, version: 'none' }, undefined),
    { nmapRight: false, oursRight: true, verdict: 'better' }, 'nmap\'s guessed range where slapd shows no version')
})

test('expected versions and version equality', async (t) => {
  t.equal(expectedVersion({ service: 'http', product: 'Varnish', version: 'major.minor' }, '7.1.1'), '7.1')
  t.equal(expectedVersion({ service: 'irc', product: 'InspIRCd', version: 'major' }, '3.15.0'), '3')
  t.equal(expectedVersion({ service: 'http', product: 'Caddy', version: 'none' }, '2.6.2'), undefined)
  t.ok(versionIs('9.4.57.v20241219', '9.4.57'), 'Jetty\'s build suffix')
  t.notOk(versionIs('9.4.571', '9.4.57'))
  t.notOk(versionIs('9.4.57.1', '9.4.57'), 'one more numeric part is another version')
  t.notOk(versionIs('2.4', '2.4.2'))
  t.ok(versionIs(undefined, undefined))
  t.notOk(versionIs('1.0', undefined))
})

test('the lab: at least 15 daemons, each named once', async (t) => {
  t.ok(LAB.length >= 15)
  t.equal(new Set(LAB.map((d) => d.name.toLowerCase())).size, LAB.length)
})
