// Fake issue trackers for the sync tests: GitHub Issues, GitLab Issues and Jira (Cloud v3 and Data Center v2), each
// an HTTP server on a random 127.x address that keeps issues, answers with the documented shapes and refuses what
// the real API refuses: a missing or unknown field, a field of the wrong type (markup where ADF is due, a label list
// where GitLab wants a comma-separated string), a wrong state value, a missing token. test/fixtures/trackers/
// README.source.txt names the documentation each rule comes from. Failures can be injected per request: a status
// (429 with Retry-After, 502), or an answer that never arrives after the change is made (a restart's lost reply).
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http'
import { loopbackAddress } from './loopback'

export type FakeKind = 'github' | 'gitlab' | 'jira-cloud' | 'jira-dc'

export interface FakeIssue {
  ref: string
  title: string
  body: unknown
  labels: string[]
  open: boolean
  comments: unknown[]
}

export interface Op {
  op: 'create' | 'update' | 'comment' | 'close' | 'reopen'
  ref: string
}

export interface Injection {
  method: string
  /** The end of the path (e.g. `/issues`: a create, not a comment). */
  path: string
  status?: number
  headers?: Record<string, string>
  /** Do the request's change, then drop the connection without an answer. */
  drop?: boolean
}

export interface FakeTracker {
  kind: FakeKind
  url: string
  token: string
  issues: FakeIssue[]
  ops: Op[]
  /** Requests refused as malformed (a field the API would refuse): the test fails on any. */
  refused: string[]
  requests: { method: string, path: string }[]
  inject(i: Injection): void
  count(op: Op['op']): number
  close(): Promise<void>
}

class Refusal extends Error {
  constructor (readonly status: number, message: string) { super(message) }
}

const isString = (v: unknown): v is string => typeof v === 'string'
function only (body: Record<string, unknown>, allowed: string[], where: string): void {
  for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new Refusal(422, `${where}: unknown field '${k}'`)
}
function object (v: unknown, where: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Refusal(400, `${where}: a JSON object is required`)
  return v as Record<string, unknown>
}

const ADF_BLOCKS = new Set(['paragraph', 'heading', 'bulletList', 'listItem', 'text'])
/** Atlassian Document Format, as much as the sync writes: a doc of headings, paragraphs and bullet lists of text nodes. */
function checkAdf (node: unknown, where: string, top = true): void {
  const n = object(node, where)
  if (top) {
    if (n.type !== 'doc' || n.version !== 1 || !Array.isArray(n.content)) throw new Refusal(400, `${where}: not an ADF doc (type doc, version 1, content)`)
  } else {
    if (!isString(n.type) || !ADF_BLOCKS.has(n.type)) throw new Refusal(400, `${where}: ADF node type '${String(n.type)}'`)
    if (n.type === 'text') {
      if (!isString(n.text) || n.text === '') throw new Refusal(400, `${where}: ADF text node without text`)
      return
    }
    if (n.type === 'heading' && ![1, 2, 3, 4, 5, 6].includes((n.attrs as { level?: number } | undefined)?.level ?? 0)) throw new Refusal(400, `${where}: heading level`)
  }
  for (const c of n.content as unknown[]) checkAdf(c, where, false)
}

async function readJson (req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (text === '') return undefined
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) throw new Refusal(415, 'content-type must be application/json')
  try { return JSON.parse(text) } catch { throw new Refusal(400, 'body is not JSON') }
}

type Handler = (method: string, path: string, query: URLSearchParams, body: unknown) => { status: number, json?: unknown }

