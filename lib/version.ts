import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The service's version, from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version
