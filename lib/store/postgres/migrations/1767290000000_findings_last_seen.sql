-- Up Migration
-- A re-scan rewrites most of its findings with only lastSeen (and the record) changed. Any indexed column that
-- changes makes PostgreSQL add an entry to every index of the row (ten here); when none does, the new version
-- goes on the same page with no index entry at all (a HOT update), if the page has room. So the one index on a
-- column every re-scan changes, last_seen_ms, moves to a narrow table of its own, kept equal to findings by
-- statement triggers (every write path, whichever statement it uses), and findings keeps room on each page
-- for the next versions of its rows.
CREATE TABLE finding_last_seen (
  id text COLLATE "C" PRIMARY KEY,
  last_seen_ms bigint NOT NULL
);
INSERT INTO finding_last_seen (id, last_seen_ms) SELECT id, last_seen_ms FROM findings;
CREATE INDEX finding_last_seen_by_time ON finding_last_seen (last_seen_ms, id);
DROP INDEX findings_by_last_seen;
-- Pages written from now on are half filled: a 1–2 kB finding row leaves room for two or three new versions.
ALTER TABLE findings SET (fillfactor = 50);

CREATE FUNCTION finding_last_seen_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO finding_last_seen (id, last_seen_ms) SELECT id, last_seen_ms FROM new_rows;
  RETURN NULL;
END
$$;
CREATE FUNCTION finding_last_seen_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE finding_last_seen s SET last_seen_ms = n.last_seen_ms FROM new_rows n WHERE s.id = n.id AND s.last_seen_ms <> n.last_seen_ms;
  RETURN NULL;
END
$$;
CREATE FUNCTION finding_last_seen_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM finding_last_seen s USING old_rows o WHERE s.id = o.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER findings_last_seen_insert AFTER INSERT ON findings REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION finding_last_seen_inserted();
CREATE TRIGGER findings_last_seen_update AFTER UPDATE ON findings REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION finding_last_seen_updated();
CREATE TRIGGER findings_last_seen_delete AFTER DELETE ON findings REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION finding_last_seen_deleted();

-- Down Migration
DROP TRIGGER findings_last_seen_delete ON findings;
DROP TRIGGER findings_last_seen_update ON findings;
DROP TRIGGER findings_last_seen_insert ON findings;
DROP FUNCTION finding_last_seen_deleted();
DROP FUNCTION finding_last_seen_updated();
DROP FUNCTION finding_last_seen_inserted();
ALTER TABLE findings RESET (fillfactor);
CREATE INDEX findings_by_last_seen ON findings (last_seen_ms, id);
DROP TABLE finding_last_seen;
