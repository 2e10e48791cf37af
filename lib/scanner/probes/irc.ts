// IRC (RFC 1459/2812). Many servers speak first with NOTICE lines while they look up the
// client; all of them name themselves only after registration: NICK and USER are answered with
// RPL_WELCOME (001) … RPL_MYINFO (004) `<server> <version> <user modes> <channel modes>`.

import { clean, joinInfo, lines, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [6667, 6668, 6669, 194]

export const tlsPorts = [6697]

/** Products by the version field of RPL_MYINFO; group 1 is the upstream version. */
const PRODUCTS: Array<[RegExp, string]> = [
  [/^ngircd-(\d[\w.~]*)/i, 'ngIRCd'],
  [/^InspIRCd-(\d[\w.]*)/i, 'InspIRCd'],
  [/^UnrealIRCd-(\d[\w.-]*)/i, 'UnrealIRCd'],
  // UnrealIRCd 3.x wrote BASE_VERSION "Unreal" and the version with no dash: `Unreal3.2.10.4`.
  [/^Unreal(3\.\d[\w.-]*)/, 'UnrealIRCd'],
  [/^ircd-hybrid-(\d[\w.]*)/i, 'ircd-hybrid'],
  [/^ircd-ratbox-(\d[\w.]*)/i, 'ircd-ratbox'],
  [/^solanum-(\d[\w.]*)/i, 'Solanum'],
  [/^charybdis-(\d[\w.]*)/i, 'Charybdis'],
  [/^ergo-(\d[\w.]*)/i, 'Ergo'],
  [/^oragono-(\d[\w.]*)/i, 'Ergo']
]

const NICK = 'vulnscan'

/** NICK and USER: registration, after which the server introduces itself. */
export const registration = Buffer.from(`NICK ${NICK}\r\nUSER ${NICK} 0 * :vulnscan\r\n`)

interface Message { prefix?: string, command: string, params: string[] }

function message (line: string): Message | null {
  const m = /^(?::(\S+) )?([A-Za-z]+|\d{3})((?: [^: ][^ ]*)*)(?: :(.*))?$/.exec(line.trim())
  if (!m) return null
  const params = m[3].split(' ').filter(Boolean)
  if (m[4] !== undefined) params.push(m[4])
  return { prefix: m[1], command: m[2].toUpperCase(), params }
}

function messages (reply: Buffer): Message[] {
  return lines(reply).map(message).filter((m): m is Message => m !== null)
}

/** Registration is over once the server sent RPL_MYINFO, or refused us (ERROR, 4xx/5xx numerics). */
export function complete (reply: Buffer): boolean {
  return messages(reply).some((m) => m.command === '004' || m.command === 'ERROR' || m.command === '465')
}

/** The product behind RPL_MYINFO's version field: a known server or the field as it stands. */
function product (version: string): { product?: string, version?: string, versionPrefix?: boolean } {
  for (const [re, name] of PRODUCTS) {
    const m = re.exec(version)
    if (m) {
      const v = m[1].replace(/\.+$/, '')
      // InspIRCd names its major release only (`InspIRCd-3`): never a whole version.
      return { product: name, version: v, ...(MAJOR_ONLY.has(name) && !v.includes('.') ? { versionPrefix: true } : {}) }
    }
  }
  return {}
}

/** Servers whose RPL_MYINFO shows only their major release. */
const MAJOR_ONLY = new Set(['InspIRCd'])

/**
 * Parse whatever the server said. Pre-registration NOTICEs (`NOTICE AUTH`, `NOTICE *`) only say
 * IRC; RPL_MYINFO names the server software.
 */
export function parse (reply: Buffer): ProbeMatch | null {
  const ms = messages(reply)
  if (!ms.length) return null
  const myinfo = ms.find((m) => m.command === '004' && m.params.length >= 3)
  if (myinfo) {
    const [, server, version] = myinfo.params
    const p = product(version)
    // Servers send several 005 lines (13 tokens at most each): NETWORK may be in any of them.
    const network = ms.filter((m) => m.command === '005').flatMap((m) => m.params).find((x) => x.startsWith('NETWORK='))
    return clean({
      service: 'irc',
      ...p,
      extraInfo: joinInfo(`server ${server}`, p.product ? undefined : `version ${version}`, network && `network ${network.slice(8)}`)
    })
  }
  const first = ms[0]
  const irc = ms.some((m) => (m.command === 'NOTICE' && (m.params[0] === 'AUTH' || m.params[0] === '*')) ||
    (m.prefix !== undefined && /^\d{3}$/.test(m.command)) ||
    // `ERROR :Closing link …`, or ngIRCd's answer to an HTTP request: `ERROR :"… This is IRC!"`.
    (m.command === 'ERROR' && /closing link|\bIRC\b/i.test(m.params.join(' '))))
  if (!irc) return null
  return clean({ service: 'irc', extraInfo: first.command === 'ERROR' ? first.params.join(' ').slice(0, 120) : undefined })
}

export const probe: ProbeDescriptor = {
  name: 'irc',
  ports,
  tlsPorts,
  serverFirst: true,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  // Registration works whether or not the server spoke first: send NICK/USER and read up to 004.
  converse: async (io, s) => {
    io.write(registration)
    const reply = await io.read(complete, s.wait(), s.idleMs * 4)
    // PING before 004 on some servers (a cookie check): answer it and read on.
    const ping = messages(reply).find((m) => m.command === 'PING')
    let all = reply
    if (ping && !complete(reply)) {
      io.write(Buffer.from(`PONG :${ping.params[0] ?? ''}\r\n`))
      all = Buffer.concat([reply, await io.read(complete, s.wait(), s.idleMs * 4)])
    }
    io.write(Buffer.from('QUIT :vulnscan\r\n'))
    return { match: parse(all), reply: all }
  },
  continueAfterBanner: true,
  products: [...new Set(PRODUCTS.map(([, p]) => p))]
}
