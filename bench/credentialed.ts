// Credentialed scan benchmark (not a test), on this machine's real sshd (Debian's openssh-server, started on a random
// loopback address for a throwaway user, as the tests do; needs root) and its own dpkg database:
// 1. collect + match one host: log in, read the full package list, decide it against a full-size Debian tracker;
// 2. logins at once: `--hosts` collections, `--concurrency` at a time, against the same sshd (hosts per minute);
// 3. the matcher per source package (tracker read and decision), p50/p99, with the full tracker loaded.
//
// The tracker is SYNTHETIC in the tracker's real JSON format: every installed source package with the CVEs its
// changelog.Debian.gz names (resolved in the entry that names them), plus made-up source packages up to
// --tracker-packages, each with CVEs in four releases, to about the size of the real file (30,000 packages,
// 1,000,000 package/CVE/release verdicts).
//
//   npx tsx bench/credentialed.ts [--hosts 200] [--concurrency 50] [--tracker-packages 30000]
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { createMemorySourceStore } from '../lib/sources/memory'
import { withReadCache } from '../lib/sources/read-cache'
import { importDebianTracker } from '../lib/distro/debian-tracker'
import { MemoryStore } from '../lib/store/memory/store'
import { collectHost } from '../lib/credentialed/collect'
import { semaphore } from '../lib/credentialed/scanning'
import { packageFamilyOf } from '../lib/credentialed/families'
import { decidePackage, installedSources, matchPackages } from '../lib/credentialed/packages'
import type { OpenedCredential } from '../lib/credentials/vault'
import { createScanUser, keyPair, startLabSshd } from '../test/support/ssh-lab'
import { changelogEntries, changelogOf, installedSources as machineSources } from '../test/support/changelog-tracker'

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '50' },
    'tracker-packages': { type: 'string', default: '30000' }
  }
})
const HOSTS = Number(args.hosts)
const CONCURRENCY = Number(args.concurrency)
const TRACKER_PACKAGES = Number(args['tracker-packages'])
const RELEASES = ['bullseye', 'bookworm', 'trixie', 'sid']

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** A full-size tracker file in the real JSON format, streamed to disk. Returns its verdict count. */
async function writeTracker (file: string): Promise<{ packages: number, verdicts: number, bytes: number }> {
  const out = fs.createWriteStream(file)
  let verdicts = 0
  let packages = 0
  let first = true
  const write = async (s: string): Promise<void> => { if (!out.write(s)) await once(out, 'drain') }
  await write('{')
  const pkgJson = (name: string, cves: Array<[string, Record<string, { status: string, fixed_version?: string, urgency: string }>]>): string => {
    const inner = cves.map(([cve, releases]) => {
      const rel = Object.entries(releases).map(([r, v]) => `"${r}":{"status":"${v.status}","repositories":{"${r}":"1.0-1"},${v.fixed_version !== undefined ? `"fixed_version":"${v.fixed_version}",` : ''}"urgency":"${v.urgency}"}`).join(',')
      return `"${cve}":{"description":"${name} issue","scope":"remote","releases":{${rel}}}`
    }).join(',')
    return `${first ? '' : ','}"${name}":{${inner}}`
  }
  for (const [source, s] of machineSources()) {
    const text = changelogOf(s.binaries)
    const cves = new Map<string, string>()
    if (text !== null) for (const e of changelogEntries(text)) for (const cve of e.cves) cves.set(cve, e.version)
    const list: Array<[string, Record<string, { status: string, fixed_version?: string, urgency: string }>]> = []
    for (const [cve, v] of cves) list.push([cve, Object.fromEntries(RELEASES.map((r) => [r, { status: 'resolved', fixed_version: v, urgency: 'medium' }]))])
    // Every installed package gets a few more, open and fixed above what is installed, so each is looked up for real.
    for (let i = 0; i < 3; i++) list.push([`CVE-2099-${String(packages * 10 + i).padStart(6, '0')}`, Object.fromEntries(RELEASES.map((r) => [r, i === 0 ? { status: 'open', urgency: 'low' } : { status: 'resolved', fixed_version: `${s.version}+deb12u9${i}`, urgency: 'high' }]))])
    await write(pkgJson(source, list))
    first = false
    packages++
    verdicts += list.length * RELEASES.length
  }
  let n = 0
  while (packages < TRACKER_PACKAGES) {
    // Sizes as skewed as the real tracker's: most packages have a handful of CVEs, a few thousands.
    const count = n % 1000 === 0 ? 3000 : n % 50 === 0 ? 200 : 1 + (n % 8)
    const list: Array<[string, Record<string, { status: string, fixed_version?: string, urgency: string }>]> = []
    for (let i = 0; i < count; i++) list.push([`CVE-${2000 + (i % 26)}-${String(n * 7 + i).padStart(5, '0')}`, Object.fromEntries(RELEASES.map((r, k) => [r, k === 3 && i % 5 === 0 ? { status: 'open', urgency: 'unimportant' } : { status: 'resolved', fixed_version: `${1 + (i % 9)}.${i % 13}-${1 + k}`, urgency: 'medium' }]))])
    await write(pkgJson(`synthetic-pkg-${n}`, list))
    packages++
    n++
    verdicts += count * RELEASES.length
  }
  await write('}')
  out.end()
  await once(out, 'finish')
  return { packages, verdicts, bytes: fs.statSync(file).size }
}

