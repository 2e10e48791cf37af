// `vulnscan credentials list|show|create|update|delete|rotate`: SSH logins for credentialed scans (the infrastructure
// key or an admin key). Secrets are read from files, the environment or standard input, never from the command line
// (which other users of the machine see in the process list), and never printed.
import { readFileSync } from 'node:fs'
import { Option, type Command } from 'commander'
import { api, integer, paging, print, printJson, usage, type Context } from '../context'
import type { CommandModule } from '../command'
import type { components } from '../../sdk/schema'

type Credential = components['schemas']['Credential']
type PinnedHostKey = components['schemas']['PinnedHostKey']

/** `--credential <name>` (repeatable, or comma-separated): the stored credentials a scan logs in with. */
export function credentialOption (extra = ''): Option {
  return new Option('--credential <name>', `log in to every host found up with this stored credential (id or name; repeatable) and decide its package list${extra}`)
    .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')])
}

const listOption = (flags: string, description: string): Option => new Option(flags, description)
  .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')])

function describe (c: Credential): string {
  const pins = c.hostKeys.length > 0 ? `, ${c.hostKeys.length} pinned host key${c.hostKeys.length === 1 ? '' : 's'}` : ', host keys trusted on first use'
  return `Credential ${c.name} (${c.id}): ssh ${c.username}@…:${c.port} with a ${c.auth === 'privateKey' ? 'private key' : 'password'}${pins}` +
    `${c.scope.length > 0 ? `, scope ${c.scope.join(', ')}` : ''}${c.description !== '' ? `; ${c.description}` : ''}\n  created ${c.createdAt}, secret set ${c.secretUpdatedAt}`
}

function table (items: Credential[]): string {
  return items.map((c) => `${c.name.padEnd(20)} ${c.id}  ${c.username}  ${c.auth}  port ${c.port}${c.scope.length > 0 ? `  scope ${c.scope.join(',')}` : ''}`).join('\n')
}

async function readStdin (ctx: Context): Promise<string> {
  const stdin = (ctx.io as { stdin?: NodeJS.ReadableStream }).stdin ?? process.stdin
  const chunks: Buffer[] = []
  for await (const c of stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string))
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

interface SecretFlags { keyFile?: string, passphraseEnv?: string, passwordStdin?: boolean }

