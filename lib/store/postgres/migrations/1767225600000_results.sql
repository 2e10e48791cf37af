-- Up Migration
-- Hosts and findings. Each row keeps the whole record as the store returns it beside one column per filter and
-- sort key (a new record field needs no migration). The record is json, not jsonb: its text comes back exactly as
-- written, key order included, which the merge rules rely on when they tell a changed record from an unchanged one;
-- every filter reads the columns, computed by the store from the record with the same functions the embedded
-- store sorts and filters by. Text compared for order uses the C collation, the code-unit order JavaScript
-- compares strings in.

CREATE TABLE hosts (
  address text COLLATE "C" PRIMARY KEY,
  -- addressSortKey: IPv4 before IPv6, each by value.
  addr_key text COLLATE "C" NOT NULL,
  last_seen_ms bigint NOT NULL,
  findings_count integer NOT NULL,
  -- severityScore of the host's maximum severity: -1 (none standing) .. 5 (critical).
  severity_score smallint NOT NULL,
  -- hostSearchText: the address and every hostname, lower case.
  search text NOT NULL,
  -- hostFacets: open ports, and the lower-case service and product names on them.
  ports integer[] NOT NULL,
  services text[] NOT NULL,
  products text[] NOT NULL,
  record json NOT NULL
);

CREATE INDEX hosts_by_last_seen ON hosts (last_seen_ms, address);
CREATE INDEX hosts_by_address ON hosts (addr_key, address);
CREATE INDEX hosts_by_findings ON hosts (findings_count, address);
CREATE INDEX hosts_by_severity ON hosts (severity_score, address);
CREATE INDEX hosts_ports ON hosts USING gin (ports);
CREATE INDEX hosts_services ON hosts USING gin (services);
CREATE INDEX hosts_products ON hosts USING gin (products);

-- The `q` filter is a substring search: a trigram index answers LIKE '%…%'. The extension is database-wide
-- and lives in public (never in this schema, which a purge drops); the index names its operator class there.
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
DO $$
DECLARE
  ext_schema text;
BEGIN
  SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE INDEX hosts_search ON hosts USING gin (search %I.gin_trgm_ops)', ext_schema);
END
$$;

CREATE TABLE findings (
  id text COLLATE "C" PRIMARY KEY,
  -- The host's address. No foreign key: the store writes a host and its findings in one transaction and deletes
  -- them together, and a key check per finding would cost a lookup on every write of millions.
  address text COLLATE "C" NOT NULL,
  cve_id text COLLATE "C" NOT NULL,
  severity text NOT NULL,
  cvss double precision,
  -- The CVSS sort value: a missing score (-1) below every real one.
  cvss_sort double precision NOT NULL,
  epss double precision,
  kev boolean NOT NULL,
  status text NOT NULL,
  confidence text NOT NULL,
  first_seen_ms bigint NOT NULL,
  last_seen_ms bigint NOT NULL,
  -- riskValue: KEV with ransomware, KEV, others; then EPSS, then CVSS, as one integer.
  risk bigint NOT NULL,
  record json NOT NULL
);

CREATE INDEX findings_by_host ON findings (address, id);
-- A CVE's findings in the default order: a CVE seen on half the hosts pages without sorting its share, and its
-- count and affected hosts come from the index alone.
CREATE INDEX findings_by_cve ON findings (cve_id, cvss_sort, id) INCLUDE (status, address);
CREATE INDEX findings_by_cvss ON findings (cvss_sort, id);
CREATE INDEX findings_by_last_seen ON findings (last_seen_ms, id);
CREATE INDEX findings_by_first_seen ON findings (first_seen_ms, id);
CREATE INDEX findings_by_risk ON findings (risk, id);
CREATE INDEX findings_by_epss ON findings (epss, id) WHERE epss IS NOT NULL;
-- Small and rare slices that a sort index would walk far to fill a page from.
CREATE INDEX findings_kev_by_cvss ON findings (cvss_sort, id) WHERE kev;
-- Severity follows CVSS: a severity's findings sit together in CVSS order, far from one end of the sort index.
CREATE INDEX findings_by_severity ON findings (severity, cvss_sort, id);
-- Statuses other than open are the rarer ones a list filters on (the default list and status=open walk the sort index).
CREATE INDEX findings_by_status ON findings (status, cvss_sort, id) WHERE status <> 'open';

-- How many findings have each combination of the low-cardinality filters, kept in the same transaction as
-- every finding write: the `total` of a list filtered on these alone is a sum over a few hundred rows rather
-- than a count over millions.
CREATE TABLE finding_counts (
  status text NOT NULL,
  severity text NOT NULL,
  kev boolean NOT NULL,
  confidence text NOT NULL,
  cvss_sort double precision NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (status, severity, kev, confidence, cvss_sort)
);

-- The same for EPSS: findings with a score, per status, KEV or not, and score bucket (floor(score × 10,000)). A
-- `minEpss` total is the sum over the buckets wholly above the threshold plus an exact count inside the one
-- bucket the threshold falls in.
CREATE TABLE finding_epss_counts (
  epss_bucket integer NOT NULL,
  status text NOT NULL,
  kev boolean NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (epss_bucket, status, kev)
);

-- Moves with every host write and delete, committed with it: readers cache host pages under it.
CREATE TABLE results_revision (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  hosts bigint NOT NULL
);
INSERT INTO results_revision (one, hosts) VALUES (true, 0);

-- Down Migration
DROP TABLE results_revision;
DROP TABLE finding_epss_counts;
DROP TABLE finding_counts;
DROP TABLE findings;
DROP TABLE hosts;
