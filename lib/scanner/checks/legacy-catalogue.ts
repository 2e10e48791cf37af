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
  },
  {
    id: 'VULNSCAN-DISTCC-JOBS',
    title: 'distccd runs compile jobs for anyone',
    severity: 'critical',
    severityReason: 'distccd runs the command line a client sends with its own privileges: anyone it accepts jobs from executes commands on the server (CVE-2004-2687).',
    remediation: 'Restrict distccd to the build hosts (`--allow <network>` / `ALLOWEDNETS`, listen on an internal address only), or use distcc over SSH; firewall port 3632.',
    evidence: 'A harmless compile job (`cc -c` on one declaration, `int vulnscan_probe;`) sent without authentication is answered with DONE and the compiler\'s status and object file.',
    services: ['distccd'],
    reads: false
  },
  {
    id: 'VULNSCAN-X11-OPEN',
    title: 'X11 server accepts connections from anyone',
    severity: 'critical',
    severityReason: 'Any client that reaches the port can read the screen, log keystrokes (passwords included) and type into every window of the session.',
    remediation: 'Start the X server with `-nolisten tcp` (the default of current servers), never with `-ac` or `xhost +`; use SSH X11 forwarding for remote clients.',
    evidence: 'A connection setup with no authorization protocol is answered Success (first byte 1) instead of Failed or Authenticate.',
    services: ['x11'],
    reads: false
  },
  {
    id: 'VULNSCAN-SHELL-NOAUTH',
    title: 'A command shell answers without authentication (bind shell)',
    severity: 'critical',
    severityReason: 'Anyone who reaches the port runs commands on the host as the shell\'s user, often root: the mark of a backdoor or a forgotten debugging listener.',
    remediation: 'Treat the host as compromised until shown otherwise: find and stop the process listening on the port (`ss -ltnp`), remove how it is started, and investigate how it got there.',
    evidence: 'The port greets with a shell prompt, or answers the line `id` with `uid=… gid=…` (a command that only prints the user).',
    services: ['bindshell'],
    reads: false
  },
  {
    id: 'VULNSCAN-RSERVICES',
    title: 'BSD r-services (rexec, rlogin, rsh) are reachable',
    severity: 'high',
    severityReason: 'The r-services send passwords and sessions in clear text and trust the client\'s word for its user name and host (`.rhosts`, `hosts.equiv`): an address-spoofing or a trusted-host compromise is a login.',
    remediation: 'Remove rsh-server / rsh-redone-server (and their inetd or systemd socket entries) and use SSH; if they must stay, firewall ports 512-514.',
    evidence: 'The service\'s opening fields (for user `vulnscan`, from a privileged source port where the scanner can bind one) are answered with the protocol\'s status byte and a message (`Authentication failure`, `Password:`, `Login incorrect.`).',
    services: ['rexec', 'rlogin', 'rsh'],
    reads: false
  },
  {
    id: 'VULNSCAN-AJP-EXPOSED',
    title: 'AJP connector reachable from the network',
    severity: 'high',
    severityReason: 'AJP trusts the request attributes its peer sends; anyone who reaches it speaks as the front-end proxy, and without a secret older Tomcats let them read any file of the web application (Ghostcat, CVE-2020-1938).',
    remediation: 'Bind the AJP connector to the loopback or the proxy\'s network (`address=`), set `secretRequired="true"` with a `secret`, or remove the connector if no proxy uses it; firewall port 8009.',
    evidence: 'A CPING packet (12 34 00 01 0a) is answered with CPONG (41 42 00 01 09).',
    services: ['ajp13'],
    reads: false
  },
  {
    id: 'VULNSCAN-NFS-EXPORTS-WORLD',
    title: 'NFS exports mountable by anyone',
    severity: 'high',
    severityReason: 'Any host can mount the directory and, with NFSv3\'s trust in the client\'s user ids, read (and where writable change) every file as any user but root.',
    remediation: 'Name the clients of each export in /etc/exports (hosts or networks, never `*`), keep `root_squash`, and firewall rpcbind (111), mountd and NFS (2049).',
    evidence: 'rpcbind\'s GETPORT for mountd v3 over TCP, then MOUNT EXPORT, lists an export with no group or the group `*`.',
    services: ['rpcbind'],
    reads: true
  },
  {
    id: 'VULNSCAN-MYSQL-EMPTY-PASSWORD',
    title: 'MySQL/MariaDB root logs in with an empty password (default-login, intrusive)',
    severity: 'critical',
    severityReason: 'Anyone who reaches the port is the database\'s superuser: every database read and changed, and with FILE privileges files on the server read and written.',
    remediation: 'Give root a password (`ALTER USER root@\'%\' IDENTIFIED BY …`) or unix_socket authentication only, drop remote root accounts, and bind the server to the addresses that need it.',
    evidence: 'A login as `root` with an empty password is answered with an OK packet (run only when the scan sets `options.intrusive: true`).',
    services: ['mysql'],
    reads: true,
    intrusive: true
  }
]
