-- Up Migration
-- sort=severity: severity rank, then riskValue (KEV, EPSS, CVSS), as one integer (severityRiskValue in
-- results-merge.ts), so that an exposure finding without CVSS sorts in its severity rather than below every CVE.
ALTER TABLE findings ADD COLUMN severity_risk bigint;
UPDATE findings SET severity_risk = (1 + CASE severity
  WHEN 'none' THEN 0 WHEN 'unknown' THEN 1 WHEN 'low' THEN 2 WHEN 'medium' THEN 3 WHEN 'high' THEN 4 WHEN 'critical' THEN 5 ELSE -1 END)
  * 10000000000000 + risk;
ALTER TABLE findings ALTER COLUMN severity_risk SET NOT NULL;
CREATE INDEX findings_by_severity_risk ON findings (severity_risk, id);

-- Down Migration
DROP INDEX findings_by_severity_risk;
ALTER TABLE findings DROP COLUMN severity_risk;
