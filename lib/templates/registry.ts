// The loaded set: the project's own templates (templates/ at the repository root) and the user's directories
// (TEMPLATES_DIR), each .yaml/.yml file under them, recursively. A user template with the id of a project one is
// refused (ids are finding rules: two templates may not share one).

import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, delimiter, join, resolve } from 'node:path'
import type { KeyObject } from 'node:crypto'
import { isRefusal, loadTemplate } from './load'
import { signingKey } from './signing'
import type { LoadedTemplate, Refusal, TemplateOrigin } from './types'

/** The project's own templates. */
export const PROJECT_TEMPLATES_DIR = resolve(__dirname, '..', '..', 'templates')
const MAX_FILES = 20000
const MAX_FILE_BYTES = 256 * 1024

export interface TemplateSet {
  templates: LoadedTemplate[]
  refused: Refusal[]
}

export interface TemplateConfig {
  TEMPLATES_DIR: string
  TEMPLATES_SIGNING_CERT: string
  TEMPLATES_REQUIRE_SIGNED: boolean
}

/** TEMPLATES_DIR's directories: separated by commas or the platform's path delimiter. */
export function templateDirs (value: string): string[] {
  return value.split(new RegExp(`[,${delimiter === ';' ? ';' : ':'}]`)).map((s) => s.trim()).filter((s) => s !== '')
}

function filesUnder (dir: string, out: string[] = []): string[] {
  let names: string[]
  try {
    names = readdirSync(dir).sort()
  } catch {
    return out
  }
  for (const n of names) {
    if (out.length >= MAX_FILES) break
    if (n.startsWith('.')) continue
    const p = join(dir, n)
    let st
    try {
      st = statSync(p)
    } catch {
      continue
    }
    if (st.isDirectory()) filesUnder(p, out)
    else if (/\.ya?ml$/i.test(n)) out.push(p)
  }
  return out
}

/** Load every template under the directories. */
export function loadDirectory (dir: string, origin: TemplateOrigin, key: KeyObject | null, requireSigned: boolean): TemplateSet {
  const set: TemplateSet = { templates: [], refused: [] }
  let isDir = false
  try {
    isDir = statSync(dir).isDirectory()
  } catch {}
  if (!isDir) {
    set.refused.push({ file: dir, origin, reason: 'not a directory' })
    return set
  }
  for (const file of filesUnder(dir)) {
    let text: string
    try {
      if (statSync(file).size > MAX_FILE_BYTES) {
        set.refused.push({ file, origin, reason: `larger than ${MAX_FILE_BYTES} bytes` })
        continue
      }
      text = readFileSync(file, 'utf8')
    } catch (err) {
      set.refused.push({ file, origin, reason: `unreadable: ${(err as Error).message}` })
      continue
    }
    const r = loadTemplate(text, file, { origin, key, requireSigned })
    if (isRefusal(r)) set.refused.push(r)
    else set.templates.push(r)
  }
  return set
}

/** The project's set and the user's directories, duplicates refused. */
export function loadTemplateSet (config: TemplateConfig, projectDir = PROJECT_TEMPLATES_DIR): TemplateSet {
  const key = config.TEMPLATES_SIGNING_CERT === '' ? null : signingKey(config.TEMPLATES_SIGNING_CERT)
  const sets = [loadDirectory(projectDir, 'project', key, config.TEMPLATES_REQUIRE_SIGNED), ...templateDirs(config.TEMPLATES_DIR).map((d) => loadDirectory(d, 'user', key, config.TEMPLATES_REQUIRE_SIGNED))]
  const out: TemplateSet = { templates: [], refused: [] }
  const seen = new Map<string, string>()
  for (const s of sets) {
    out.refused.push(...s.refused)
    for (const t of s.templates) {
      const first = seen.get(t.id.toLowerCase())
      if (first !== undefined) {
        out.refused.push({ file: t.file, id: t.id, origin: t.origin, reason: `id ${t.id} is already taken by ${basename(first)}` })
        continue
      }
      seen.set(t.id.toLowerCase(), t.file)
      out.templates.push(t)
    }
  }
  return out
}

const cache = new Map<string, TemplateSet>()

/** The set for a configuration, loaded once per process. */
export function templateSet (config: TemplateConfig): TemplateSet {
  const k = `${config.TEMPLATES_DIR}\0${config.TEMPLATES_SIGNING_CERT}\0${String(config.TEMPLATES_REQUIRE_SIGNED)}`
  let s = cache.get(k)
  if (s === undefined) {
    s = loadTemplateSet(config)
    cache.set(k, s)
  }
  return s
}
