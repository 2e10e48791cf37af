// The README is the front door and docs/ holds the rest: every relative link in them reaches a file, and every
// #anchor a heading of the file it names (GitHub's slugs). Other branches write some documents the README links
// before they land here: those names, and only those, may be missing.
import { test } from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

const ROOT = join(__dirname, '..')
const PENDING = new Set<string>([])

const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -. */
function slug (heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
}

function anchors (file: string): Set<string> {
  const out = new Set<string>()
  let fence = false
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence
    const m = !fence ? /^#{1,6} (.*)$/.exec(line) : null
    if (m !== null) out.add(slug(m[1]))
  }
  return out
}

/** Links outside code: [text](target). */
function links (file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
}

test('the README is a front door', async (t) => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length
  t.ok(lines <= 200, `at most about 200 lines (${lines})`)
})

test('relative links and anchors resolve', async (t) => {
  for (const file of files) {
    for (const link of links(file)) {
      if (/^[a-z]+:/i.test(link)) continue
      const [path, anchor] = link.split('#')
      const target = path === '' ? file : relative(ROOT, normalize(join(ROOT, dirname(file), path)))
      if (!existsSync(join(ROOT, target))) {
        if (PENDING.has(target)) continue
        t.fail(`${file}: ${link} names a missing file`)
        continue
      }
      if (anchor !== undefined && target.endsWith('.md')) t.ok(anchors(target).has(anchor), `${file}: ${link} names a heading of ${target}`)
      else t.pass(`${file}: ${link}`)
    }
  }
})
