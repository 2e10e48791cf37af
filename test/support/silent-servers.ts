// Servers that accept connections and never say a word, for tests of scans that meet silent targets.
import { createServer, type Server, type Socket } from 'node:net'

export interface Silent {
  ports: number[]
  connections: () => number
  close: () => Promise<void>
}

/** Servers that accept and never say a word: service detection waits on each until its budget ends. */
export async function silentServers (binds: { address: string, port: number }[]): Promise<Silent> {
  const servers: Server[] = []
  const sockets = new Set<Socket>()
  for (const b of binds) {
    const s = createServer((sock) => {
      sockets.add(sock)
      sock.on('close', () => sockets.delete(sock))
      sock.on('error', () => {})
      // Read and drop what the scanner sends, so its FIN is seen and the socket counted closed.
      sock.resume()
    })
    await new Promise<void>((resolve, reject) => { s.once('error', reject); s.listen(b.port, b.address, resolve) })
    servers.push(s)
  }
  return {
    ports: servers.map((s) => (s.address() as { port: number }).port),
    connections: () => sockets.size,
    close: async () => {
      for (const sock of sockets) sock.destroy()
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
    }
  }
}
