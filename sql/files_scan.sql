-- scipis_files with conditions (on this test's collection: others of the
-- database may be there): a custom scan hands the ones it can to the
-- engine (ranges over each block's statistics) and still checks every
-- condition on every row; answers equal the plain function scan's.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
\set tree `echo /tmp/scipis-files-scan-$PGPORT`
\setenv TREE :tree
-- 8 directories of 100 files; sizes and mtimes rise with the names.
\! rm -rf "$TREE" && for d in 0 1 2 3 4 5 6 7; do mkdir -p "$TREE/run$d"; for f in $(seq 0 99); do n=$(printf %02d $f); head -c $((d * 100 + f + 1)) /dev/zero | tr '\0' 'a' > "$TREE/run$d/out$n.log"; touch -d "@$((1700000000 + d * 86400 + f * 60))" "$TREE/run$d/out$n.log"; done; done; chmod -R a+rX "$TREE"
SELECT scipis_create_collection('fscan', :'tree', '{"indexer_threads": 1, "reader_threads": 1}');
SELECT files FROM scipis_index('fscan');

\c
-- Blocks of records, and of them read, from EXPLAIN ANALYZE.
CREATE FUNCTION pg_temp.blocks(q text, OUT blocks int, OUT read int) AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
  SELECT (p->>'Record Blocks')::int, (p->>'Record Blocks Read')::int
  INTO blocks, read
  FROM json_array_elements(plan) e,
       LATERAL (SELECT e->'Plan' AS p UNION ALL SELECT e->'Plan'->'Plans'->0) s
  WHERE p->>'Custom Plan Provider' = 'ScipisFilesScan';
END $$ LANGUAGE plpgsql;

-- What is pushed down (from a new backend's first statement on).
EXPLAIN (COSTS OFF) SELECT path FROM scipis_files WHERE size > 1e3 AND mtime >= '2023-11-16 00:00+00';
EXPLAIN (COSTS OFF) SELECT count(*) FROM scipis_files WHERE uid = 0 AND gid <= 5 AND ctime < now() + interval '1 day';
EXPLAIN (COSTS OFF) SELECT path FROM scipis_files WHERE path LIKE '/tmp/x/run3/%' AND collection = 'fscan';
EXPLAIN (COSTS OFF) SELECT path FROM scipis_files WHERE starts_with(path, '/a') OR size = 3;
EXPLAIN (COSTS OFF) SELECT path FROM scipis_files WHERE size::text = '5' AND random() < 2;
EXPLAIN (COSTS OFF) SELECT path FROM scipis_files WHERE 100 <= size AND path >= '/tmp' COLLATE "C";

-- Selective conditions read few blocks: the matching files lie in one
-- directory of 100 files, which one reader and one indexer keep together,
-- so in at most 3 of the 13 blocks of 64. The answers are the function
-- scan's.
SELECT read <= 3 AS few, blocks
FROM pg_temp.blocks(format('SELECT path FROM scipis_files WHERE collection = ''fscan'' AND path LIKE %L', :'tree' || '/run3/out1%'));
SELECT read <= 3 AS few, blocks FROM pg_temp.blocks('SELECT path FROM scipis_files WHERE collection = ''fscan'' AND size BETWEEN 420 AND 430');
SELECT read <= 3 AS few, blocks FROM pg_temp.blocks($q$SELECT path FROM scipis_files WHERE collection = 'fscan' AND mtime > '2023-11-21 23:00+00'$q$);
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND path LIKE :'tree' || '/run3/out1%';
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND size BETWEEN 420 AND 430;
SELECT count(*) FROM scipis_files WHERE mtime > '2023-11-21 23:00+00' AND collection = 'fscan';
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND (size > 1e9 OR collection <> 'fscan');
SELECT count(*) FROM scipis_files WHERE collection = 'nosuch';
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND size > NULL::bigint;
-- Bounds at the ends of every type.
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND (size > 9223372036854775807 OR size < -9223372036854775808);
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND size > -1e30 AND size < 'Infinity'::float8 AND uid < 4294967296;
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND mtime > '-infinity' AND mtime < 'infinity' AND ctime > 'epoch'::date;
SELECT count(*) FROM scipis_files WHERE collection = 'fscan' AND size::numeric > 'NaN';
-- Every condition form against the same query through a plain function
-- scan (OFFSET 0 keeps the conditions above it): a warning names any that
-- differ.
DO $$
DECLARE
  c text;
  a bigint;
  b bigint;
BEGIN
  FOREACH c IN ARRAY ARRAY[
    'size > 250', 'size >= 250.5', 'size < 10', 'size <= 9.99', 'size = 101', '101 = size',
    'size > 1e2 AND size < 2e2', 'mtime > ''2023-11-15 00:00:00+00''', 'mtime <= ''2023-11-15''::date',
    'mtime = to_timestamp(1700000000)', 'ctime >= now() - interval ''100 years''',
    'uid = 0', 'gid >= 0', 'uid > 4294967295', 'uid < 0',
    'path LIKE ''%out1%''', 'path LIKE ''/tmp/scipis-files-scan-%/run1/out0_.log''',
    'starts_with(path, ''/tmp/scipis-files-scan'')', 'path ^@ ''/tmp/scipis-files-scan''',
    'path >= ''/tmp/scipis-files-scan-z'' COLLATE "C"', 'path > ''/'' COLLATE "C"',
    'path LIKE ''/tmp\%''', 'path = ''nothing''', 'collection = ''fscan'' AND size < 300']
  LOOP
    EXECUTE 'SELECT count(*) FROM scipis_files WHERE collection = ''fscan'' AND (' || c || ')' INTO a;
    EXECUTE 'SELECT count(*) FROM (SELECT * FROM scipis_list_files() OFFSET 0) f WHERE collection = ''fscan'' AND (' || c || ')' INTO b;
    IF a <> b THEN
      RAISE WARNING '% : % rows pushed down, % through the function scan', c, a, b;
    END IF;
  END LOOP;
END $$;

SELECT scipis_drop_collection('fscan');
\! rm -rf "$TREE"
