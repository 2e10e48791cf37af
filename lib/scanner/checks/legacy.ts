// Checks of the services of old and neglected hosts (catalogue entries in ./legacy-catalogue.ts). Each asks the
// one harmless question that proves the exposure on a fresh connection: an SMB1 NEGOTIATE, a harmless
// compile job, an X11 connection setup, `id` to a shell, …

import * as ajp from '../probes/ajp'
import * as distcc from '../probes/distcc'
import { Conn } from '../conn'
import * as mountd from '../probes/mountd'
import * as rservices from '../probes/rservices'
import * as shell from '../probes/shell'
import { complete as smbComplete } from '../probes/smb'
import * as x11 from '../probes/x11'
import * as smb1 from '../probes/smb1'
import { evidenceOf, withConn, type CheckResult, type PortCheck } from './session'

const exposed = (check: string, evidence: string): CheckResult => [{ check, evidence: evidenceOf(evidence) }]

const smb1Enabled: PortCheck = {
  ids: ['VULNSCAN-SMB1-ENABLED'],
  applies: (svc) => svc.service === 'smb',
  run: async (s) => await withConn(s, async (c) => {
    c.write(smb1.negotiateRequest())
    const reply = await c.read(smbComplete, s.wait())
    const n = smb1.parseNegotiate(reply)
    if (n !== null) {
      return exposed('VULNSCAN-SMB1-ENABLED', `NEGOTIATE offering only NT LM 0.12 was accepted (${n.extendedSecurity ? 'extended security' : 'challenge/response'}, signing ${n.signingRequired ? 'required' : 'not required'})`)
    }
    // A refusal (no dialect chosen, an SMB2 answer, or the connection dropped) rules SMB1 out; silence does not.
    return reply.length > 0 || c.closed ? [] : null
  })
}

const distccJobs: PortCheck = {
  ids: ['VULNSCAN-DISTCC-JOBS'],
  applies: (svc) => svc.service === 'distccd',
  run: async (s) => await withConn(s, async (c) => {
    c.write(distcc.jobRequest())
    const reply = await c.read(distcc.complete, s.wait())
    const r = distcc.parseReply(reply)
    if (r !== null) {
      return exposed('VULNSCAN-DISTCC-JOBS', `a compile job (${distcc.JOB_ARGS.join(' ')}) was run without authentication: protocol ${r.protocol}, ` +
        `compiler status ${r.status}, ${r.objectBytes}-byte object file${r.compiler !== undefined ? ` from ${r.compiler}` : ''}`)
    }
    // distccd drops a client it does not allow without a word: the connection closed with nothing is a refusal.
    return reply.length > 0 || c.closed ? [] : null
  })
}

const x11Open: PortCheck = {
  ids: ['VULNSCAN-X11-OPEN'],
  applies: (svc) => svc.service === 'x11',
  run: async (s) => await withConn(s, async (c) => {
    c.write(x11.setupRequest)
    const reply = await c.read(x11.complete, s.wait())
    const setup = x11.parseSetup(reply)
    if (setup === null) return reply.length > 0 ? [] : null
    if (setup.status !== 'success') return []
    return exposed('VULNSCAN-X11-OPEN', `connection setup without authorization accepted: X11 ${setup.major}.${setup.minor}` +
      `${setup.vendor !== undefined ? `, vendor ${setup.vendor} release ${setup.release ?? '?'}` : ''}${setup.screens !== undefined ? `, ${setup.screens} screen(s)` : ''}`)
  })
}

const shellNoAuth: PortCheck = {
  ids: ['VULNSCAN-SHELL-NOAUTH'],
  applies: (svc) => svc.service === 'bindshell',
  run: async (s) => await withConn(s, async (c) => {
    c.write(shell.request)
    const reply = await c.read((r) => /uid=\d+\([^)]*\)[^\n]*\n/.test(r.toString('latin1')), s.wait())
    const seen = shell.readShell(reply)
    if (seen === null) return reply.length > 0 || c.closed ? [] : null
    c.write(Buffer.from('exit\n'))
    return exposed('VULNSCAN-SHELL-NOAUTH', seen.id !== undefined ? `\`id\` answered: ${seen.id}` : `shell prompt "${seen.prompt ?? ''}" without a login`)
  })
}

const rservicesReachable: PortCheck = {
  ids: ['VULNSCAN-RSERVICES'],
  applies: (svc) => ['rexec', 'rlogin', 'rsh'].includes(svc.service),
  run: async (s) => {
    const r = await rservices.ask(s.host, s.port, s.wait(), s.signal)
    if (r === null) return null
    const a = rservices.parseAnswer(r.reply)
    if (a !== null) {
      return exposed('VULNSCAN-RSERVICES', `${s.service.service} on port ${s.port} answered ${a.ok ? '0' : '1'}${a.message !== '' ? ` "${a.message}"` : ''}` +
        ` ${r.privileged ? 'from a privileged source port' : 'from an unprivileged source port'}`)
    }
    // From an unprivileged port a silent drop is what a working rshd does too: no conclusion.
    return r.privileged ? [] : null
  }
}

const ajpExposed: PortCheck = {
  ids: ['VULNSCAN-AJP-EXPOSED'],
  applies: (svc) => svc.service === 'ajp13',
  run: async (s) => await withConn(s, async (c) => {
    c.write(ajp.cping)
    const reply = await c.read(ajp.complete, s.wait())
    if (ajp.isCpong(reply)) return exposed('VULNSCAN-AJP-EXPOSED', 'CPING (12 34 00 01 0a) answered with CPONG (41 42 00 01 09)')
    return reply.length > 0 || c.closed ? [] : null
  })
}

const nfsWorldExports: PortCheck = {
  ids: ['VULNSCAN-NFS-EXPORTS-WORLD'],
  applies: (svc) => svc.service === 'rpcbind',
  run: async (s) => {
    const rpc = await s.open()
    if (rpc === null) return null
    let mountPort: number | null
    try {
      rpc.write(mountd.getportCall())
      mountPort = mountd.parseGetport(await rpc.read(mountd.complete, s.wait()))
    } finally {
      rpc.close()
    }
    if (mountPort === null) return null
    if (mountPort === 0 || mountPort > 65535) return [] // no mountd v3 over TCP registered
    const c = await Conn.open(s.host, mountPort, s.wait(), s.signal)
    if (c === null) return null
    try {
      c.write(mountd.exportCall())
      const list = mountd.parseExports(await c.read(mountd.complete, s.wait()))
      if (list === null) return null
      const open = mountd.openExports(list)
      if (open.length === 0) return []
      return exposed('VULNSCAN-NFS-EXPORTS-WORLD', `mountd (port ${mountPort}) exports to anyone: ` +
        open.map((e) => `${e.dir} (${e.groups.length === 0 ? 'no groups' : e.groups.join(' ')})`).join(', '))
    } finally {
      c.close()
    }
  }
}

export const LEGACY_PORT_CHECKS: readonly PortCheck[] = [smb1Enabled, distccJobs, x11Open, shellNoAuth, rservicesReachable, ajpExposed, nfsWorldExports]