async function main (): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/credentialed.ts needs root: it creates a throwaway login user for the real sshd')
  const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ')
  console.log(`machine: ${os.cpus().length} cores, load ${load()} at start, node ${process.version}`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-bench-cred-'))
  const trackerFile = path.join(dir, 'debian-tracker.json')
  let t0 = performance.now()
  const size = await writeTracker(trackerFile)
  console.log(`tracker: ${size.packages} source packages, ${size.verdicts} package/CVE/release verdicts, ${(size.bytes / 1e6).toFixed(1)} MB written in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  const sources = await createMemorySourceStore()
  t0 = performance.now()
  const imported = await importDebianTracker(trackerFile, sources)
  console.log(`tracker import (memory store): ${imported.packages} package/release entries, ${imported.cves} verdicts in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  fs.rmSync(dir, { recursive: true, force: true })

  const user = createScanUser()
  const key = keyPair()
  const sshd = await startLabSshd({ user: user.name, authorizedKeys: [key.publicKey] })
  try {
    const cred: OpenedCredential = { id: 'bench', name: 'bench', username: user.name, port: sshd.port, privateKey: key.privateKey, hostKeys: [], scope: [] }
    const store = new MemoryStore()
    const deps = { store, limits: { connectTimeoutMs: 30_000, commandTimeoutMs: 120_000, outputMaxBytes: 16 * 1024 * 1024 }, limit: semaphore(CONCURRENCY) }
    const noCves = async (ids: string[]): Promise<null[]> => ids.map(() => null)

    // 1. One host, end to end.
    const one: number[] = []
    let packages = 0
    let findings = 0
    for (let i = 0; i < 5; i++) {
      const start = performance.now()
      const out = await collectHost(sshd.host, [cred], deps)
      if (!out.ok) throw new Error(`collection failed: ${out.reason}: ${out.message}`)
      const family = packageFamilyOf(out.inventory.os)
      if (family === null) throw new Error('no family for this machine')
      const m = await matchPackages(sshd.host, out.inventory, family, { sources: withReadCache(sources), cves: noCves })
      one.push(performance.now() - start)
      packages = out.inventory.packages.length
      findings = m.findings.length
    }
    one.sort((a, b) => a - b)
    console.log(`collect + match one host: ${packages} packages → ${findings} findings; median ${one[2].toFixed(0)} ms, worst ${one[4].toFixed(0)} ms of 5 (target ≤ 3000 ms); load ${load()}`)

    // 2. Many logins at once.
    const cpu0 = process.cpuUsage()
    const start = performance.now()
    let failed = 0
    await Promise.all(Array.from({ length: HOSTS }, async () => {
      const out = await collectHost(sshd.host, [cred], deps)
      if (!out.ok) failed++
    }))
    const seconds = (performance.now() - start) / 1000
    const cpu = process.cpuUsage(cpu0)
    console.log(`${HOSTS} collections, ${CONCURRENCY} at once: ${seconds.toFixed(1)} s, ${(HOSTS / seconds * 60).toFixed(0)} hosts/min (target ≥ 200), ${failed} failed; ` +
      `this process ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU (${((cpu.user + cpu.system) / 1e3 / HOSTS).toFixed(0)} ms per host; the rest is sshd and dpkg-query on the same 2 cores); load ${load()}`)

    // 3. The matcher per source package, with the full tracker loaded.
    const out = await collectHost(sshd.host, [cred], deps)
    if (!out.ok) throw new Error('collection failed')
    const family = packageFamilyOf(out.inventory.os)!
    const release = family.release(out.inventory.os, out.inventory)!
    const { sources: installed } = installedSources(out.inventory, family)
    const times: number[] = []
    for (let round = 0; round < 5; round++) {
      for (const s of installed) {
        const t = performance.now()
        const entries = await family.readEntries(sources, release, s.source)
        if (entries !== null) for (const [cve, e] of entries) decidePackage(s, cve, e, family, out.inventory.os)
        times.push(performance.now() - t)
      }
    }
    times.sort((a, b) => a - b)
    console.log(`matcher per source package (${installed.length} installed sources × 5 rounds, full tracker, no read cache): p50 ${percentile(times, 50).toFixed(3)} ms, p99 ${percentile(times, 99).toFixed(3)} ms, max ${times[times.length - 1].toFixed(3)} ms (target p99 < 1 ms); load ${load()}`)
  } finally {
    await sshd.stop()
    user.remove()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
