-- Up Migration
-- How many hosts have each open TCP port, service, product and tag (facet '' with value '': every host), per
-- severity score and whether the host has findings, kept in the transaction of every host write and delete as
-- finding_counts is: the total of a host list filtered on one of these, with minSeverity and hasFindings or not, is
-- a sum over a few rows rather than a count over every matching host (half of 100,000 hosts match `port=22`).
-- has_findings is findings_count > 0, the hasFindings filter's own condition.
CREATE TABLE host_counts (
  facet text COLLATE "C" NOT NULL,
  value text COLLATE "C" NOT NULL,
  severity_score smallint NOT NULL,
  has_findings boolean NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (facet, value, severity_score, has_findings)
);

-- Hosts written before: counted from the columns the filters read, each value once per host as the filters match it.
INSERT INTO host_counts (facet, value, severity_score, has_findings, n)
SELECT facet, value, severity_score, has_findings, count(*)
FROM (
  SELECT '' AS facet, '' AS value, severity_score, findings_count > 0 AS has_findings FROM hosts
  UNION ALL
  SELECT 'port', v::text, severity_score, findings_count > 0 FROM hosts, LATERAL (SELECT DISTINCT unnest(ports) AS v) AS x
  UNION ALL
  SELECT 'service', v, severity_score, findings_count > 0 FROM hosts, LATERAL (SELECT DISTINCT unnest(services) AS v) AS x
  UNION ALL
  SELECT 'product', v, severity_score, findings_count > 0 FROM hosts, LATERAL (SELECT DISTINCT unnest(products) AS v) AS x
  UNION ALL
  SELECT 'tag', v, severity_score, findings_count > 0 FROM hosts, LATERAL (SELECT DISTINCT unnest(tags) AS v) AS x
) AS f
GROUP BY facet, value, severity_score, has_findings;

-- Down Migration
DROP TABLE host_counts;
