// Realistic host records for the benchmarks: several open ports each, with service, product, version, CPE,
// banners of the length real services send, and TLS facts on the TLS ports. Deterministic per index.
import type { FastifyInstance } from 'fastify'
import { hostRecordToResult } from '../../lib/store/host-result'
import { formatCpe } from '../../lib/cpe/name'
import { MAX_BANNER_CHARS } from '../../lib/scanner/probes/common'
import type { HostPort, HostRecord } from '../../lib/domain/hosts'

const BASE_TIME = Date.parse('2026-11-20T08:00:00.000Z')

function httpHeaders (server: string, i: number, extra = ''): string {
  return `HTTP/1.1 200 OK\r\nServer: ${server}\r\nDate: Fri, 20 Nov 2026 08:${String(i % 60).padStart(2, '0')}:11 GMT\r\n` +
    'Content-Type: text/html; charset=UTF-8\r\nContent-Length: 10701\r\nLast-Modified: Tue, 04 Jun 2024 12:18:07 GMT\r\n' +
    `Connection: close\r\nETag: "29cd-61a0f${(1000 + i).toString(16)}c2b3f"\r\nAccept-Ranges: bytes\r\n${extra}`
}

function tlsFor (host: string, i: number, selfSigned: boolean): HostPort['tls'] {
  return {
    protocol: i % 3 === 0 ? 'TLSv1.2' : 'TLSv1.3',
    subject: `CN=${host}, O=Example Corp, C=DE`,
    issuer: selfSigned ? `CN=${host}, O=Example Corp, C=DE` : 'CN=Example Corp Issuing CA 2, O=Example Corp, C=DE',
    notBefore: '2026-03-01T00:00:00.000Z',
    notAfter: '2027-03-01T23:59:59.000Z',
    selfSigned
  }
}

// Each entry builds one port for host number i; hosts take between three and six of them.
const PORTS: ((i: number, name: string) => HostPort)[] = [
  (i) => ({
    port: 22, protocol: 'tcp', state: 'open', service: 'ssh', product: 'OpenSSH', version: '9.2p1', distro: 'deb12u3',
    extraInfo: 'Debian 2+deb12u3; protocol 2.0',
    cpe: [formatCpe({ vendor: 'openbsd', product: 'openssh', version: '9.2', update: 'p1' })],
    banner: i % 4 === 0 ? 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3' : 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u2'
  }),
  (i) => ({
    port: 80, protocol: 'tcp', state: 'open', service: 'http', product: 'nginx', version: '1.22.1',
    cpe: [formatCpe({ vendor: 'f5', product: 'nginx', version: '1.22.1' })],
    banner: httpHeaders('nginx/1.22.1', i)
  }),
  (i, name) => ({
    port: 443, protocol: 'tcp', state: 'open', service: 'https', product: 'Apache httpd', version: '2.4.62', extraInfo: '(Debian)',
    cpe: [formatCpe({ vendor: 'apache', product: 'http_server', version: '2.4.62' })],
    banner: httpHeaders('Apache/2.4.62 (Debian)', i, 'Strict-Transport-Security: max-age=63072000\r\nX-Frame-Options: SAMEORIGIN\r\n'),
    tls: tlsFor(name, i, false)
  }),
  (i) => ({
    port: 6379, protocol: 'tcp', state: 'open', service: 'redis', product: 'Redis', version: '7.0.15',
    cpe: [formatCpe({ vendor: 'redis', product: 'redis', version: '7.0.15' })],
    banner: '# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:8a1b2c3d4e5f6071\r\n' +
      'redis_mode:standalone\r\nos:Linux 6.1.0-28-amd64 x86_64\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\n' +
      `multiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\ngcc_version:12.2.0\r\nprocess_id:${700 + i}\r\ntcp_port:6379\r\n`
  }),
  (i) => ({
    port: 5432, protocol: 'tcp', state: 'open', service: 'postgresql', product: 'PostgreSQL', version: '15.10',
    cpe: [formatCpe({ vendor: 'postgresql', product: 'postgresql', version: '15.10' })],
    banner: `SFATAL VFATAL C28000 Mno pg_hba.conf entry for host "10.0.0.${i % 250}", user "postgres", database "postgres", no encryption Fauth.c L543 RClientAuthentication`
  }),
  (i) => ({
    port: 3306, protocol: 'tcp', state: 'open', service: 'mysql', product: 'MariaDB', version: '10.11.6', distro: 'deb12u1',
    cpe: [formatCpe({ vendor: 'mariadb', product: 'mariadb', version: '10.11.6' })],
    banner: `5.5.5-10.11.6-MariaDB-0+deb12u1 thread=${1000 + i} caps=0xf7fe charset=45 status=0x0002 auth=mysql_native_password`
  }),
  () => ({
    port: 1883, protocol: 'tcp', state: 'open', service: 'mqtt', product: 'Mosquitto', version: '2.0.11',
    cpe: [formatCpe({ vendor: 'eclipse', product: 'mosquitto', version: '2.0.11' })],
    banner: 'CONNACK rc=0 session_present=0; $SYS/broker/version: mosquitto version 2.0.11'
  }),
  (i, name) => ({
    port: 5671, protocol: 'tcp', state: 'open', service: 'amqps', product: 'RabbitMQ', version: '3.10.8',
    extraInfo: 'Erlang/OTP 25.2.3',
    cpe: [formatCpe({ vendor: 'vmware', product: 'rabbitmq', version: '3.10.8' }), formatCpe({ vendor: 'pivotal_software', product: 'rabbitmq', version: '3.10.8' })],
    banner: 'AMQP 0-9-1 Connection.Start server-properties: capabilities={publisher_confirms,exchange_exchange_bindings,basic.nack,' +
      'consumer_cancel_notify,connection.blocked,consumer_priorities,authentication_failure_close,per_consumer_qos,direct_reply_to}, ' +
      'cluster_name=rabbit@mq, copyright=Copyright (c) 2007-2022 VMware, Inc. or its affiliates., information=Licensed under the MPL 2.0, ' +
      'platform=Erlang/OTP 25.2.3, product=RabbitMQ, version=3.10.8 mechanisms=PLAIN AMQPLAIN locales=en_US',
    tls: tlsFor(name, i, i % 5 === 0)
  })
]

