// A network namespace joined to this one by a veth pair, for the benches that scan hosts living in it
// (bench/portscan.ts, bench/network.ts). Needs root and `ip`; everything it creates is undone by `teardown`.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'

export function run (cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

export interface VethNamespace {
  name: string
  /** The veth end on this side. */
  outer: string
  /** `nft` inside the namespace. */
  nft: (...args: string[]) => void
  /** Removes the namespace and the pair; `before` runs first (stop what runs inside, drop routes to it). */
  teardown: () => void
}

/**
 * `vs<tag>-<id>`, its end of the pair at `link.peer`, this side's at `link.host` (both `/link.prefix`), loopback up
 * inside. `before` runs at the start of the teardown.
 */
export function vethNamespace (tag: string, link: { host: string, peer: string, prefix: number }, before: () => void = () => {}): VethNamespace {
  const id = randomBytes(3).toString('hex')
  const name = `vs${tag}-${id}`
  const outer = `vs${tag.slice(0, 3)}${id}a`
  const inner = `vs${tag.slice(0, 3)}${id}b`
  let torn = false
  const teardown = (): void => {
    if (torn) return
    torn = true
    try { before() } catch {}
    try { run('ip', ['netns', 'del', name]) } catch {}
    // Deleting the namespace takes the inner end with it, and a veth pair dies as one; this is for a setup that
    // failed half way.
    try { run('ip', ['link', 'del', outer]) } catch {}
  }
  try {
    run('ip', ['netns', 'add', name])
    run('ip', ['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner])
    run('ip', ['link', 'set', inner, 'netns', name])
    run('ip', ['addr', 'add', `${link.host}/${link.prefix}`, 'dev', outer])
    run('ip', ['link', 'set', outer, 'up'])
    run('ip', ['-n', name, 'addr', 'add', `${link.peer}/${link.prefix}`, 'dev', inner])
    run('ip', ['-n', name, 'link', 'set', inner, 'up'])
    run('ip', ['-n', name, 'link', 'set', 'lo', 'up'])
  } catch (err) {
    teardown()
    throw err
  }
  return { name, outer, nft: (...a) => { run('ip', ['netns', 'exec', name, 'nft', ...a]) }, teardown }
}
