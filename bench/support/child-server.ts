// A bench server in a child process of its own, talked to over IPC: the parent forks it and waits for the
// `{ port }` it sends once listening; disconnecting ends it. The child side is `announce`.
import { fork, type ChildProcess } from 'node:child_process'
import type { FastifyInstance } from 'fastify'

export interface ChildServer {
  child: ChildProcess
  port: number
}

export interface ForkOptions {
  cwd: string
  execArgv: string[]
  env: NodeJS.ProcessEnv
  /** How messages name the server, e.g. 'the API' or 'memory server'. */
  label: string
}

/** Fork `script` with `args` and resolve once it says where it listens (60 s at most). */
export function forkServer (script: string, args: string[], opts: ForkOptions): Promise<ChildServer> {
  const child = fork(script, args, { cwd: opts.cwd, execArgv: opts.execArgv, env: opts.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill(); reject(new Error(`${opts.label} did not start within 60 s`)) }, 60_000)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${opts.label} exited with code ${String(code)}`)) })
    child.once('message', (msg: { port?: number }) => {
      clearTimeout(timer)
      if (typeof msg.port === 'number') resolve({ child, port: msg.port })
      else reject(new Error(`${opts.label} sent ${JSON.stringify(msg)}`))
    })
  })
}

/** Disconnect (the child closes and exits); killed if it is still there after 10 s. */
export function stopServer (server: ChildServer): Promise<void> {
  return new Promise((resolve) => {
    server.child.removeAllListeners('exit')
    if (server.child.exitCode !== null) return resolve()
    const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000)
    server.child.once('exit', () => { clearTimeout(timer); resolve() })
    server.child.disconnect()
  })
}

/** Child side: close and exit when the parent goes away (normally or not), then tell it the port. */
export function announce (fastify: FastifyInstance, port: number): void {
  process.on('disconnect', () => {
    fastify.close().finally(() => process.exit(0))
  })
  process.send?.({ port })
}
