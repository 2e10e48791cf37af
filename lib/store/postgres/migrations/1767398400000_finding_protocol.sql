-- Up Migration
-- Findings carry the transport of their port (`protocol`: tcp or udp) since UDP ports are scanned. Every finding
-- stored before was on a TCP port, and its id stays what it was (only UDP findings have the protocol in their id's
-- input). The field is put in the record's text where the store writes it, after `port`, so that the text stays
-- exactly what the store would write now and an unchanged finding is not rewritten by its next scan.
UPDATE findings
SET record = regexp_replace(record::text, '^(\{"id":"[0-9a-f]+","address":"[^"]*","port":[0-9]+,)"cveId":', '\1"protocol":"tcp","cveId":')::json
WHERE record->>'protocol' IS NULL;

-- Down Migration
UPDATE findings
SET record = regexp_replace(record::text, '^(\{"id":"[0-9a-f]+","address":"[^"]*","port":[0-9]+,)"protocol":"tcp",', '\1')::json
WHERE record->>'protocol' = 'tcp';
