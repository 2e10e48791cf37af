// Package URLs of credentialed findings, as the purl specification writes them (type, namespace, name, version
// percent-encoded, the distro qualifier).
import { test } from 'tap'
import { packageUrl } from '../../../lib/reports/vex'
import type { FindingRecord } from '../../../lib/domain/findings'

const withPackage = (family: string, release: string | null, name: string, installed: string): FindingRecord => ({
  package: { name, source: name, installed, fixed: 'no fix yet', binaries: [name] },
  distribution: { family, release, sourcePackage: name, packageVersion: installed, fixedVersion: null, trackerStatus: 'open', urgency: null }
} as unknown as FindingRecord)

test('package URLs', async (t) => {
  t.equal(packageUrl(withPackage('debian', 'bookworm', 'openssh-server', '1:9.2p1-2+deb12u3')), 'pkg:deb/debian/openssh-server@1%3A9.2p1-2%2Bdeb12u3?distro=debian-bookworm')
  t.equal(packageUrl(withPackage('ubuntu', 'jammy', 'libssl3', '3.0.2-0ubuntu1.15')), 'pkg:deb/ubuntu/libssl3@3.0.2-0ubuntu1.15?distro=ubuntu-jammy')
  t.equal(packageUrl(withPackage('alpine', '3.19', 'musl', '1.2.4_git20230717-r4')), 'pkg:apk/alpine/musl@1.2.4_git20230717-r4?distro=alpine-3.19')
  t.equal(packageUrl(withPackage('rhel', '9', 'openssl', '1:3.0.7-27.el9')), 'pkg:rpm/redhat/openssl@1%3A3.0.7-27.el9?distro=rhel-9')
  t.equal(packageUrl({ package: undefined } as unknown as FindingRecord), null, 'a banner finding has none')
})
