// What the daemons running on this machine say about their own versions, through their own tools.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface DaemonVersion {
  port: number
  product: string
  /** Upstream version as the daemon's own client or command reports it. */
  version: string
}

async function attempt (port: number, product: string, fn: () => Promise<string | undefined>): Promise<DaemonVersion | null> {
  try {
    const version = await fn()
    return version ? { port, product, version } : null
  } catch {
    return null
  }
}

/** The daemons that answer here, with the version each reports about itself. */
export async function localDaemons (): Promise<DaemonVersion[]> {
  const found = await Promise.all([
    attempt(6379, 'Redis', async () => /redis_version:(\S+)/.exec((await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'INFO', 'server'])).stdout)?.[1]),
    attempt(5432, 'PostgreSQL', async () => /^(\d+(?:\.\d+)*)/.exec((await run('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-Atc', 'show server_version'])).stdout.trim())?.[1]),
    attempt(3306, 'MariaDB', async () => /^(\d+(?:\.\d+)*)/.exec((await run('mariadb', ['-h', '127.0.0.1', '-u', 'root', '-Nse', 'select version()'])).stdout.trim())?.[1]),
    attempt(5672, 'RabbitMQ', async () => (await run('rabbitmq-diagnostics', ['server_version', '-q'], { timeout: 60000 })).stdout.trim() || undefined),
    attempt(1883, 'Mosquitto', async () => {
      const out = await run('mosquitto', ['-h']).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '')
      return /mosquitto version (\S+)/.exec(out)?.[1]
    }),
    attempt(4222, 'NATS Server', async () => /v?(\d+\.\d+\.\d+)/.exec((await run('nats-server', ['--version'])).stdout)?.[1])
  ])
  return found.filter((d): d is DaemonVersion => d !== null)
}
