// Writes sdk/schema.d.ts, the TypeScript types of every path and schema in openapi.yaml: `npm run sdk`.
// A test fails when the checked-in file differs from what this generates.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

export const OPENAPI_FILE = join(__dirname, '..', 'openapi.yaml')
export const SDK_TYPES_FILE = join(__dirname, '..', 'sdk', 'schema.d.ts')

/** The generated types for the given OpenAPI document (YAML text); the checked-in document by default. */
export async function generateSdkTypes (document: string = readFileSync(OPENAPI_FILE, 'utf8')): Promise<string> {
  // A field with a default is optional to send: the server fills it in. openapi-typescript would otherwise
  // make such fields required in request bodies (priority, options.template).
  const ast = await openapiTS(document, { defaultNonNullable: false })
  return COMMENT_HEADER + astToString(ast)
}

if (require.main === module) {
  generateSdkTypes().then((types) => {
    writeFileSync(SDK_TYPES_FILE, types)
    process.stdout.write(`wrote sdk/schema.d.ts (${types.length} bytes)\n`)
  }).catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`)
    process.exit(1)
  })
}
