import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { test } from 'tap'
import { aliasesFor, cpesFor } from '../../../../lib/cpe/aliases'
import { detectService } from '../../../../lib/scanner/detect'
import type { ProbeDescriptor } from '../../../../lib/scanner/probes/descriptor'
import { buildRegistry, PROBES, REGISTRY } from '../../../../lib/scanner/probes/index'
import { loopbackAddress } from '../../../support/loopback'

test('every product a probe can report has a CPE mapping', async (t) => {
  const missing: string[] = []
  for (const p of PROBES) {
    for (const product of new Set(p.products)) {
      if (aliasesFor(product).length === 0 || cpesFor(product, '1.0').length === 0) missing.push(`${p.name}: ${product}`)
    }
  }
  t.same(missing, [], 'products without a vendor:product in lib/cpe/aliases.ts')
})

test('the check itself fails for a product without a mapping', async (t) => {
  t.same(aliasesFor('Frobnicator httpd'), [])
})

test('registry: unique names, valid ports, every probe reachable', async (t) => {
  const names = PROBES.map((p) => p.name)
  t.same([...new Set(names)], names, 'names are unique')
  for (const p of PROBES) {
    for (const port of [...p.ports, ...(p.tlsPorts ?? [])]) t.ok(Number.isInteger(port) && port >= 1 && port <= 65535, `${p.name} port ${port}`)
    t.ok(p.recognise !== undefined || p.request !== undefined || p.converse !== undefined || p.handshake === true,
      `${p.name} can recognise or ask something`)
    if (p.request) t.ok(p.parse !== undefined || p.recognise !== undefined, `${p.name} can read the reply to its request`)
  }
  t.throws(() => buildRegistry([PROBES[0], PROBES[0]]), /two probes are named/)
  t.equal(REGISTRY.handshake?.name, 'tls')
  t.ok(REGISTRY.tlsFirstPorts.has(443) && REGISTRY.tlsFirstPorts.has(993) && !REGISTRY.tlsFirstPorts.has(6380),
    'TLS first where a protocol runs inside TLS, plain first where a probe also claims the port as plain text')
  t.equal(REGISTRY.insideTls.get(8883)?.name, 'mqtt')
  t.ok(REGISTRY.serverFirstPorts.has(22) && !REGISTRY.serverFirstPorts.has(6379))
})

test('the detection engine names no protocol', async (t) => {
  const src = fs.readFileSync(path.join(__dirname, '../../../../lib/scanner/detect.ts'), 'utf8')
  // Code only: comments may explain with examples.
  const code = src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1')
  const named = PROBES.map((p) => p.name).filter((n) => new RegExp(`['"\`]${n}['"\`]|\\b${n}\\.`, 'i').test(code))
  t.same(named, [], 'no protocol names in detect.ts code')
  t.notMatch(code, /from '\.\/probes\/(?!index|common|descriptor)/, 'imports no probe module')
})

test('a new protocol is one descriptor: the engine runs it unchanged', async (t) => {
  const host = loopbackAddress()
  // A made-up protocol: the client says HELLO, the server answers `WIDGET <version>`.
  const server = net.createServer((s) => {
    s.on('error', () => {})
    s.on('data', (d) => { if (d.toString() === 'HELLO\n') s.end('WIDGET 4.2.1\n') })
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const widget: ProbeDescriptor = {
    name: 'widget',
    ports: [port],
    fallback: 'full',
    request: () => Buffer.from('HELLO\n'),
    complete: (r) => r.includes(0x0a),
    parse: (r) => {
      const m = /^WIDGET (\S+)\n/.exec(r.toString('latin1'))
      return m ? { service: 'widget', product: 'OpenSSH', version: m[1] } : null
    },
    products: ['OpenSSH']
  }
  const registry = buildRegistry([...PROBES, widget])
  const r = await detectService({ host, port, level: 'light', registry })
  t.match(r, { service: 'widget', product: 'OpenSSH', version: '4.2.1' })
  t.equal(r.cpe.length, 2, 'its product goes through the CPE table like any other')
  const without = await detectService({ host, port, level: 'light' })
  t.equal(without.service, 'unknown', 'and without the descriptor nobody asks')
})
