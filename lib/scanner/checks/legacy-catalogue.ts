// Catalogue entries of the services of old and neglected hosts (SMB1, distccd, X11, bind shells, the r-services,
// AJP, NFS). Kept apart from ./catalogue.ts, which lists them with the rest; ./legacy.ts has the checks.

import type { CheckDefinition } from './catalogue'

export const LEGACY_CHECKS: readonly CheckDefinition[] = [
  {
    id: 'VULNSCAN-SMB1-ENABLED',
    title: 'SMB1 is enabled',
    severity: 'high',
    severityReason: 'SMB1 lacks the protections of SMB2/3 (pre-authentication integrity, modern signing and encryption) and is the protocol of wormable flaws such as EternalBlue (CVE-2017-0144) and SambaCry-era attacks.',
    remediation: 'Turn SMB1 off: Samba `server min protocol = SMB2_10` (or newer), Windows `Set-SmbServerConfiguration -EnableSMB1Protocol $false`; upgrade servers that speak nothing newer.',
    evidence: 'A NEGOTIATE offering only the `NT LM 0.12` dialect is answered with that dialect chosen.',
    services: ['smb'],
    reads: false
  }
]
