// Registers the shared TypeBox schemas (each with a PascalCase $id) once, for validation and OpenAPI.
import fp from 'fastify-plugin'
import { sharedSchemas } from '../schemas'

export default fp(async function schemasPlugin (fastify) {
  for (const schema of sharedSchemas) fastify.addSchema(schema)
}, { name: 'schemas' })
