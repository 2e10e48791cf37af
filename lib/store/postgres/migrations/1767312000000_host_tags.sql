-- Up Migration
-- Host tags (lib/tags.ts): a column for the `tag` filter of host and finding lists and for a scan's targetTags,
-- beside the record, which carries them too. Records written before have no tags: they get an empty list,
-- appended as the last field, where the store's own records keep it, so that their text stays as the store writes it.

ALTER TABLE hosts ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
CREATE INDEX hosts_tags ON hosts USING gin (tags);
UPDATE hosts SET record = (left(record::text, -1) || ',"tags":[]}')::json WHERE (record->'tags') IS NULL;

-- Down Migration
UPDATE hosts SET record = (record::jsonb - 'tags')::json;
DROP INDEX hosts_tags;
ALTER TABLE hosts DROP COLUMN tags;