/** `count` hosts, each with three to six open ports; lastSeen differs per host so the order is defined. */
export function realisticHosts (count: number): HostRecord[] {
  const hosts: HostRecord[] = []
  for (let i = 0; i < count; i++) {
    const address = `10.20.${Math.floor(i / 250)}.${(i % 250) + 1}`
    const name = `srv-${String(i).padStart(3, '0')}.dc1.example.internal`
    const n = 3 + (i % 4)
    const ports: HostPort[] = []
    for (let k = 0; k < n; k++) {
      const port = PORTS[(i + k * 3) % PORTS.length](i, name)
      // As long as the scanner keeps them, no longer.
      if (port.banner !== undefined) port.banner = port.banner.slice(0, MAX_BANNER_CHARS)
      ports.push(port)
    }
    ports.sort((a, b) => a.port - b.port)
    hosts.push({
      address,
      hostnames: [name],
      up: true,
      firstSeen: new Date(BASE_TIME - 86_400_000 * (i % 7)).toISOString(),
      lastSeen: new Date(BASE_TIME + i * 1000).toISOString(),
      lastScanId: `scan-2026-11-20-${String(i % 5).padStart(2, '0')}`,
      rttMs: 0.3 + (i % 10) / 10,
      ports,
      findingsCount: (i * 7) % 23,
      maxSeverity: ['critical', 'high', 'medium', 'low', null][i % 5],
      tags: []
    })
  }
  return hosts
}

/**
 * Store the hosts where GET /host reads them. This is the one place to point elsewhere when hosts move
 * (e.g. to a results store written per scan).
 */
export async function seedHosts (fastify: FastifyInstance, hosts: HostRecord[]): Promise<void> {
  for (const h of hosts) {
    await fastify.results.recordHost({ scanId: h.lastScanId, at: h.lastSeen, host: hostRecordToResult(h), scannedPorts: h.ports.map((p) => p.port), findings: [], settledPorts: [] })
  }
}
