// Bind shells: a port where a command interpreter reads the connection. An interactive one greets with its
// prompt (`sh-5.2# `, `bash-5.2$ `, `root@host:~# `, a bare `# ` or `$ `), often after bash's complaints that it
// has no terminal; a plain `/bin/sh` on a socket says nothing until it is given a line. The question for those
// is `id`, a command that only prints who the shell runs as (`uid=0(root) gid=0(root) …`).

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

// 1524 is ingreslock, where old backdoors (and Metasploitable's root shell) listen.
export const ports = [1524]

export const request = Buffer.from('id\n')

/** Terminal control sequences a shell on a pseudo-terminal writes (bracketed paste on and off). */
function plain (reply: Buffer): string {
  return reply.toString('latin1').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '')
}

const PROMPT = /^(?:(?:ba|da|z|k|a)?sh-\d+(?:\.\d+)*|[\w.-]{1,32}@[\w.-]{1,64}(?::[^\s#$]{0,100})?|\[[\w.-]{1,32}@[\w.-]{1,64} [^\]\n]{0,100}\]|)\s?([#$]) ?$/

/** What the reply shows: a prompt (the last line) and the `id` output, if any. */
export function readShell (reply: Buffer): { prompt?: string, root?: boolean, id?: string } | null {
  if (reply.length === 0 || reply.length > 4096) return null
  const text = plain(reply)
  const id = /(?:^|\n)(uid=\d+\([\w.-]*\) gid=\d+\([\w.-]*\)[^\n]{0,200})/.exec(text)
  const last = text.slice(text.lastIndexOf('\n') + 1)
  const prompt = PROMPT.exec(last)
  if (id === null && prompt === null) return null
  // A prompt alone must be the reply's end and most of it: bash's no-terminal warnings may come before it.
  if (id === null && text.split('\n').some((l, i, all) => i < all.length - 1 && l.trim() !== '' && !/^(?:bash|sh|dash|zsh): /.test(l))) return null
  const out: { prompt?: string, root?: boolean, id?: string } = {}
  if (prompt !== null) {
    out.prompt = last.trim()
    out.root = prompt[1] === '#'
  }
  if (id !== null) {
    out.id = id[1].trim()
    out.root = /^uid=0\(/.test(out.id)
  }
  return out
}

export function parse (reply: Buffer): ProbeMatch | null {
  const s = readShell(reply)
  if (s === null) return null
  return clean({
    service: 'bindshell',
    extraInfo: joinInfo(s.root === true ? 'root shell' : 'shell', s.prompt !== undefined && `prompt "${s.prompt}"`, s.id)
  })
}

export const probe: ProbeDescriptor = {
  name: 'bindshell',
  ports,
  // A prompt is a banner: tried on whatever a silent-looking port says first. bash without a terminal complains
  // first; its prompt follows on the same write or the next one.
  banner: {
    claims: (r) => /^(?:bash|sh|dash|zsh): /.test(plain(r)),
    complete: (r) => readShell(r)?.prompt !== undefined || plain(r).split('\n').length > 4
  },
  recognise: (reply) => parse(reply),
  request: () => request,
  complete: (r) => /uid=\d+\([^)]*\)[^\n]*\n/.test(r.toString('latin1')),
  parse: (reply) => parse(reply),
  fallback: 'full',
  products: []
}
