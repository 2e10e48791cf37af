// Decorates `fastify.swagger()`: the OpenAPI 3.1 document built from the routes' TypeBox schemas, and Swagger UI at /docs.
import fp from 'fastify-plugin'
import { WEBHOOK_EVENTS } from '../lib/vocabulary'
import swagger from '@fastify/swagger'
import type { OpenAPIV3_1 } from 'openapi-types'
import swaggerUi from '@fastify/swagger-ui'
import { VERSION } from '../lib/version'

type WebhookItem = OpenAPIV3_1.PathItemObject

export default fp(async function swaggerPlugin (fastify) {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'vulnscan',
        version: VERSION,
        description: 'Network vulnerability scanning service. Post a scan of IP addresses, ranges, CIDR blocks or DNS names; ' +
          'workers find open TCP ports, identify the product and version behind each, name it as a CPE 2.3 string and ' +
          'match it against a local index of NVD CVE records. Results are hosts and findings you page through and filter.\n\n' +
          'Every route except `/health` needs the `X-API-Key` header. A missing, invalid, revoked or expired key gets ' +
          '401 `{"error":"Invalid API key"}`. Errors are `{ error, code }`.\n\n' +
          'Dynamic keys have a role: `reader` (read only), `operator` (also post and cancel scans, decide findings, ' +
          'delete hosts) or `admin` (everything, as the infrastructure key). Each operation states the role it needs ' +
          '(`x-required-role`); a key below it gets 403 naming that role.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' }
      },
      servers: [{ url: 'http://127.0.0.1:3000', description: 'Local service (npm start)' }],
      tags: [
        { name: 'health', description: 'Liveness and dependencies' },
        { name: 'scans', description: 'Post scans and follow them' },
        { name: 'hosts', description: 'Hosts found by scans' },
        { name: 'templates', description: 'Nuclei-format network templates the scans run (the project\'s and TEMPLATES_DIR\'s)' },
        { name: 'schedules', description: 'Scans started at the due times of a cron expression' },
        { name: 'credentials', description: 'SSH logins for credentialed scans, kept encrypted; secrets are write-only (the infrastructure key or an admin key; operators name them in scans)' },
        { name: 'webhooks', description: 'Events posted to your URLs: scans that end, new findings (the infrastructure key or an admin key)' },
        { name: 'integrations', description: 'Issue trackers (Jira, GitHub, GitLab) kept in step with findings; tokens are write-only (the infrastructure key or an admin key)' },
        { name: 'admin', description: 'Dynamic API keys and the audit log (the infrastructure key or an admin key)' }
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The infrastructure key (SERVICE_API_KEY) or a dynamic key from POST /admin/keys' }
        }
      },
      security: [{ apiKey: [] }],
      // What the service posts to webhook URLs (POST /admin/webhook), one entry per event.
      webhooks: Object.fromEntries(WEBHOOK_EVENTS.map((event): [string, WebhookItem] => [event, {
        post: {
          operationId: `webhook${event.split('.').map((w) => w[0].toUpperCase() + w.slice(1)).join('')}`,
          tags: ['webhooks'],
          summary: `The ${event} event`,
          description: 'Posted to each enabled webhook subscribed to the event: the WebhookEvent body for format `json`, a SlackMessage for ' +
            '`slack`. Headers: `X-Vulnscan-Event`, `X-Vulnscan-Delivery` (the event id) and `X-Vulnscan-Signature-256: sha256=<hex>`, ' +
            'HMAC-SHA256 of the raw body with the webhook\'s secret. Any answer other than 2xx is retried with a doubling backoff.',
          security: [],
          parameters: [
            { name: 'X-Vulnscan-Signature-256', in: 'header' as const, required: true, schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' }, description: 'HMAC-SHA256 of the raw body' },
            { name: 'X-Vulnscan-Event', in: 'header' as const, required: true, schema: { type: 'string' }, description: 'The event name' },
            { name: 'X-Vulnscan-Delivery', in: 'header' as const, required: true, schema: { type: 'string' }, description: 'The event id, the same on each attempt' }
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/WebhookEvent' }, { $ref: '#/components/schemas/SlackMessage' }] } } }
          },
          responses: {
            '2XX': { description: 'Received' },
            '4XX': { description: 'Refused: retried until WEBHOOK_ATTEMPTS are spent' }
          }
        }
      }]))
    },
    refResolver: {
      // Components are named by their $id, never def-N.
      buildLocalReference (json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`
      }
    }
  })

  // The docs routes live in their own context so that an onRoute hook can mark them public.
  await fastify.register(async function docs (instance) {
    instance.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), public: true }
    })
    await instance.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { persistAuthorization: false, tryItOutEnabled: true, displayOperationId: true },
      // helmet already sets one CSP for every response; a second one here would intersect with it.
      staticCSP: false,
      // "Try it out" must call the server that serves the page (any port, any host name, behind a proxy),
      // not the document's example server; a relative URL resolves against the page's own origin.
      transformSpecification: (spec) => ({ ...spec, servers: [{ url: '/', description: 'This server' }] })
    })
  })
}, { name: 'swagger', dependencies: ['schemas'] })