function github (t: FakeTracker, repo: string): Handler {
  const base = `/repos/${repo}/issues`
  const show = (i: FakeIssue, n: number): unknown => ({ id: 1000 + n, number: Number(i.ref), html_url: `https://github.example/${repo}/issues/${i.ref}`, state: i.open ? 'open' : 'closed', title: i.title, body: i.body, labels: i.labels.map((name) => ({ name })) })
  const get = (n: string): FakeIssue => {
    const i = t.issues.find((x) => x.ref === n)
    if (i === undefined) throw new Refusal(404, 'Not Found')
    return i
  }
  return (method, path, query, raw) => {
    if (method === 'GET' && path === base) {
      const want = (query.get('labels') ?? '').split(',').filter((l) => l !== '')
      const state = query.get('state') ?? 'open'
      const list = t.issues.filter((i) => want.every((l) => i.labels.includes(l)) && (state === 'all' || (state === 'open') === i.open))
      return { status: 200, json: list.map((i) => show(i, Number(i.ref))) }
    }
    if (method === 'POST' && path === base) {
      const b = object(raw, 'create issue')
      only(b, ['title', 'body', 'assignee', 'milestone', 'labels', 'assignees', 'type'], 'create issue')
      if (!isString(b.title) || b.title === '') throw new Refusal(422, 'title is required')
      if (b.body !== undefined && !isString(b.body)) throw new Refusal(422, 'body must be a string')
      if (b.labels !== undefined && (!Array.isArray(b.labels) || !b.labels.every(isString))) throw new Refusal(422, 'labels must be an array of strings')
      const i: FakeIssue = { ref: String(t.issues.length + 1), title: b.title, body: b.body, labels: (b.labels as string[] | undefined) ?? [], open: true, comments: [] }
      t.issues.push(i)
      t.ops.push({ op: 'create', ref: i.ref })
      return { status: 201, json: show(i, t.issues.length) }
    }
    const m = path.match(new RegExp(`^${base}/(\\d+)(/comments)?$`))
    if (m !== null && method === 'POST' && m[2] !== undefined) {
      const b = object(raw, 'create comment')
      only(b, ['body'], 'create comment')
      if (!isString(b.body) || b.body === '') throw new Refusal(422, 'body is required')
      get(m[1]).comments.push(b.body)
      t.ops.push({ op: 'comment', ref: m[1] })
      return { status: 201, json: { id: 1, body: b.body } }
    }
    if (m !== null && method === 'PATCH' && m[2] === undefined) {
      const b = object(raw, 'update issue')
      only(b, ['title', 'body', 'assignee', 'state', 'state_reason', 'milestone', 'labels', 'assignees', 'type'], 'update issue')
      if (b.state !== undefined && b.state !== 'open' && b.state !== 'closed') throw new Refusal(422, 'state must be open or closed')
      if (b.state_reason !== undefined && b.state_reason !== null && !['completed', 'not_planned', 'reopened'].includes(b.state_reason as string)) throw new Refusal(422, 'state_reason')
      const i = get(m[1])
      if (isString(b.title)) { i.title = b.title; i.body = b.body ?? i.body; t.ops.push({ op: 'update', ref: i.ref }) }
      if (b.state === 'closed' && i.open) { i.open = false; t.ops.push({ op: 'close', ref: i.ref }) }
      if (b.state === 'open' && !i.open) { i.open = true; t.ops.push({ op: 'reopen', ref: i.ref }) }
      return { status: 200, json: show(i, Number(i.ref)) }
    }
    throw new Refusal(404, `no route ${method} ${path}`)
  }
}

function gitlab (t: FakeTracker, project: string): Handler {
  const base = `/api/v4/projects/${encodeURIComponent(project)}/issues`
  const show = (i: FakeIssue): unknown => ({ id: 5000 + Number(i.ref), iid: Number(i.ref), web_url: `https://gitlab.example/${project}/-/issues/${i.ref}`, state: i.open ? 'opened' : 'closed', title: i.title, description: i.body, labels: i.labels })
  const get = (n: string): FakeIssue => {
    const i = t.issues.find((x) => x.ref === n)
    if (i === undefined) throw new Refusal(404, '404 Not found')
    return i
  }
  return (method, path, query, raw) => {
    if (method === 'GET' && path === base) {
      const want = (query.get('labels') ?? '').split(',').filter((l) => l !== '')
      const state = query.get('state') ?? 'all'
      return { status: 200, json: t.issues.filter((i) => want.every((l) => i.labels.includes(l)) && (state === 'all' || (state === 'opened') === i.open)).map(show) }
    }
    if (method === 'POST' && path === base) {
      const b = object(raw, 'new issue')
      only(b, ['title', 'description', 'labels', 'assignee_ids', 'confidential', 'due_date', 'issue_type', 'milestone_id', 'weight'], 'new issue')
      if (!isString(b.title) || b.title === '') throw new Refusal(400, 'title is missing')
      if (b.labels !== undefined && !isString(b.labels)) throw new Refusal(400, 'labels is invalid (a comma-separated string)')
      const i: FakeIssue = { ref: String(t.issues.length + 1), title: b.title, body: b.description, labels: isString(b.labels) ? b.labels.split(',') : [], open: true, comments: [] }
      t.issues.push(i)
      t.ops.push({ op: 'create', ref: i.ref })
      return { status: 201, json: show(i) }
    }
    const m = path.match(/\/issues\/(\d+)(\/notes)?$/)
    if (m !== null && path.startsWith(base) && method === 'POST' && m[2] !== undefined) {
      const b = object(raw, 'new note')
      only(b, ['body', 'confidential', 'internal', 'created_at'], 'new note')
      if (!isString(b.body) || b.body === '') throw new Refusal(400, 'body is missing')
      get(m[1]).comments.push(b.body)
      t.ops.push({ op: 'comment', ref: m[1] })
      return { status: 201, json: { id: 1, body: b.body } }
    }
    if (m !== null && path.startsWith(base) && method === 'PUT' && m[2] === undefined) {
      const b = object(raw, 'edit issue')
      only(b, ['title', 'description', 'labels', 'add_labels', 'remove_labels', 'state_event', 'assignee_ids', 'confidential', 'due_date', 'milestone_id', 'weight'], 'edit issue')
      if (b.state_event !== undefined && b.state_event !== 'close' && b.state_event !== 'reopen') throw new Refusal(400, 'state_event does not have a valid value')
      const i = get(m[1])
      if (isString(b.title)) { i.title = b.title; i.body = b.description ?? i.body; t.ops.push({ op: 'update', ref: i.ref }) }
      if (b.state_event === 'close' && i.open) { i.open = false; t.ops.push({ op: 'close', ref: i.ref }) }
      if (b.state_event === 'reopen' && !i.open) { i.open = true; t.ops.push({ op: 'reopen', ref: i.ref }) }
      return { status: 200, json: show(i) }
    }
    throw new Refusal(404, `no route ${method} ${path}`)
  }
}

