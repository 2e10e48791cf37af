// Debian and Ubuntu releases and how long the distributions' security trackers cover them. A banner from a release
// no tracker covers any more (an Ubuntu 8.04 `Debian-8ubuntu1`, a Debian 7 `deb7u` tag) is not decided as if it were
// supported: the release itself is reported out of support, and its CVEs are matched on the upstream version.
//
// The dates are Debian's distro-info-data (0.58+deb12u6: /usr/share/distro-info/{debian,ubuntu}.csv): for Debian the
// end of LTS (`eol-lts`; the security tracker covers LTS, not Freexian's ELTS), for Ubuntu the end of ESM or Legacy
// support (`eol-esm`, `eol-legacy`; Ubuntu's OSV data covers Ubuntu Pro), else the end of standard support (`eol`).

import type { DistroFamily } from './package'

export interface DistroRelease {
  family: DistroFamily
  /** `12`, `22.04`. */
  version: string
  codename: string
  released: string
  /** The last day a tracker covers the release; null while no end is set. */
  trackedUntil: string | null
}

export const RELEASES: readonly DistroRelease[] = Object.freeze([
  { family: 'debian', version: '4.0', codename: 'etch', released: '2007-04-08', trackedUntil: '2010-02-15' },
  { family: 'debian', version: '5.0', codename: 'lenny', released: '2009-02-14', trackedUntil: '2012-02-06' },
  { family: 'debian', version: '6.0', codename: 'squeeze', released: '2011-02-06', trackedUntil: '2016-02-29' },
  { family: 'debian', version: '7', codename: 'wheezy', released: '2013-05-04', trackedUntil: '2018-05-31' },
  { family: 'debian', version: '8', codename: 'jessie', released: '2015-04-26', trackedUntil: '2020-06-30' },
  { family: 'debian', version: '9', codename: 'stretch', released: '2017-06-17', trackedUntil: '2022-06-30' },
  { family: 'debian', version: '10', codename: 'buster', released: '2019-07-06', trackedUntil: '2024-06-30' },
  { family: 'debian', version: '11', codename: 'bullseye', released: '2021-08-14', trackedUntil: '2026-08-31' },
  { family: 'debian', version: '12', codename: 'bookworm', released: '2023-06-10', trackedUntil: '2028-06-30' },
  { family: 'debian', version: '13', codename: 'trixie', released: '2025-08-09', trackedUntil: '2030-06-30' },
  { family: 'ubuntu', version: '4.10', codename: 'warty', released: '2004-10-20', trackedUntil: '2006-04-30' },
  { family: 'ubuntu', version: '5.04', codename: 'hoary', released: '2005-04-08', trackedUntil: '2006-10-31' },
  { family: 'ubuntu', version: '5.10', codename: 'breezy', released: '2005-10-12', trackedUntil: '2007-04-13' },
  { family: 'ubuntu', version: '6.06', codename: 'dapper', released: '2006-06-01', trackedUntil: '2009-07-14' },
  { family: 'ubuntu', version: '6.10', codename: 'edgy', released: '2006-10-26', trackedUntil: '2008-04-25' },
  { family: 'ubuntu', version: '7.04', codename: 'feisty', released: '2007-04-19', trackedUntil: '2008-10-19' },
  { family: 'ubuntu', version: '7.10', codename: 'gutsy', released: '2007-10-18', trackedUntil: '2009-04-18' },
  { family: 'ubuntu', version: '8.04', codename: 'hardy', released: '2008-04-24', trackedUntil: '2011-05-12' },
  { family: 'ubuntu', version: '8.10', codename: 'intrepid', released: '2008-10-30', trackedUntil: '2010-04-30' },
  { family: 'ubuntu', version: '9.04', codename: 'jaunty', released: '2009-04-23', trackedUntil: '2010-10-23' },
  { family: 'ubuntu', version: '9.10', codename: 'karmic', released: '2009-10-29', trackedUntil: '2011-04-30' },
  { family: 'ubuntu', version: '10.04', codename: 'lucid', released: '2010-04-29', trackedUntil: '2013-05-09' },
  { family: 'ubuntu', version: '10.10', codename: 'maverick', released: '2010-10-10', trackedUntil: '2012-04-10' },
  { family: 'ubuntu', version: '11.04', codename: 'natty', released: '2011-04-28', trackedUntil: '2012-10-28' },
  { family: 'ubuntu', version: '11.10', codename: 'oneiric', released: '2011-10-13', trackedUntil: '2013-05-09' },
  { family: 'ubuntu', version: '12.04', codename: 'precise', released: '2012-04-26', trackedUntil: '2019-04-26' },
  { family: 'ubuntu', version: '12.10', codename: 'quantal', released: '2012-10-18', trackedUntil: '2014-05-16' },
  { family: 'ubuntu', version: '13.04', codename: 'raring', released: '2013-04-25', trackedUntil: '2014-01-27' },
  { family: 'ubuntu', version: '13.10', codename: 'saucy', released: '2013-10-17', trackedUntil: '2014-07-17' },
  { family: 'ubuntu', version: '14.04', codename: 'trusty', released: '2014-04-17', trackedUntil: '2026-04-28' },
  { family: 'ubuntu', version: '14.10', codename: 'utopic', released: '2014-10-23', trackedUntil: '2015-07-23' },
  { family: 'ubuntu', version: '15.04', codename: 'vivid', released: '2015-04-23', trackedUntil: '2016-02-04' },
  { family: 'ubuntu', version: '15.10', codename: 'wily', released: '2015-10-22', trackedUntil: '2016-07-28' },
  { family: 'ubuntu', version: '16.04', codename: 'xenial', released: '2016-04-21', trackedUntil: '2028-04-25' },
  { family: 'ubuntu', version: '16.10', codename: 'yakkety', released: '2016-10-13', trackedUntil: '2017-07-20' },
  { family: 'ubuntu', version: '17.04', codename: 'zesty', released: '2017-04-13', trackedUntil: '2018-01-13' },
  { family: 'ubuntu', version: '17.10', codename: 'artful', released: '2017-10-19', trackedUntil: '2018-07-19' },
  { family: 'ubuntu', version: '18.04', codename: 'bionic', released: '2018-04-26', trackedUntil: '2030-04-30' },
  { family: 'ubuntu', version: '18.10', codename: 'cosmic', released: '2018-10-18', trackedUntil: '2019-07-18' },
  { family: 'ubuntu', version: '19.04', codename: 'disco', released: '2019-04-18', trackedUntil: '2020-01-23' },
  { family: 'ubuntu', version: '19.10', codename: 'eoan', released: '2019-10-17', trackedUntil: '2020-07-17' },
  { family: 'ubuntu', version: '20.04', codename: 'focal', released: '2020-04-23', trackedUntil: '2032-04-27' },
  { family: 'ubuntu', version: '20.10', codename: 'groovy', released: '2020-10-22', trackedUntil: '2021-07-22' },
  { family: 'ubuntu', version: '21.04', codename: 'hirsute', released: '2021-04-22', trackedUntil: '2022-01-20' },
  { family: 'ubuntu', version: '21.10', codename: 'impish', released: '2021-10-14', trackedUntil: '2022-07-14' },
  { family: 'ubuntu', version: '22.04', codename: 'jammy', released: '2022-04-21', trackedUntil: '2034-04-25' },
  { family: 'ubuntu', version: '22.10', codename: 'kinetic', released: '2022-10-20', trackedUntil: '2023-07-20' },
  { family: 'ubuntu', version: '23.04', codename: 'lunar', released: '2023-04-20', trackedUntil: '2024-01-25' },
  { family: 'ubuntu', version: '23.10', codename: 'mantic', released: '2023-10-12', trackedUntil: '2024-07-11' },
  { family: 'ubuntu', version: '24.04', codename: 'noble', released: '2024-04-25', trackedUntil: '2036-04-29' },
  { family: 'ubuntu', version: '24.10', codename: 'oracular', released: '2024-10-10', trackedUntil: '2025-07-10' },
  { family: 'ubuntu', version: '25.04', codename: 'plucky', released: '2025-04-17', trackedUntil: '2026-01-15' },
  { family: 'ubuntu', version: '25.10', codename: 'questing', released: '2025-10-09', trackedUntil: '2026-07-09' },
  { family: 'ubuntu', version: '26.04', codename: 'resolute', released: '2026-04-23', trackedUntil: '2038-04-27' },
])

