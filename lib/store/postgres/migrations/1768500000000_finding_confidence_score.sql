-- Up Migration
-- Findings carry a confidence score (0–100, lib/match/confidence.ts) beside the label, and lists filter on it
-- (minConfidence). Findings stored before get the score their source, rule and label stand for (scoreOfFinding),
-- in the column and in the record's text where the store writes it, after `confidence`, so that an unchanged
-- finding is not rewritten by its next scan.
ALTER TABLE findings ADD COLUMN confidence_score smallint NOT NULL DEFAULT 0;

UPDATE findings SET confidence_score = CASE
  WHEN record->>'confidenceScore' IS NOT NULL THEN (record->>'confidenceScore')::smallint
  WHEN record->>'source' = 'distribution' AND record->>'rule' ~ '^package\M' THEN 97
  WHEN record->>'source' = 'template' THEN 85
  WHEN record->>'source' = 'vulnscan' THEN 95
  WHEN confidence = 'high' THEN 80
  WHEN confidence = 'medium' THEN 50
  ELSE 30
END;

UPDATE findings
SET record = regexp_replace(record::text, '("confidence":"[a-z]+",)', '\1"confidenceScore":' || confidence_score || ',')::json
WHERE record->>'confidenceScore' IS NULL;

-- minConfidence filters: the findings at or above a score, in the default order.
CREATE INDEX findings_by_confidence_score ON findings (confidence_score, cvss_sort, id);

-- Down Migration
DROP INDEX IF EXISTS findings_by_confidence_score;
UPDATE findings
SET record = regexp_replace(record::text, '"confidenceScore":[0-9]+,', '')::json
WHERE record->>'confidenceScore' IS NOT NULL;
ALTER TABLE findings DROP COLUMN IF EXISTS confidence_score;
