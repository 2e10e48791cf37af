// `vulnscan tags <address>`: a host's tags; `tags set|add|remove <address> <tag…>` and `tags clear <address>` change them.
import { Option } from 'commander'
import { isTag, TAG_MAX_LENGTH } from '../../lib/tags'
import { api, print, printJson, usage, type Context } from '../context'
import type { CommandModule } from '../command'
import type { Host } from '../output'

/** The tags as given, each checked here so that a typo is said before anything is sent. */
export function checkedTags (tags: readonly string[]): string[] {
  for (const t of tags) {
    if (!isTag(t)) throw usage(`'${t}' is not a tag: lower-case letters, digits, '.', '_', ':' or '-', starting with a letter or digit, at most ${TAG_MAX_LENGTH} characters.`)
  }
  return [...tags]
}

/** A tag option that may be repeated (`--tag a --tag b`) or given comma-separated (`--tag a,b`); `--tag ''` is an empty list. */
export const tagOption = (flags: string, description: string): Option => new Option(flags, description)
  .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')])

function show (ctx: Context, h: Host): void {
  if (ctx.json) printJson(ctx.io, { address: h.address, tags: h.tags })
  else print(ctx.io, h.tags.length === 0 ? `${h.address} has no tags.` : `${h.address}: ${h.tags.join(' ')}`)
}

const tags: CommandModule = (program, kit) => {
  const group = program.command('tags')
    .summary('a host\'s tags: show, set, add, remove, clear')
    .description('A host\'s tags (vulnscan tags <address>), or changes them. Tags group hosts for the --tag filters of hosts and vulns and for scan --target-tag.')

  const get = group.command('show', { isDefault: true })
    .summary('a host\'s tags')
    .description('Shows a host\'s tags ("show" may be left out: vulnscan tags 127.0.0.1).')
    .argument('<address>', 'an IPv4 or IPv6 address')
  kit.hint(get, 'tags needs one address, e.g. vulnscan tags 127.0.0.1')
  get.action(async (address: string) => kit.run(get, async (ctx) => {
    const { data } = await api(ctx.client.GET('/host/{address}', { params: { path: { address } } }), ctx.baseUrl)
    show(ctx, data)
    return 0
  }))

  const set = group.command('set')
    .summary('replace a host\'s tags')
    .description('Replaces a host\'s tags with those given (vulnscan tags clear <address> removes them all).')
    .argument('<address>', 'an IPv4 or IPv6 address')
    .argument('<tag...>', 'the tags, e.g. prod team:web')
  kit.hint(set, 'tags set needs an address and at least one tag, e.g. vulnscan tags set 192.0.2.10 prod team:web')
  set.action(async (address: string, list: string[]) => kit.run(set, async (ctx) => {
    const { data } = await api(ctx.client.PUT('/host/{address}/tags', { params: { path: { address } }, body: { tags: checkedTags(list) } }), ctx.baseUrl)
    show(ctx, data)
    return 0
  }))

  const clear = group.command('clear')
    .summary('remove every tag of a host')
    .description('Removes every tag of a host.')
    .argument('<address>', 'an IPv4 or IPv6 address')
  kit.hint(clear, 'tags clear needs one address, e.g. vulnscan tags clear 192.0.2.10')
  clear.action(async (address: string) => kit.run(clear, async (ctx) => {
    const { data } = await api(ctx.client.PUT('/host/{address}/tags', { params: { path: { address } }, body: { tags: [] } }), ctx.baseUrl)
    show(ctx, data)
    return 0
  }))

  for (const [name, field, what] of [['add', 'add', 'add tags to a host (those it has stay)'], ['remove', 'remove', 'remove tags from a host (the others stay)']] as const) {
    const cmd = group.command(name)
      .summary(what)
      .description(`${what[0].toUpperCase()}${what.slice(1)}, in one step on the server: another client's change to other tags is kept.`)
      .argument('<address>', 'an IPv4 or IPv6 address')
      .argument('<tag...>', 'the tags, e.g. prod team:web')
    kit.hint(cmd, `tags ${name} needs an address and at least one tag, e.g. vulnscan tags ${name} 192.0.2.10 prod`)
    cmd.action(async (address: string, list: string[]) => kit.run(cmd, async (ctx) => {
      const body = field === 'add' ? { add: checkedTags(list) } : { remove: checkedTags(list) }
      const { data } = await api(ctx.client.PATCH('/host/{address}/tags', { params: { path: { address } }, body }), ctx.baseUrl)
      show(ctx, data)
      return 0
    }))
  }
}

export default tags
