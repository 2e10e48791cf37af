// Where test daemons listen: a random 127.x.y.z address, never 127.0.0.1 (the machine's own services run
// there) and never a wildcard address.
import { createServer } from 'node:net'
import { randomInt } from 'node:crypto'

/** A random 127.x.y.z address outside 127.0.0.0/16, so never 127.0.0.1. */
export function loopbackAddress (): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
}

/** A TCP port free on `host` at the time of asking. */
export async function freePort (host: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}
