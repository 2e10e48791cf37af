// Ticket text. Everything in a ticket comes from a scan (banners, products, versions, descriptions): it is written
// as structured blocks of plain text and rendered per tracker with that tracker's escaping, so that no field can
// add markup, links, mentions or references (Markdown for GitHub and GitLab, wiki markup for Jira Data Center,
// Atlassian Document Format for Jira Cloud, whose text nodes are never read as markup).

export type Block = { heading: string } | { para: string } | { items: string[] }

export interface TicketText {
  title: string
  blocks: Block[]
}

// Control characters (but tab and newline) say nothing in a ticket and can hide text.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

export function plain (text: string, max = 2000): string {
  const t = text.replace(CONTROL, '').replace(/\r\n?/g, '\n')
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

/** A title: one line, no control characters, at most 200 characters. */
export function titleText (text: string): string {
  return plain(text.replace(/\s+/g, ' ').trim(), 200)
}

/** Markdown (GitHub, GitLab): every punctuation Markdown reads is escaped, and HTML's brackets with entities. */
export function escapeMarkdown (text: string): string {
  return plain(text)
    .replace(/[\\`*_{}[\]()#+\-.!|~>@:=$%^]/g, (c) => `\\${c}`)
    .replace(/</g, '&lt;')
    .replace(/&(?!lt;)/g, '&amp;')
    .replace(/\n/g, ' ')
}

/** Jira wiki markup (Data Center v2): its special characters escaped with a backslash, braces and brackets included. */
export function escapeWiki (text: string): string {
  return plain(text).replace(/[\\{}[\]*_\-+^~?|!#()@]/g, (c) => `\\${c}`).replace(/\n/g, ' ')
}

export function renderMarkdown (t: TicketText): string {
  return t.blocks.map((b) => {
    if ('heading' in b) return `### ${escapeMarkdown(b.heading)}`
    if ('para' in b) return escapeMarkdown(b.para)
    return b.items.map((i) => `- ${escapeMarkdown(i)}`).join('\n')
  }).join('\n\n')
}

export function renderWiki (t: TicketText): string {
  return t.blocks.map((b) => {
    if ('heading' in b) return `h3. ${escapeWiki(b.heading)}`
    if ('para' in b) return escapeWiki(b.para)
    return b.items.map((i) => `* ${escapeWiki(i)}`).join('\n')
  }).join('\n\n')
}

type AdfNode = Record<string, unknown>
const adfText = (text: string): AdfNode => ({ type: 'text', text: plain(text) === '' ? '-' : plain(text) })

/** Atlassian Document Format (Jira Cloud v3): a `doc` of headings, paragraphs and bullet lists of text nodes. */
export function renderAdf (t: TicketText): AdfNode {
  return {
    type: 'doc',
    version: 1,
    content: t.blocks.map((b) => {
      if ('heading' in b) return { type: 'heading', attrs: { level: 3 }, content: [adfText(b.heading)] }
      if ('para' in b) return { type: 'paragraph', content: [adfText(b.para)] }
      return { type: 'bulletList', content: b.items.map((i) => ({ type: 'listItem', content: [{ type: 'paragraph', content: [adfText(i)] }] })) }
    })
  }
}
