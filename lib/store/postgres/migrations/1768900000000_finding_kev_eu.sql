-- Up Migration
-- ENISA's EU KEV beside CISA's: kev_eu is true when the EUVD's exploited dump lists the finding's CVE as on the
-- EU KEV (the `kev` filter's `eu`, and `true` for any catalogue). The counts tables keep CISA's listing only.
ALTER TABLE findings ADD COLUMN kev_eu boolean NOT NULL DEFAULT false;
CREATE INDEX findings_kev_eu ON findings (id) WHERE kev_eu;
-- Findings stored before carry the two fields the API shows: the catalogues (CISA's, from kev) and no EUVD id.
UPDATE findings SET record = (record::jsonb || jsonb_build_object(
  'kevCatalogues', CASE WHEN kev THEN '["cisa"]'::jsonb ELSE '[]'::jsonb END, 'euvdId', NULL))::json
WHERE record->'kevCatalogues' IS NULL;

-- Down Migration
DROP INDEX findings_kev_eu;
ALTER TABLE findings DROP COLUMN kev_eu;
