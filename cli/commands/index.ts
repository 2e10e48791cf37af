// Every command of the CLI, in the order `vulnscan --help` lists them. A new command is one module here.
import type { CommandModule } from '../command'
import audit from './audit'
import cancel from './cancel'
import cve from './cve'
import decide from './decide'
import health from './health'
import host from './host'
import hosts from './hosts'
import keys from './keys'
import scan from './scan'
import scans from './scans'
import status from './status'
import tags from './tags'
import vulns from './vulns'

export const COMMANDS: CommandModule[] = [scan, status, cancel, scans, hosts, host, tags, vulns, decide, cve, keys, audit, health]
