// Every error the service sends, defined once. The error handler turns them into `{ error, code }`.
import createError from '@fastify/error'

export const InvalidApiKeyError = createError('VULNSCAN_AUTH_INVALID_KEY', 'Invalid API key', 401)
export const ForbiddenError = createError('VULNSCAN_AUTH_FORBIDDEN', '%s', 403)
export const ReportLinkRefusedError = createError('VULNSCAN_REPORT_LINK_REFUSED', 'Report link refused: %s', 403)
export const NotFoundError = createError('VULNSCAN_NOT_FOUND', '%s', 404)
export const ConflictError = createError('VULNSCAN_CONFLICT', '%s', 409)
export const BadRequestError = createError('VULNSCAN_BAD_REQUEST', '%s', 400)
export const TargetError = createError('VULNSCAN_SCAN_INVALID_TARGET', '%s', 400)
export const ScopeError = createError('VULNSCAN_SCAN_OUT_OF_SCOPE', '%s', 400)
export const KeyScopeError = createError('VULNSCAN_SCAN_OUTSIDE_KEY_SCOPE', '%s', 403)
// Outages name the dependency (lib/outage.ts), never its address.
export const StoreUnavailableError = createError('VULNSCAN_STORE_UNAVAILABLE', 'Redis (scans, keys and the queue) is unavailable, try again shortly', 503)
export const ResultsUnavailableError = createError('VULNSCAN_RESULTS_UNAVAILABLE', 'PostgreSQL (the results database: hosts and findings) is unavailable, try again shortly', 503)
export const QueueUnavailableError = createError('VULNSCAN_QUEUE_UNAVAILABLE', 'The scan queue (Redis) is unavailable, try again shortly; nothing was queued', 503)
export const NotAcceptableError = createError('VULNSCAN_HTTP_NOT_ACCEPTABLE', '%s', 406)
export const TooManyAuthFailuresError = createError('VULNSCAN_AUTH_TOO_MANY_FAILURES', 'Too many failed logins from this address; retry in %s seconds', 429)
export const TooManyStreamsError = createError('VULNSCAN_SSE_TOO_MANY_STREAMS', '%s', 429)
export const ScheduleError = createError('VULNSCAN_SCHEDULE_INVALID', '%s', 400)
export const SchedulerUnavailableError = createError('VULNSCAN_SCHEDULER_UNAVAILABLE', 'The schedule was saved but the scheduler is unavailable; it takes effect when a worker starts. Try again shortly', 503)
export const WebhookUrlError = createError('VULNSCAN_WEBHOOK_URL_REFUSED', '%s', 400)
export const TagError = createError('VULNSCAN_HOST_INVALID_TAGS', '%s', 400)
export const NotOwnerError = createError('VULNSCAN_AUTH_NOT_OWNER', '%s', 403)
export const OutsideKeyScopeError = createError('VULNSCAN_AUTH_OUTSIDE_SCOPE', '%s', 403)

/** For a promise's catch: a 404 said again in the caller's words (naming the parameter), any other error as it was. */
export function notFoundAs (message: string): (err: unknown) => never {
  return (err) => {
    if ((err as { code?: unknown }).code === 'VULNSCAN_NOT_FOUND') throw new NotFoundError(message)
    throw err
  }
}
export const TooManySchedulesError = createError('VULNSCAN_SCHEDULE_TOO_MANY', '%s', 409)
export const CredentialError = createError('VULNSCAN_CREDENTIAL_INVALID', '%s', 400)
export const CredentialScopeError = createError('VULNSCAN_CREDENTIAL_OUTSIDE_SCOPE', '%s', 403)
export const IntegrationError = createError('VULNSCAN_INTEGRATION_INVALID', '%s', 400)
