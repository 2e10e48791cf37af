-- Up Migration
-- How many findings each group has per combination of the counted filters (finding_counts' dimensions), kept in
-- the transaction of every write that changes a group's members or a member's counted fields: the `total` of a
-- finding list filtered on a scan or a host tag is a sum over a few hundred rows rather than a count over the
-- group's findings (every finding, for a scan of the whole network). A group is a scan's findings (`scan:<id>`:
-- the ids its scan_hosts rows list) or the findings of the hosts carrying a tag (`tag:<tag>`).
CREATE TABLE finding_group_counts (
  grp text COLLATE "C" NOT NULL,
  status text NOT NULL,
  severity text NOT NULL,
  kev boolean NOT NULL,
  confidence text NOT NULL,
  cvss_sort double precision NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (grp, status, severity, kev, confidence, cvss_sort)
);

-- A scan row lists each of its host's findings once, and a host's tags are a set: each member is counted once.
INSERT INTO finding_group_counts (grp, status, severity, kev, confidence, cvss_sort, n)
SELECT 'scan:' || sh.scan_id, f.status, f.severity, f.kev, f.confidence, f.cvss_sort, count(*)
FROM scan_hosts sh CROSS JOIN LATERAL unnest(sh.finding_ids) AS u(id) JOIN findings f ON f.id = u.id
GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO finding_group_counts (grp, status, severity, kev, confidence, cvss_sort, n)
SELECT 'tag:' || t.tag, f.status, f.severity, f.kev, f.confidence, f.cvss_sort, count(*)
FROM hosts h CROSS JOIN LATERAL unnest(h.tags) AS t(tag) JOIN findings f ON f.address = h.address
GROUP BY 1, 2, 3, 4, 5, 6;

-- Down Migration
DROP TABLE finding_group_counts;
