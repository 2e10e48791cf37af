import { Type } from '@sinclair/typebox'
import { ref, StringEnum } from './common'

export const TemplateInfoSchema = Type.Object({
  id: Type.String({ description: 'The template id: the `rule` of its findings (their `cveId` is `VULNSCAN-TEMPLATE-<ID>`)' }),
  name: Type.String(),
  severity: StringEnum(['critical', 'high', 'medium', 'low', 'info', 'unknown'], { description: 'From the template\'s info (info becomes finding severity none)' }),
  tags: Type.Array(Type.String()),
  cveIds: Type.Array(Type.String(), { description: 'classification.cve-id' }),
  source: StringEnum(['project', 'user'], { description: 'project: vulnscan\'s own templates/; user: a TEMPLATES_DIR directory' }),
  signed: StringEnum(['signed', 'unsigned'], { description: 'signed: its `# digest:` line verifies with TEMPLATES_SIGNING_CERT; unsigned otherwise (no key configured, or no digest)' }),
  services: Type.Array(Type.String(), { description: 'Services it runs on wherever detection found them' }),
  ports: Type.Array(Type.Integer(), { description: 'Ports it declares: it runs there only when detection could not name the service' }),
  intrusive: Type.Boolean({ description: 'Runs only when the scan sets `options.intrusive`' })
}, { $id: 'TemplateInfo', additionalProperties: false })

export const RefusedTemplateSchema = Type.Object({
  file: Type.String({ description: 'The file\'s name (without its directory)' }),
  id: Type.Optional(Type.String()),
  source: StringEnum(['project', 'user']),
  reason: Type.String({ description: 'Why it does not run (an unsupported protocol or feature, matchers that match an empty reply, a bad signature …)' })
}, { $id: 'RefusedTemplate', additionalProperties: false })

export const TemplateListSchema = Type.Object({
  items: Type.Array(ref(TemplateInfoSchema)),
  total: Type.Integer({ minimum: 0 }),
  refused: Type.Array(ref(RefusedTemplateSchema), { description: 'Templates found but not loaded, with the reason' })
}, { $id: 'TemplateList', additionalProperties: false })
