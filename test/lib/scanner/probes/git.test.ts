import { spawnSync } from 'node:child_process'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { gitDaemon } from '../../../../bench/support/daemon-specs'
import { complete, parse, request } from '../../../../lib/scanner/probes/git'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

const pkt = (s: string): string => (Buffer.byteLength(s) + 4).toString(16).padStart(4, '0') + s

test('pkt-line request and replies', async (t) => {
  t.equal(request('h').toString('latin1'), pkt('git-upload-pack /\0host=h\0\0version=2\0'))
  // git daemon 2.39.5 (Debian 12) serving a repository, asked with version=2.
  const v2 = Buffer.from('000eversion 2\n0015agent=git/2.39.5\n0013ls-refs=unborn\n0020fetch=shallow wait-for-done\n0012server-option\n0017object-format=sha1\n0010object-info\n0000')
  t.ok(complete(v2))
  t.same(parse(v2), { service: 'git', product: 'Git', version: '2.39.5', extraInfo: 'protocol v2' })
  const v0 = Buffer.from(pkt('a'.repeat(40) + ' HEAD\0multi_ack thin-pack side-band side-band-64k ofs-delta shallow symref=HEAD:refs/heads/main object-format=sha1 agent=git/2.30.2\n') + '0000')
  t.same(parse(v0), { service: 'git', product: 'Git', version: '2.30.2' })
  t.same(parse(Buffer.from('001dERR no such repository: /')), { service: 'git', extraInfo: 'no such repository: /' })
  t.same(parse(Buffer.from('000eversion 2\n0015agent=custom/1.0\n0000')), { service: 'git', extraInfo: 'agent custom/1.0' }, 'an unknown agent is no product')
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
})

test('Debian\'s git daemon: the protocol without a repository, the version where one is served', { skip: daemonUnavailable('/usr/lib/git-core/git-daemon', 'git') }, async (t) => {
  const start = async (servedAtRoot: boolean): ReturnType<typeof startDaemon> => await startDaemon(gitDaemon(servedAtRoot))
  const plain = await start(false)
  t.teardown(plain.stop)
  const r = await detectService({ host: plain.host, port: plain.port, level: 'full' })
  t.match(r, { service: 'git', extraInfo: /no such repository/ })
  t.equal(r.product, undefined, 'an error names no product')
  const served = await start(true)
  t.teardown(served.stop)
  const want = /(\d+(?:\.\d+)+)/.exec(spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout)?.[1]
  const s = await detectService({ host: served.host, port: served.port, level: 'full' })
  t.match(s, { service: 'git', product: 'Git', version: want })
  t.equal(want, upstream(served.packageVersion))
})
