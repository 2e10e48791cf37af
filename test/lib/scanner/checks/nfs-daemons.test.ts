// Debian's rpcbind and nfs-ganesha (FSAL VFS, NFSv3) in a network namespace and a mount namespace of their own
// (rpcbind's /run socket stays private): rpcbind detected on 111, and an export to `*` reported; an export to one
// other network only is not. Detection starts once ganesha listens on 2049 (it has registered with rpcbind by then).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'tap'
import { detectInNamespace, namespaceUnavailable } from '../../../support/netns'

const GANESHA = '/usr/bin/ganesha.nfsd'
const skip = namespaceUnavailable() || (!existsSync(GANESHA) && process.env.CI !== 'true' ? 'nfs-ganesha is not installed (nfs-ganesha, nfs-ganesha-vfs)' : false)

// The directory is removed once the namespace's daemons have exited: detectInNamespace's teardown waits for that, and
// tap runs teardowns in the order they were added, so the removal is added after it (removing the directory while
// ganesha still wrote its log failed with ENOTEMPTY).
async function detectGanesha (t: Parameters<typeof detectInNamespace>[0], clients: string): ReturnType<typeof detectInNamespace> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-ganesha-'))
  try {
    return await detectInNamespace(t, argv(dir, clients), 111, 'light', 2049)
  } finally {
    t.teardown(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }))
  }
}

function argv (dir: string, clients: string): string[] {
  mkdirSync(path.join(dir, 'export'))
  writeFileSync(path.join(dir, 'ganesha.conf'), [
    'NFS_CORE_PARAM { Protocols = 3; Enable_NLM = false; Enable_RQUOTA = false; }',
    'NFSV4 { Graceless = true; }',
    `EXPORT { Export_Id = 1; Path = ${path.join(dir, 'export')}; Pseudo = /export; Access_Type = RO; Squash = root_squash; Protocols = 3; Transports = TCP;`,
    `  FSAL { Name = VFS; } CLIENT { Clients = ${clients}; Access_Type = RO; } }`, ''].join('\n'))
  const script = 'mount -t tmpfs vulnscan-run /run && rpcbind -f -w & r=$!; sleep 0.5; ' +
    `${GANESHA} -F -f ${dir}/ganesha.conf -L ${dir}/ganesha.log -p ${dir}/ganesha.pid -N NIV_EVENT & g=$!; ` +
    'trap "kill $g; sleep 1; kill $r; exit 0" TERM; wait'
  return ['unshare', '-m', '--propagation', 'private', 'sh', '-c', script]
}

test('ganesha exporting to *: NFS exports readable by anyone', { skip }, async (t) => {
  const r = await detectGanesha(t, '*')
  t.match(r.service, { service: 'rpcbind' })
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-NFS-EXPORTS-WORLD'])
  t.match(r.exposures[0].evidence, /exports to anyone: \/tmp\/vulnscan-ganesha-\w+\/export \(\*\)/)
})

test('ganesha exporting to one network: no finding', { skip }, async (t) => {
  const r = await detectGanesha(t, '10.255.0.0/16')
  t.match(r.service, { service: 'rpcbind' })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
