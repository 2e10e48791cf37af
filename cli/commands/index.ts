// Every command of the CLI, in the order `vulnscan --help` lists them. A new command is one module here.
import type { CommandModule } from '../command'
import audit from './audit'
import cancel from './cancel'
import cve from './cve'
import decide from './decide'
import diff from './diff'
import health from './health'
import host from './host'
import hosts from './hosts'
import keys from './keys'
import scan from './scan'
import scans from './scans'
import schedule from './schedule'
import status from './status'
import vulns from './vulns'
import webhook from './webhook'

export const COMMANDS: CommandModule[] = [scan, status, cancel, diff, scans, hosts, host, vulns, decide, cve, schedule, webhook, keys, audit, health]