const BY_CODENAME = new Map(RELEASES.map((r) => [`${r.family}:${r.codename}`, r]))
const BY_VERSION = new Map(RELEASES.map((r) => [`${r.family}:${r.version}`, r]))

export function releaseByCodename (family: DistroFamily, codename: string): DistroRelease | undefined {
  return BY_CODENAME.get(`${family}:${codename.toLowerCase()}`)
}

/** Debian by major number (`7`, `6.0` as `6`), Ubuntu by `YY.MM`. */
export function releaseByVersion (family: DistroFamily, version: string): DistroRelease | undefined {
  return BY_VERSION.get(`${family}:${version}`) ?? (family === 'debian' ? BY_VERSION.get(`debian:${version}.0`) : undefined)
}

/** Whether a tracker still covers the release on `at` (the end day included). */
export function tracked (r: DistroRelease, at: Date = new Date()): boolean {
  return r.trackedUntil === null || at.getTime() < Date.parse(r.trackedUntil) + 86_400_000
}

/** The releases a tracker covers on `at`, of one family or both: where a banner's upstream version may be a package. */
export function trackedReleases (at: Date = new Date(), family?: DistroFamily): DistroRelease[] {
  return RELEASES.filter((r) => (family === undefined || r.family === family) && tracked(r, at) && Date.parse(r.released) <= at.getTime())
}
