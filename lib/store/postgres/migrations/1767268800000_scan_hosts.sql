-- Up Migration
-- What each scan saw of each host: one row per scan and host, written in the transaction of the host write. The
-- snapshot (up, covered and settled ports as range text, open and filtered ports with service, product and
-- version) is json like the other records; the findings the scan observed there are an array of finding ids
-- (and their ports, in the same order), so that `scanId` filters read a scan's rows and no row per finding is
-- written beside the findings themselves.
CREATE TABLE scan_hosts (
  scan_id text COLLATE "C" NOT NULL,
  address text COLLATE "C" NOT NULL,
  finding_ids text[] NOT NULL,
  finding_ports integer[] NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (scan_id, address)
);

-- Deleting a host takes its snapshots with it.
CREATE INDEX scan_hosts_by_address ON scan_hosts (address);

-- Down Migration
DROP TABLE scan_hosts;
