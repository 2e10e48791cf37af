// The configuration: every variable typed, documented and validated (env-schema). The one place that reads
// process.env; the HTTP server, the worker, the scripts and the benches all start from loadConfig.
import { envSchema } from 'env-schema'
import { Type, Static } from '@sinclair/typebox'

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'HTTP port' }),
  HOST: Type.String({ default: '127.0.0.1', description: 'Address the HTTP server binds to' }),
  BEHIND_TLS: Type.Boolean({ default: false, description: 'Clients reach the service over HTTPS only (a TLS-terminating proxy in front): send HSTS and the CSP upgrade-insecure-requests. Off, a browser on another machine would fetch /docs assets over https and get a blank page' }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info', description: 'pino log level' }),
  SERVICE_API_KEY: Type.Optional(Type.String({ minLength: 16, description: 'Infrastructure key: full access, admin included' })),
  REDIS_URL: Type.Optional(Type.String({ description: 'Redis URL; unset = embedded in-memory store and queue' })),
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100, description: 'Most milliseconds a Redis command of a request may wait for its answer: a stalled Redis gives a 503, not a hang' }),
  REDIS_PREFIX: Type.String({ default: 'vulnscan', pattern: '^[A-Za-z0-9._-]+$', description: 'Prefix of every Redis key' }),
  QUEUE_PREFIX: Type.String({ default: 'vulnscan-bull', pattern: '^[A-Za-z0-9._-]+$', description: 'BullMQ key prefix' }),
  DATABASE_URL: Type.Optional(Type.String({ description: 'PostgreSQL URL of the results database (hosts and findings); required when REDIS_URL is set' })),
  DATABASE_SCHEMA: Type.String({ default: 'vulnscan', pattern: '^[a-z_][a-z0-9_]{0,62}$', description: 'PostgreSQL schema that holds the results tables (created and migrated on start)' }),
  DATABASE_POOL_MAX: Type.Integer({ default: 10, minimum: 1, maximum: 1000, description: 'Most PostgreSQL connections one process opens' }),
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({ default: 15000, minimum: 100, description: 'Most milliseconds one PostgreSQL query may wait for its answer: a stalled database gives a 503 (a job is put off), not a hang; its connection is dropped' }),
  BODY_LIMIT: Type.Integer({ default: 1048576, minimum: 1024, description: 'Largest request body, bytes' }),
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({ default: 30000, minimum: 100, description: 'Most milliseconds a client may take to send a whole request, body included (408 after)' }),
  HTTP_HEADERS_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 100, description: 'Most milliseconds a client may take to send the request headers; at most HTTP_REQUEST_TIMEOUT_MS' }),
  HTTP_IDLE_TIMEOUT_MS: Type.Integer({ default: 60000, minimum: 100, description: 'A connection with no traffic either way for this long is closed' }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 100, description: 'How long a kept-alive connection waits for its next request' }),
  HTTP_MAX_CONNECTIONS: Type.Integer({ default: 1024, minimum: 1, description: 'Open HTTP connections at most; further ones are closed at once' }),
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ default: 256, minimum: 1, description: 'Open HTTP connections one client address may hold; further ones from it are closed at once (a TRUST_PROXY address is not limited)' }),
  TRUST_PROXY: Type.String({ default: '', description: 'Comma-separated addresses or CIDRs of reverse proxies in front of the API: from them, the client address is read from X-Forwarded-For (failed-login counts, rate limits without a key, the audit log)' }),
  MAX_TARGETS: Type.Integer({ default: 256, minimum: 1, description: 'Most targets in one scan request' }),
  MAX_HOSTS: Type.Integer({ default: 4096, minimum: 1, description: 'Most hosts one scan may expand to' }),
  KEY_SWEEP_INTERVAL: Type.Integer({ default: 3600, minimum: 1, description: 'Seconds between sweeps that delete expired API keys (reading one deletes it too)' }),
  AUTH_FAILURE_MAX: Type.Integer({ default: 20, minimum: 1, description: 'Failed logins (missing or wrong X-API-Key) one client address may make per AUTH_FAILURE_WINDOW before every request from it gets 429' }),
  AUTH_FAILURE_WINDOW: Type.Integer({ default: 300, minimum: 1, description: 'Seconds over which failed logins are counted' }),
  SSE_MAX_STREAMS: Type.Integer({ default: 1000, minimum: 1, description: 'Open scan event streams per API process at most (429 beyond)' }),
  SSE_MAX_STREAMS_PER_KEY: Type.Integer({ default: 20, minimum: 1, description: 'Open scan event streams per API key and process at most (429 beyond)' }),
  RATE_LIMIT_MAX: Type.Integer({ default: 600, minimum: 1, description: 'Requests per key (or per client address without a key) per window' }),
  RATE_LIMIT_WINDOW: Type.String({ default: '1 minute', description: 'Rate limit window' }),
  AUDIT_RETENTION_DAYS: Type.Integer({ default: 90, minimum: 1, maximum: 3650, description: 'Days the audit log keeps each state-changing request' }),
  AUDIT_MAX_ENTRIES: Type.Integer({ default: 100000, minimum: 100, maximum: 10000000, description: 'Most entries the audit log keeps (the oldest go first), and most refused-request counts' }),
  SCHEDULE_MIN_INTERVAL: Type.Integer({ default: 60, minimum: 1, description: 'Seconds two runs of one schedule must be apart at least (a cron expression that may fire sooner is refused)' }),
  SCHEDULE_MAX_PER_KEY: Type.Integer({ default: 100, minimum: 1, description: 'Most schedules one API key (or the infrastructure key) may keep' }),
  SCAN_ALLOW: Type.String({ default: '', description: 'Comma-separated CIDRs that may be scanned; empty = any' }),
  SCAN_DENY: Type.String({ default: '', description: 'Comma-separated CIDRs that may never be scanned; wins over SCAN_ALLOW' }),
  SCAN_CONCURRENCY: Type.Integer({ default: 2000, minimum: 1, description: 'Connects in flight per worker process' }),
  SCAN_HOST_CONCURRENCY: Type.Integer({ default: 1000, minimum: 1, description: 'Connects in flight per host' }),
  SCAN_BATCH_HOSTS: Type.Integer({ default: 16, minimum: 1, description: 'Hosts per queue job when a scan is split' }),
  SCAN_TIMEOUT: Type.Integer({ default: 1800, minimum: 10, description: 'Most seconds one scan job may run' }),
  SCAN_SWEEP_INTERVAL: Type.Integer({ default: 60, minimum: 1, description: 'Seconds between sweeps, in each worker, for scans left without their job (a queue write lost in an outage): queued again, or ended with their job\'s failure' }),
  WORKER_CONCURRENCY: Type.Integer({ default: 2, minimum: 1, description: 'Scan jobs one worker process runs at once' }),
  WORKER_ENABLED: Type.Boolean({ default: true, description: 'Run a scan worker inside the API process (npm start); npm run start:api turns it off' }),
  QUEUE_LOCK_MS: Type.Integer({ default: 30000, minimum: 1000, description: 'Job lock lifetime: a job whose worker died is taken over by another after about this long' }),
  NVD_API_URL: Type.String({ default: 'https://services.nvd.nist.gov/rest/json', description: 'NVD API 2.0 base URL' }),
  NVD_API_KEY: Type.Optional(Type.String({ description: 'NVD API key (raises the rate limit)' })),
  NVD_RATE_LIMIT: Type.Optional(Type.Integer({ minimum: 1, description: 'NVD requests per 30 s (default 5, or 50 with a key)' })),
  NVD_INDEX_FILE: Type.String({ default: 'data/nvd-index.json.gz', description: 'File backing the embedded NVD index' }),
  NVD_PRODUCT_TTL: Type.Integer({ default: 86400, minimum: 60, description: 'Seconds an on-demand product fetch is trusted' }),
  NVD_ON_DEMAND: Type.Boolean({ default: true, description: 'Fetch from the NVD, during a scan, a product the index has never seen; false for air-gapped installs (import feeds instead)' }),
  NVD_BACKOFF: Type.Integer({ default: 300, minimum: 0, description: 'Seconds every worker waits before asking the NVD again after a failed on-demand fetch' }),
  SOURCES_FILE: Type.String({ default: 'data/sources.ndjson.gz', description: 'File backing the embedded store of CVE JSON 5 records, distribution trackers, KEV and EPSS; empty keeps them in memory only' }),
  CVE_SERVICES_URL: Type.String({ default: 'https://cveawg.mitre.org', description: 'CVE Services API base URL (cve:import --fetch and delta files)' }),
  DEBIAN_TRACKER_URL: Type.String({ default: 'https://security-tracker.debian.org/tracker/data/json', description: 'Debian security tracker JSON (distro:import with no file)' }),
  KEV_URL: Type.String({ default: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json', description: 'CISA KEV catalog JSON (kev:import with no file)' }),
  EPSS_URL: Type.String({ default: 'https://epss.empiricalsecurity.com/epss_scores-current.csv.gz', description: 'FIRST EPSS daily scores (epss:import with no file)' }),
  EUVD_URL: Type.String({ default: 'https://euvdservices.enisa.europa.eu/api', description: 'Base URL of ENISA\'s EUVD API (dump/cve-euvd-mapping and kev/dump), for `data sync euvd`' }),
  ALPINE_SECDB_URL: Type.String({ default: 'https://secdb.alpinelinux.org', description: 'Base URL of Alpine\'s secdb (v3.NN/main.json, community.json), for `data sync alpine-secdb`' }),
  REDHAT_OSV_URL: Type.String({ default: 'https://security.access.redhat.com/data/osv', description: 'Base URL of Red Hat\'s OSV export (all.json and one file per advisory), for `data sync redhat-osv`' }),
  EXPLOIT_REFRESH: Type.Integer({ default: 30, minimum: 1, description: 'Seconds between checks for a newer KEV, EPSS or EUVD import that findings should take in' }),
  CREDENTIALS_KEY: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'Key that encrypts stored secrets (SSH credentials, tracker tokens) with AES-256-GCM: 32 random bytes as 64 hex characters (openssl rand -hex 32). Required with REDIS_URL; the embedded default makes one per run' })),
  CREDENTIALS_KEY_PREVIOUS: Type.String({ default: '', description: 'Comma-separated earlier CREDENTIALS_KEY values, still accepted for reading while secrets are sealed again under the new key (rotation)' }),
  SSH_CONNECT_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 100, description: 'Credentialed scans: most milliseconds an SSH login may take (connect, key exchange, authentication)' }),
  SSH_COMMAND_TIMEOUT_MS: Type.Integer({ default: 120000, minimum: 100, description: 'Credentialed scans: most milliseconds one command on a host may take (the package list included)' }),
  SSH_OUTPUT_MAX: Type.Integer({ default: 16777216, minimum: 1024, description: 'Credentialed scans: most bytes one command may print before it is stopped and the host\'s collection fails (output-limit)' }),
  SSH_SESSIONS: Type.Integer({ default: 32, minimum: 1, description: 'Credentialed scans: SSH sessions one worker process holds at once, over every scan it runs' }),
  TEMPLATES_DIR: Type.String({ default: '', description: 'Directories of your own Nuclei-format templates (network protocols), loaded beside the project\'s own templates/ set: several separated by commas or the platform path delimiter (: on Linux and macOS, ; on Windows). Empty: the project\'s set only' }),
  TEMPLATES_SIGNING_CERT: Type.String({ default: '', description: 'PEM file of the certificate or public key (ECDSA) that signs templates: each template\'s `# digest:` line is verified with it and GET /templates says signed, unsigned or invalid; a template whose signature does not verify is refused. Empty: no verification (every template is unsigned)' }),
  TEMPLATES_REQUIRE_SIGNED: Type.Boolean({ default: false, description: 'Refuse user templates (TEMPLATES_DIR) that carry no valid signature by TEMPLATES_SIGNING_CERT; the project\'s own templates are always trusted' }),
  WEBHOOK_ALLOW: Type.String({ default: '', description: 'Comma-separated CIDRs webhooks may be sent to although they are private, loopback, link-local or another special range (e.g. 10.0.0.0/8 for an internal chat server)' }),
  WEBHOOK_DENY: Type.String({ default: '', description: 'Comma-separated CIDRs webhooks are never sent to, public ones included; wins over WEBHOOK_ALLOW' }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 100, description: 'Most milliseconds one webhook delivery may take (connect, send, answer)' }),
  WEBHOOK_ATTEMPTS: Type.Integer({ default: 5, minimum: 1, maximum: 20, description: 'Attempts per webhook delivery before it is given up' }),
  WEBHOOK_BACKOFF_MS: Type.Integer({ default: 5000, minimum: 10, description: 'Wait before the second attempt of a failed delivery; doubled for each later one' }),
  INTEGRATION_TRIES: Type.Integer({ default: 4, minimum: 1, maximum: 10, description: 'Issue-tracker sync: tries of one request to a tracker (rate limit, 5xx, lost connection) before the sync is left to the integrations queue\'s retries (WEBHOOK_ATTEMPTS, WEBHOOK_BACKOFF_MS)' }),
  INTEGRATION_BACKOFF_MS: Type.Integer({ default: 1000, minimum: 1, description: 'Issue-tracker sync: wait before the second try of a request when the tracker names none (Retry-After); doubled for each later one' }),
  INTEGRATION_RETRY_AFTER_MAX_MS: Type.Integer({ default: 120000, minimum: 0, description: 'Issue-tracker sync: the longest wait (Retry-After, a rate limit\'s reset) honoured within a sync; a longer one ends the sync, which the queue retries later' })
})

export type Config = Static<typeof ConfigSchema>

/** Read and validate the configuration: `overrides` win over the environment (tests pass everything here). */
export function loadConfig (overrides: Partial<Config> = {}, env: Record<string, string | undefined> = process.env): Config {
  const data: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const v = env[key]
    if (v !== undefined && v !== '') data[key] = v
  }
  Object.assign(data, overrides)
  return envSchema<Config>({ schema: ConfigSchema, data, dotenv: false })
}

/** TRUST_PROXY as a list of addresses and CIDRs (what Fastify's trustProxy takes), or false when no proxy is trusted. */
export function trustedProxies (config: Pick<Config, 'TRUST_PROXY'>): string[] | false {
  const list = config.TRUST_PROXY.split(',').map((s) => s.trim()).filter((s) => s !== '')
  return list.length === 0 ? false : list
}
