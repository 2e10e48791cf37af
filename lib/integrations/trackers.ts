// The trackers, each behind one interface: find a ticket by its stable key (a label), open one, change its text,
// comment, close and reopen. Request shapes follow each tracker's public REST documentation (docs/integrations.md
// names the endpoints); test/support/fake-trackers.ts checks them.
import { trackerRequest, type TrackerHttpOptions } from './http'
import { renderAdf, renderMarkdown, renderWiki, plain, titleText, type TicketText } from './text'
import type { IntegrationRecord } from './types'

export interface TicketRef {
  ref: string
  url: string | null
  open: boolean
}

export interface TrackerClient {
  /** The ticket carrying label `key`, or null. */
  find(key: string): Promise<TicketRef | null>
  create(key: string, text: TicketText): Promise<TicketRef>
  update(ref: string, text: TicketText): Promise<void>
  comment(ref: string, text: string): Promise<void>
  /** Close (`reason` says why: completed or not planned) or reopen. */
  setOpen(ref: string, open: boolean, reason: 'completed' | 'not_planned'): Promise<void>
}

/** The label every ticket of vulnscan carries beside its stable key. */
export const COMMON_LABEL = 'vulnscan'

type Http = Omit<TrackerHttpOptions, 'onAttempt'> & { onAttempt?: TrackerHttpOptions['onAttempt'] }

function github (i: IntegrationRecord, token: string, http: Http): TrackerClient {
  const [owner, repo] = i.project.split('/')
  const base = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/issues`
  const headers = { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' }
  const call = async (method: string, path: string, body?: unknown): Promise<any> => (await trackerRequest(i.url, method, path, headers, body, http)).json
  const refOf = (j: any): TicketRef => ({ ref: String(j.number), url: typeof j.html_url === 'string' ? j.html_url : null, open: j.state === 'open' })
  return {
    async find (key) {
      const list = await call('GET', `${base}?labels=${encodeURIComponent(key)}&state=all&per_page=100`) as any[]
      const hit = (Array.isArray(list) ? list : []).filter((j) => j.pull_request === undefined).sort((a, b) => a.number - b.number)[0]
      return hit === undefined ? null : refOf(hit)
    },
    async create (key, text) {
      return refOf(await call('POST', base, { title: titleText(text.title), body: renderMarkdown(text), labels: [COMMON_LABEL, key] }))
    },
    async update (ref, text) {
      await call('PATCH', `${base}/${ref}`, { title: titleText(text.title), body: renderMarkdown(text) })
    },
    async comment (ref, text) {
      await call('POST', `${base}/${ref}/comments`, { body: renderMarkdown({ title: '', blocks: [{ para: text }] }) })
    },
    async setOpen (ref, open, reason) {
      await call('PATCH', `${base}/${ref}`, open ? { state: 'open', state_reason: 'reopened' } : { state: 'closed', state_reason: reason })
    }
  }
}

function gitlab (i: IntegrationRecord, token: string, http: Http): TrackerClient {
  const base = `/api/v4/projects/${encodeURIComponent(i.project)}/issues`
  const headers = { 'private-token': token }
  const call = async (method: string, path: string, body?: unknown): Promise<any> => (await trackerRequest(i.url, method, path, headers, body, http)).json
  const refOf = (j: any): TicketRef => ({ ref: String(j.iid), url: typeof j.web_url === 'string' ? j.web_url : null, open: j.state === 'opened' })
  return {
    async find (key) {
      const list = await call('GET', `${base}?labels=${encodeURIComponent(key)}&per_page=100`) as any[]
      const hit = (Array.isArray(list) ? list : []).sort((a, b) => a.iid - b.iid)[0]
      return hit === undefined ? null : refOf(hit)
    },
    async create (key, text) {
      return refOf(await call('POST', base, { title: titleText(text.title), description: renderMarkdown(text), labels: `${COMMON_LABEL},${key}` }))
    },
    async update (ref, text) {
      await call('PUT', `${base}/${ref}`, { title: titleText(text.title), description: renderMarkdown(text) })
    },
    async comment (ref, text) {
      await call('POST', `${base}/${ref}/notes`, { body: renderMarkdown({ title: '', blocks: [{ para: text }] }) })
    },
    async setOpen (ref, open) {
      await call('PUT', `${base}/${ref}`, { state_event: open ? 'reopen' : 'close' })
    }
  }
}

function jira (i: IntegrationRecord, token: string, http: Http): TrackerClient {
  const cloud = i.kind === 'jira-cloud'
  const api = cloud ? '/rest/api/3' : '/rest/api/2'
  const headers = { authorization: cloud ? `Basic ${Buffer.from(`${i.username ?? ''}:${token}`).toString('base64')}` : `Bearer ${token}` }
  const call = async (method: string, path: string, body?: unknown): Promise<any> => (await trackerRequest(i.url, method, path, headers, body, http)).json
  const doc = (text: TicketText): unknown => cloud ? renderAdf(text) : renderWiki(text)
  const browse = (key: string): string => `${i.url.replace(/\/$/, '')}/browse/${key}`
  // The project key is quoted in JQL; a key is letters, digits and underscores (checked at creation).
  const jql = (key: string): string => `project = "${i.project}" AND labels = "${key}" ORDER BY created ASC`
  return {
    async find (key) {
      const path = cloud ? '/search/jql' : '/search'
      const j = await call('GET', `${api}${path}?jql=${encodeURIComponent(jql(key))}&fields=status&maxResults=1`)
      const hit = (j?.issues ?? [])[0]
      if (hit === undefined) return null
      return { ref: String(hit.key), url: browse(String(hit.key)), open: hit.fields?.status?.statusCategory?.key !== 'done' }
    },
    async create (key, text) {
      const j = await call('POST', `${api}/issue`, {
        fields: { project: { key: i.project }, summary: titleText(text.title), issuetype: { name: i.issueType ?? 'Bug' }, labels: [COMMON_LABEL, key], description: doc(text) }
      })
      return { ref: String(j.key), url: browse(String(j.key)), open: true }
    },
    async update (ref, text) {
      await call('PUT', `${api}/issue/${encodeURIComponent(ref)}`, { fields: { summary: titleText(text.title), description: doc(text) } })
    },
    async comment (ref, text) {
      await call('POST', `${api}/issue/${encodeURIComponent(ref)}/comment`, { body: doc({ title: '', blocks: [{ para: plain(text) }] }) })
    },
    async setOpen (ref, open) {
      const j = await call('GET', `${api}/issue/${encodeURIComponent(ref)}/transitions`)
      const wanted = (t: any): boolean => open ? t?.to?.statusCategory?.key !== 'done' : t?.to?.statusCategory?.key === 'done'
      const t = (j?.transitions ?? []).find(wanted)
      // None leads there: the issue is there already (a transition whose answer was lost, or a change made on Jira).
      if (t === undefined) return
      await call('POST', `${api}/issue/${encodeURIComponent(ref)}/transitions`, { transition: { id: String(t.id) } })
    }
  }
}

export function trackerClient (i: IntegrationRecord, token: string, http: Http): TrackerClient {
  if (i.kind === 'github') return github(i, token, http)
  if (i.kind === 'gitlab') return gitlab(i, token, http)
  return jira(i, token, http)
}