function jira (t: FakeTracker, projectKey: string, cloud: boolean): Handler {
  const api = cloud ? '/rest/api/3' : '/rest/api/2'
  const doc = (v: unknown, where: string): void => {
    if (cloud) checkAdf(v, where)
    else if (!isString(v)) throw new Refusal(400, `${where}: Data Center v2 takes a wiki-markup string`)
  }
  const get = (key: string): FakeIssue => {
    const i = t.issues.find((x) => x.ref === key)
    if (i === undefined) throw new Refusal(404, 'Issue does not exist or you do not have permission to see it.')
    return i
  }
  return (method, path, query, raw) => {
    if (method === 'GET' && path === `${api}${cloud ? '/search/jql' : '/search'}`) {
      const jql = query.get('jql') ?? ''
      const label = jql.match(/labels = "([^"]+)"/)?.[1]
      const project = jql.match(/project = "([^"]+)"/)?.[1]
      if (label === undefined || project !== projectKey) throw new Refusal(400, `jql not understood: ${jql}`)
      const hits = t.issues.filter((i) => i.labels.includes(label))
      return { status: 200, json: { issues: hits.map((i) => ({ id: i.ref, key: i.ref, fields: { status: { statusCategory: { key: i.open ? 'new' : 'done' } } } })) } }
    }
    if (method === 'POST' && path === `${api}/issue`) {
      const b = object(raw, 'create issue')
      only(b, ['fields', 'update', 'transition', 'properties'], 'create issue')
      const f = object(b.fields, 'fields')
      only(f, ['project', 'summary', 'issuetype', 'labels', 'description', 'priority', 'assignee'], 'fields')
      if (object(f.project, 'fields.project').key !== projectKey) throw new Refusal(400, 'project: valid project is required')
      if (!isString(f.summary) || f.summary === '' || f.summary.length > 255 || f.summary.includes('\n')) throw new Refusal(400, 'summary: one line of at most 255 characters')
      if (!isString(object(f.issuetype, 'fields.issuetype').name)) throw new Refusal(400, 'issuetype is required')
      if (!Array.isArray(f.labels) || !f.labels.every((l) => isString(l) && !/\s/.test(l))) throw new Refusal(400, 'labels: strings without spaces')
      doc(f.description, 'description')
      const key = `${projectKey}-${t.issues.length + 1}`
      t.issues.push({ ref: key, title: f.summary, body: f.description, labels: f.labels as string[], open: true, comments: [] })
      t.ops.push({ op: 'create', ref: key })
      return { status: 201, json: { id: String(10000 + t.issues.length), key, self: `${t.url}${api}/issue/${key}` } }
    }
    const m = path.match(new RegExp(`^${api}/issue/([A-Z][A-Z0-9_]*-\\d+)(/comment|/transitions)?$`))
    if (m === null) throw new Refusal(404, `no route ${method} ${path}`)
    const i = get(m[1])
    if (m[2] === undefined && method === 'PUT') {
      const b = object(raw, 'edit issue')
      only(b, ['fields', 'update', 'properties'], 'edit issue')
      const f = object(b.fields, 'fields')
      only(f, ['summary', 'description', 'labels', 'priority'], 'fields')
      if (f.description !== undefined) doc(f.description, 'description')
      if (isString(f.summary)) i.title = f.summary
      i.body = f.description ?? i.body
      t.ops.push({ op: 'update', ref: i.ref })
      return { status: 204 }
    }
    if (m[2] === '/comment' && method === 'POST') {
      const b = object(raw, 'add comment')
      only(b, ['body', 'visibility', 'properties'], 'add comment')
      doc(b.body, 'comment body')
      i.comments.push(b.body)
      t.ops.push({ op: 'comment', ref: i.ref })
      return { status: 201, json: { id: '1', body: b.body } }
    }
    if (m[2] === '/transitions' && method === 'GET') {
      return { status: 200, json: { transitions: i.open ? [{ id: '21', name: 'In Progress', to: { statusCategory: { key: 'indeterminate' } } }, { id: '31', name: 'Done', to: { statusCategory: { key: 'done' } } }] : [{ id: '11', name: 'Reopen', to: { statusCategory: { key: 'new' } } }] } }
    }
    if (m[2] === '/transitions' && method === 'POST') {
      const b = object(raw, 'transition')
      only(b, ['transition', 'fields', 'update', 'historyMetadata', 'properties'], 'transition')
      const id = object(b.transition, 'transition').id
      if (!isString(id)) throw new Refusal(400, 'transition.id must be a string')
      const allowed = i.open ? ['21', '31'] : ['11']
      if (!allowed.includes(id)) throw new Refusal(400, `transition ${id} is not valid for this issue`)
      if (id === '31') { i.open = false; t.ops.push({ op: 'close', ref: i.ref }) }
      if (id === '11') { i.open = true; t.ops.push({ op: 'reopen', ref: i.ref }) }
      return { status: 204 }
    }
    throw new Refusal(405, `method ${method} not allowed`)
  }
}

