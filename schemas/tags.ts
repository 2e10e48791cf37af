import { Type } from '@sinclair/typebox'
import { ref } from './common'
import { MAX_TAGS, TAG_MAX_LENGTH, TAG_PATTERN } from '../lib/tags'

const TAG_RULE = `lower-case letters, digits and \`.\` \`_\` \`:\` \`-\`, starting with a letter or digit, at most ${TAG_MAX_LENGTH} characters`

export const TagSchema = Type.String({
  $id: 'Tag',
  minLength: 1,
  maxLength: TAG_MAX_LENGTH,
  pattern: TAG_PATTERN,
  description: `A host tag: ${TAG_RULE}. Tags group hosts (\`prod\`, \`dmz\`, \`team:web\`, \`pci-dss\`) for filters and scans.`,
  examples: ['prod', 'team:web', 'pci-dss', 'rack-3.b']
})

/**
 * The `tag` filter of host and finding lists (a query parameter: inline, not a reference). No `examples`: Swagger UI
 * fills a parameter's example into its input, and an optional filter filled in would narrow every list tried there.
 */
export function tagFilter (description: string) {
  return Type.Optional(Type.String({ minLength: 1, maxLength: TAG_MAX_LENGTH, pattern: TAG_PATTERN, description: `${description}, e.g. \`prod\`` }))
}

/** A list of tags in a request: each tag once at most is kept, at most MAX_TAGS. */
export function tagList (description: string) {
  return Type.Array(ref(TagSchema), { maxItems: MAX_TAGS, description: `${description} (at most ${MAX_TAGS}; ${TAG_RULE})` })
}

export const HostTagsSchema = Type.Object({
  tags: tagList('The host\'s tags from now on, replacing those it has; `[]` removes them all. A tag named twice is kept once')
}, {
  $id: 'HostTags',
  additionalProperties: false,
  description: 'A host\'s whole tag set',
  examples: [{ tags: ['prod', 'team:web'] }]
})

export const HostTagsPatchSchema = Type.Object({
  add: Type.Optional(tagList('Tags to add (those the host has stay)')),
  remove: Type.Optional(tagList('Tags to remove (a tag the host does not have is ignored); a tag both added and removed is added'))
}, {
  $id: 'HostTagsPatch',
  additionalProperties: false,
  minProperties: 1,
  description: 'Tags to add to a host and to remove from it, in one step: a concurrent change to other tags is kept. ' +
    `A host carries at most ${MAX_TAGS} tags.`,
  examples: [{ add: ['pci-dss'], remove: ['staging'] }]
})
