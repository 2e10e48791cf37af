// Package findings from an inventory and tracker entries: one per source package and CVE on port 0, fixed or open
// by the installed version, kernels decided on the running kernel with a pending reboot said.
import t from 'tap'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { distroKey, distroMetaKey, distroTable, encodeEntries, type DistroCveEntry } from '../../../lib/distro/entries'
import { PACKAGE_FAMILIES } from '../../../lib/credentialed/families'
import { installedSources, matchPackages, NO_FIX_YET } from '../../../lib/credentialed/packages'
import type { Inventory } from '../../../lib/credentialed/inventory'
import type { CveRecord } from '../../../lib/nvd/types'

const debian = PACKAGE_FAMILIES.find((f) => f.family === 'debian')!
const os = { id: 'debian', idLike: [], versionId: '12', codename: 'bookworm', prettyName: 'Debian GNU/Linux 12 (bookworm)' }
const pkg = (name: string, version: string, source = name, sourceVersion = version): Inventory['packages'][number] => ({ name, version, source, sourceVersion })

function inventory (over: Partial<Inventory> = {}): Inventory {
  return {
    os,
    format: 'dpkg',
    kernel: '6.1.0-25-amd64',
    rebootRequired: false,
    packages: [
      pkg('openssl', '3.0.15-1~deb12u1'),
      pkg('libssl3', '3.0.15-1~deb12u1', 'openssl'),
      pkg('openssh-server', '1:9.2p1-2+deb12u3', 'openssh'),
      pkg('openssh-client', '1:9.2p1-2+deb12u3', 'openssh'),
      pkg('linux-image-6.1.0-25-amd64', '6.1.106-3', 'linux-signed-amd64', '6.1.106+3'),
      pkg('linux-image-6.1.0-28-amd64', '6.1.119-1', 'linux-signed-amd64', '6.1.119+1'),
      pkg('linux-libc-dev', '6.1.119-1', 'linux')
    ],
    ...over
  }
}

const entry = (status: DistroCveEntry['status'], fixedVersion: string | null, urgency = 'medium'): DistroCveEntry => ({ status, fixedVersion, urgency, source: 'debian-tracker' })

async function store (): Promise<Awaited<ReturnType<typeof createMemorySourceStore>>> {
  const s = await createMemorySourceStore()
  await s.put(distroTable('debian'), [
    [distroKey({ family: 'debian', release: 'bookworm', source: 'openssl' }), encodeEntries(new Map([
      ['CVE-2024-0001', entry('resolved', '3.0.14-1~deb12u1')],
      ['CVE-2024-0002', entry('resolved', '3.0.16-1~deb12u1')],
      ['CVE-2024-0003', entry('resolved', '3.0.9-1')],
      ['CVE-2024-0004', entry('open', null, 'unimportant')],
      ['CVE-2024-0005', entry('not-affected', null)]
    ]))],
    [distroKey({ family: 'debian', release: 'bookworm', source: 'openssh' }), encodeEntries(new Map([['CVE-2023-48795', entry('resolved', '1:9.2p1-2+deb12u2')]]))],
    [distroKey({ family: 'debian', release: 'bookworm', source: 'linux' }), encodeEntries(new Map([['CVE-2024-9999', entry('resolved', '6.1.112-1')]]))]
  ])
  await s.setMeta(distroMetaKey('debian'), JSON.stringify({ importedAt: '2026-11-01T00:00:00.000Z', from: 'test', packages: 3, cves: 7 }))
  return s
}

const cves = async (ids: string[]): Promise<Array<CveRecord | null>> => ids.map((id) => id === 'CVE-2024-0002'
  ? { id, severity: 'high', cvss: 7.5, cvssVersion: '3.1', cvssVector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', description: 'A real description', kev: null } as unknown as CveRecord
  : null)

t.test('one finding per source package and CVE, decided by the installed version', async (t) => {
  const m = await matchPackages('192.0.2.7', inventory(), debian, { sources: await store(), cves })
  const by = new Map(m.findings.map((f) => [`${f.product} ${f.cveId}`, f]))
  t.same([...by.keys()].sort(), ['linux CVE-2024-9999', 'openssh CVE-2023-48795', 'openssl CVE-2024-0001', 'openssl CVE-2024-0002', 'openssl CVE-2024-0004'])
  const open = by.get('openssl CVE-2024-0002')!
  t.equal(open.port, 0, 'on the host itself')
  t.equal(open.observed, 'open')
  t.equal(open.source, 'distribution')
  t.equal(open.rule, 'package')
  t.equal(open.confidence, 'high')
  t.equal(open.severity, 'high', 'scored by the NVD record')
  t.same(open.package, { name: 'openssl', source: 'openssl', installed: '3.0.15-1~deb12u1', fixed: '3.0.16-1~deb12u1', binaries: ['libssl3', 'openssl'], tracker: 'Debian security tracker', trackerDate: '2026-11-01T00:00:00.000Z' })
  t.equal(by.get('openssl CVE-2024-0001')?.observed, 'fixed_by_distribution', 'fixed at or below the installed version, in a release update')
  t.notOk(by.has('openssl CVE-2024-0003'), 'a fix older than the release is no finding')
  t.notOk(by.has('openssl CVE-2024-0005'), 'not affected is no finding')
  const noFix = by.get('openssl CVE-2024-0004')!
  t.equal(noFix.package?.fixed, NO_FIX_YET)
  t.equal(noFix.severity, 'low', 'unimportant for the distribution')
  t.equal(by.get('openssh CVE-2023-48795')?.package?.binaries.length, 2)
})

t.test('the kernel is decided on the running kernel, and a pending reboot is said', async (t) => {
  const m = await matchPackages('192.0.2.7', inventory(), debian, { sources: await store(), cves })
  const k = m.findings.find((f) => f.cveId === 'CVE-2024-9999')!
  t.equal(k.observed, 'open', 'the running 6.1.106-3 is below the fix, though 6.1.119-1 is installed')
  t.equal(k.package?.installed, '6.1.106-3')
  t.same(k.package?.binaries, ['linux-image-6.1.0-25-amd64', 'linux-libc-dev'])
  t.match(k.confidenceNote, /running kernel 6\.1\.0-25-amd64/)
  t.match(k.confidenceNote, /A kernel with the fix \(6\.1\.119-1\) is installed: reboot into it/)
  t.equal(m.kernel?.rebootPending, true)
  const rebooted = await matchPackages('192.0.2.7', inventory({ kernel: '6.1.0-28-amd64' }), debian, { sources: await store(), cves })
  // 6.1.112-1 came to bookworm as a point-release upload, whose version names no release: fixed, and no finding.
  t.notOk(rebooted.findings.some((f) => f.cveId === 'CVE-2024-9999'), 'the running kernel carries the fix')
  t.equal(rebooted.kernel?.rebootPending, false)
  const foreign = installedSources(inventory({ kernel: '6.18.44-custom' }), debian)
  t.notOk(foreign.sources.some((s) => s.source === 'linux'), 'a kernel not from a package decides nothing')
  t.match(foreign.notes.join(' '), /not from an installed package/)
})
