// distccd, the distcc compile server (port 3632). The protocol is a stream of tokens, four letters and
// eight hex digits (a value or the length of the bytes that follow): the client sends DIST (protocol
// version), ARGC, one ARGV per argument and DOTI (the preprocessed source); the server answers DONE
// (its protocol version), STAT (the compiler's wait status), SERR and SOUT (its output) and DOTO (the
// object file). distccd says nothing until it has a whole job, and drops a client it does not allow
// (or a compiler outside its whitelist) without a word, so the only question that identifies it is a
// job: ours compiles one declaration of an unused variable (`int vulnscan_probe;`) with `cc -c`, which
// runs nothing but the compiler and writes nothing outside distccd's own temporary directory. The
// object file that comes back names the compiler (`GCC: (Debian 12.2.0-14+deb12u1) 12.2.0`).

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [3632]

const token = (name: string, value: number): Buffer => Buffer.from(name + value.toString(16).padStart(8, '0'), 'latin1')
const sized = (name: string, data: Buffer): Buffer => Buffer.concat([token(name, data.length), data])

/** The harmless job: `cc -c vulnscan.i -o vulnscan.o` on a one-line preprocessed source. */
export const JOB_ARGS = ['cc', '-c', 'vulnscan.i', '-o', 'vulnscan.o']
export const JOB_SOURCE = 'int vulnscan_probe;\n'

export function jobRequest (): Buffer {
  return Buffer.concat([token('DIST', 1), token('ARGC', JOB_ARGS.length),
    ...JOB_ARGS.map((a) => sized('ARGV', Buffer.from(a, 'latin1'))), sized('DOTI', Buffer.from(JOB_SOURCE, 'latin1'))])
}

export interface DistccReply {
  protocol: number
  /** The compiler's wait status (0: it ran and succeeded). */
  status: number
  stderr: string
  /** Size of the object file returned. */
  objectBytes: number
  /** The compiler named in the object file's `.comment` section. */
  compiler?: string
  /** Every token arrived. */
  whole: boolean
}

/** The tokens of an answer, as far as they have arrived; null unless it starts with DONE. */
export function parseReply (reply: Buffer): DistccReply | null {
  const head = /^DONE([0-9a-f]{8})/.exec(reply.subarray(0, 12).toString('latin1'))
  if (head === null) return null
  const out: DistccReply = { protocol: parseInt(head[1], 16), status: -1, stderr: '', objectBytes: 0, whole: false }
  if (out.protocol < 1 || out.protocol > 3) return null
  let off = 12
  while (off + 12 <= reply.length) {
    const name = reply.subarray(off, off + 4).toString('latin1')
    const value = parseInt(reply.subarray(off + 4, off + 12).toString('latin1'), 16)
    if (!/^[A-Z]{4}$/.test(name) || Number.isNaN(value)) return out
    off += 12
    if (name === 'STAT') { out.status = value; continue }
    const data = reply.subarray(off, off + value)
    off += value
    if (name === 'SERR') out.stderr = data.toString('latin1').slice(0, 200)
    if (name === 'DOTO') {
      out.objectBytes = value
      const gcc = /GCC: \(([^)]{1,80})\) ([\d.]+)/.exec(data.toString('latin1'))
      const clang = /((?:Debian |Ubuntu )?clang version [\w.+~-]+)/.exec(data.toString('latin1'))
      if (gcc !== null) out.compiler = `GCC (${gcc[1]}) ${gcc[2]}`
      else if (clang !== null) out.compiler = clang[1]
      out.whole = off <= reply.length
      return out
    }
  }
  return out
}

/** The answer is whole once DOTO's bytes have arrived (or the compiler failed: no DOTO follows its output). */
export function complete (reply: Buffer): boolean {
  const r = parseReply(reply)
  return r !== null && r.whole
}

export function parse (reply: Buffer): ProbeMatch | null {
  const r = parseReply(reply)
  if (r === null) return null
  return clean({
    service: 'distccd',
    product: 'distccd',
    extraInfo: joinInfo(`protocol ${r.protocol}`, r.compiler !== undefined && `compiler ${r.compiler}`,
      r.status !== 0 && r.status !== -1 && `compile status ${r.status}`)
  })
}

export const probe: ProbeDescriptor = {
  name: 'distccd',
  ports,
  // Only on its own port: the question is a compile job, never sent to a port that might be something else.
  request: () => jobRequest(),
  complete,
  parse: (reply) => parse(reply),
  products: ['distccd']
}
