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

function argv (t: { teardown: (fn: () => void) => void }, clients: string): string[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-ganesha-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
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
  const r = await detectInNamespace(t, argv(t, '*'), 111, 'light', 2049)
  t.match(r.service, { service: 'rpcbind' })
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-NFS-EXPORTS-WORLD'])
  t.match(r.exposures[0].evidence, /exports to anyone: \/tmp\/vulnscan-ganesha-\w+\/export \(\*\)/)
})

test('ganesha exporting to one network: no finding', { skip }, async (t) => {
  const r = await detectInNamespace(t, argv(t, '10.255.0.0/16'), 111, 'light', 2049)
  t.match(r.service, { service: 'rpcbind' })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