/** The secret fields from the flags: a key file (and a passphrase from an environment variable), or a password on stdin. */
async function secretOf (flags: SecretFlags, ctx: Context): Promise<{ privateKey?: string, passphrase?: string, password?: string }> {
  if (flags.keyFile !== undefined && flags.passwordStdin === true) throw usage('give --key-file or --password-stdin, not both.')
  const out: { privateKey?: string, passphrase?: string, password?: string } = {}
  if (flags.keyFile !== undefined) {
    try {
      out.privateKey = readFileSync(flags.keyFile, 'utf8')
    } catch (err) {
      throw usage(`cannot read --key-file ${flags.keyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
  }
  if (flags.passphraseEnv !== undefined) {
    const v = ctx.io.env[flags.passphraseEnv]
    if (v === undefined || v === '') throw usage(`--passphrase-env ${flags.passphraseEnv}: that variable is not set.`)
    out.passphrase = v
  }
  if (flags.passwordStdin === true) out.password = await readStdin(ctx)
  return out
}

function hostKeys (given: string[] | undefined): PinnedHostKey[] | undefined {
  if (given === undefined) return undefined
  return given.map((g) => {
    const eq = g.indexOf('=')
    if (eq <= 0) throw usage(`--host-key needs <address>=<SHA256:…>, not '${g}'.`)
    return { host: g.slice(0, eq), fingerprint: g.slice(eq + 1) }
  })
}

function secretOptions (cmd: Command): Command {
  return cmd.option('--key-file <path>', 'the private key (OpenSSH or PEM) to log in with')
    .option('--passphrase-env <variable>', 'the environment variable holding the key\'s passphrase')
    .option('--password-stdin', 'read a password from standard input instead')
    .option('--port <n>', 'SSH port (default 22)')
    .addOption(listOption('--host-key <address=SHA256:…>', 'pin this host\'s key (repeatable); other hosts are trusted on first use'))
    .addOption(listOption('--scope <cidrs>', 'where the credential may be used: CIDRs, comma-separated or repeated'))
    .option('--description <text>', 'what the credential is for')
}

const credentials: CommandModule = (program, kit) => {
  const group = program.command('credentials')
    .summary('SSH credentials for credentialed scans: list, show, create, update, delete, rotate')
    .description('SSH logins that scans name with --credential to read each host\'s package list. Secrets are kept encrypted and never shown. ' +
      'Needs the infrastructure key or an admin key; any key that may post scans may use them.')
  kit.hint(group, 'credentials needs one of: list, show, create, update, delete, rotate.')

  const list = group.command('list')
    .summary('list credentials (never their secrets)')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  list.action(async (opts: { limit?: string, offset?: string }) => kit.run(list, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/credentials', { params: { query: paging(opts) } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, data.items.length === 0 ? 'No credentials: create one with vulnscan credentials create.' : `${table(data.items)}\n${data.items.length} of ${data.total} credentials`)
    return 0
  }))

  const show = group.command('show').summary('one credential, without its secret').argument('<name-or-id>')
  kit.hint(show, 'credentials show needs a credential name or id.')
  show.action(async (id: string) => kit.run(show, async (ctx) => {
    const { data } = await api(ctx.client.GET('/admin/credentials/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, describe(data))
    return 0
  }))

  const create = secretOptions(group.command('create')
    .summary('store an SSH credential')
    .argument('<name>', 'a unique name, which scans may use (--credential <name>)')
    .option('-u, --user <name>', 'the account to log in as (an account with no privileges suffices)'))
    .addHelpText('after', '\nExamples:\n  vulnscan credentials create fleet --user vulnscan --key-file ~/.ssh/vulnscan_ed25519 --scope 10.0.0.0/16\n  printf %s "$PW" | vulnscan credentials create lab --user scanner --password-stdin\n')
  kit.hint(create, 'credentials create needs a name, --user and --key-file or --password-stdin.')
  create.action(async (name: string, opts: SecretFlags & { user?: string, port?: string, hostKey?: string[], scope?: string[], description?: string }) => kit.run(create, async (ctx) => {
    if (opts.user === undefined) throw usage('credentials create needs --user <name>.')
    const secret = await secretOf(opts, ctx)
    if (secret.privateKey === undefined && secret.password === undefined) throw usage('credentials create needs --key-file <path> or --password-stdin.')
    const port = integer('port', opts.port, 1, 65535)
    const pins = hostKeys(opts.hostKey)
    const body = {
      name,
      type: 'ssh' as const,
      username: opts.user,
      ...secret,
      ...(port !== undefined ? { port } : {}),
      ...(pins !== undefined ? { hostKeys: pins } : {}),
      ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {})
    }
    const { data } = await api(ctx.client.POST('/admin/credentials', { body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Created ${describe(data)}`)
    return 0
  }))

  const update = secretOptions(group.command('update')
    .summary('change a credential, or rotate its secret (--key-file / --password-stdin)')
    .argument('<name-or-id>')
    .option('-u, --user <name>', 'the account to log in as'))
  kit.hint(update, 'credentials update needs a credential name or id, and what to change.')
  update.action(async (id: string, opts: SecretFlags & { user?: string, port?: string, hostKey?: string[], scope?: string[], description?: string }) => kit.run(update, async (ctx) => {
    const secret = await secretOf(opts, ctx)
    const port = integer('port', opts.port, 1, 65535)
    const pins = hostKeys(opts.hostKey)
    const body = {
      ...secret,
      ...(opts.user !== undefined ? { username: opts.user } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(pins !== undefined ? { hostKeys: pins } : {}),
      ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {})
    }
    if (Object.keys(body).length === 0) throw usage('credentials update needs something to change (see --help).')
    const { data } = await api(ctx.client.PATCH('/admin/credentials/{id}', { params: { path: { id } }, body }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Changed ${describe(data)}`)
    return 0
  }))

  const del = group.command('delete').summary('delete a credential (and the host keys its logins recorded)').argument('<name-or-id>')
  kit.hint(del, 'credentials delete needs a credential name or id.')
  del.action(async (id: string) => kit.run(del, async (ctx) => {
    await api(ctx.client.DELETE('/admin/credentials/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, { deleted: id })
    else print(ctx.io, `Deleted credential ${id}.`)
    return 0
  }))

  const rotate = group.command('rotate')
    .summary('seal every secret again under the current CREDENTIALS_KEY (the last step of a key rotation)')
    .description('After every process runs with the new CREDENTIALS_KEY and the old one in CREDENTIALS_KEY_PREVIOUS: seals every stored secret again under the new key. Then CREDENTIALS_KEY_PREVIOUS can go.')
  rotate.action(async () => kit.run(rotate, async (ctx) => {
    const { data } = await api(ctx.client.POST('/admin/credentials/rotate'), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else print(ctx.io, `Sealed ${data.resealed} secret${data.resealed === 1 ? '' : 's'} again under the current key (${data.current} already were). CREDENTIALS_KEY_PREVIOUS can now be removed.`)
    return 0
  }))
}

export default credentials
