-- Up Migration
-- How many hosts there are, kept in the transaction of every host write and delete beside the revision: the total
-- of the unfiltered host list is this one value rather than a count over every host row (100,000 rows of records
-- read for each page at that size).
ALTER TABLE results_revision ADD COLUMN host_total bigint NOT NULL DEFAULT 0;
UPDATE results_revision SET host_total = (SELECT count(*) FROM hosts);

-- Down Migration
ALTER TABLE results_revision DROP COLUMN host_total;