export async function startFakeTracker (kind: FakeKind, project: string, opts: { username?: string } = {}): Promise<FakeTracker> {
  const host = loopbackAddress()
  const token = `tok-${kind}-${Math.random().toString(36).slice(2)}`
  const injections: Injection[] = []
  const t: FakeTracker = {
    kind, url: '', token, issues: [], ops: [], refused: [], requests: [],
    inject: (i) => { injections.push(i) },
    count: (op) => t.ops.filter((o) => o.op === op).length,
    close: async () => {}
  }
  const handler = kind === 'github' ? github(t, project) : kind === 'gitlab' ? gitlab(t, project) : jira(t, project, kind === 'jira-cloud')
  const authorized = (req: IncomingMessage): boolean => {
    if (kind === 'github') return req.headers.authorization === `Bearer ${token}` && req.headers['user-agent'] !== undefined && req.headers.accept === 'application/vnd.github+json'
    if (kind === 'gitlab') return req.headers['private-token'] === token
    if (kind === 'jira-cloud') return req.headers.authorization === `Basic ${Buffer.from(`${opts.username ?? ''}:${token}`).toString('base64')}`
    return req.headers.authorization === `Bearer ${token}`
  }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake')
    const method = req.method ?? 'GET'
    t.requests.push({ method, path: url.pathname })
    const send = (status: number, json?: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...headers })
      res.end(json === undefined ? undefined : JSON.stringify(json))
    }
    readJson(req).then((body) => {
      const at = injections.findIndex((i) => i.method === method && url.pathname.endsWith(i.path))
      const inj = at === -1 ? undefined : injections.splice(at, 1)[0]
      if (inj?.status !== undefined) return send(inj.status, { message: 'injected' }, inj.headers)
      if (!authorized(req)) return send(401, { message: 'Bad credentials' })
      const out = handler(method, url.pathname, url.searchParams, body)
      if (inj?.drop === true) {
        res.socket?.destroy()
        return
      }
      send(out.status, out.json)
    }).catch((err) => {
      if (err instanceof Refusal) {
        if (err.status !== 404 || !/Not Found|not found|does not exist/.test(err.message)) t.refused.push(`${method} ${url.pathname}: ${err.message}`)
        return send(err.status, { message: err.message })
      }
      send(500, { message: String(err) })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => resolve())
  })
  const { port } = server.address() as { port: number }
  t.url = `http://${host}:${port}`
  t.close = async () => { await new Promise<void>((resolve) => server.close(() => resolve())) }
  return t
}
