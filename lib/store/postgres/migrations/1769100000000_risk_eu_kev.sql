-- Up Migration
-- The risk order counts ENISA's EU KEV as known exploited, beside CISA's KEV (lib/sorting.ts riskValue): a finding
-- only the EU KEV lists moves from the unlisted rank (0) to the listed one (1e12), in both sort columns.
UPDATE findings SET risk = risk + 1000000000000, severity_risk = severity_risk + 1000000000000
WHERE kev_eu AND NOT kev;

-- Down Migration
UPDATE findings SET risk = risk - 1000000000000, severity_risk = severity_risk - 1000000000000
WHERE kev_eu AND NOT kev;
