-- Block min/max indexes: build, query, ranges, NaN semantics, lifecycle.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
\set VERBOSITY terse

-- Test data: written by the server (lo_export) in a private directory.
SELECT '/tmp/scipis_block_regress_' || pg_backend_pid() AS dir \gset
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'mkdir -p %s && chmod 755 %s && cat >/dev/null'$$, :'dir', :'dir') \gexec
\set ECHO all

-- Little-endian bytes of a big-endian *send() value.
CREATE FUNCTION pg_temp.le(b bytea) RETURNS bytea LANGUAGE sql AS
$$ SELECT string_agg(substr(b, i, 1), ''::bytea ORDER BY i DESC) FROM generate_series(1, length(b)) i $$;
CREATE FUNCTION pg_temp.write_file(path text, data bytea) RETURNS void LANGUAGE plpgsql AS $$
DECLARE o oid;
BEGIN
  o := lo_from_bytea(0, data);
  PERFORM lo_export(o, path);
  PERFORM lo_unlink(o);
END $$;

-- A 6 x 7 x 5 field in storage blocks of 4 x 3 x 5 (edge blocks clipped):
-- the file holds the blocks in row-major grid order, each row-major inside.
CREATE TEMP TABLE ref AS
SELECT c0, c1, c2, (c0 * 7 + c1) * 5 + c2 AS i,
       CASE WHEN (c0 + c1 + c2) % 11 = 3 THEN 'NaN'::float8
            WHEN (c0 * 7 + c1) * 5 + c2 = 17 THEN 'Infinity'
            WHEN (c0 * 7 + c1) * 5 + c2 = 18 THEN '-Infinity'
            ELSE round((sin(c0 * 0.7) * cos(c1 * 0.4) * 10 + c2)::numeric, 3)::float8 END AS x,
       (((c0 * 7 + c1) * 5 + c2) * 7) % 23 - 11 AS y,
       row_number() OVER (ORDER BY c0 / 4, c1 / 3, c2 / 5, c0 % 4, c1 % 3, c2 % 5) - 1 AS pos
FROM generate_series(0, 5) c0, generate_series(0, 6) c1, generate_series(0, 4) c2;
SELECT pg_temp.write_file(:'dir' || '/x.f64',
  (SELECT string_agg(pg_temp.le(float8send(x)), ''::bytea
          ORDER BY pos) FROM ref));
SELECT pg_temp.write_file(:'dir' || '/y.i32',
  '\x00000000'::bytea || (SELECT string_agg(pg_temp.le(int4send(y)), ''::bytea
          ORDER BY pos) FROM ref));

SELECT scipis_create_block_index('field', jsonb_build_object(
  'x', jsonb_build_object('path', :'dir' || '/x.f64', 'dtype', 'float64'),
  'y', jsonb_build_object('path', :'dir' || '/y.i32', 'dtype', 'int32', 'header_bytes', 4)),
  '{"shape": [6, 7, 5], "block_shape": [4, 3, 5], "partition_bytes": 24, "threads": 2}') IS NOT NULL AS job;
SELECT index_name, variables, shape, block_shape, elements, blocks, partitions,
       partition_elements, bytes_indexed, index_bytes > 0 AS has_file, owner = current_user AS mine
FROM scipis_block_stats('field');
SELECT name, variable_names, shape, block_shape, partitions FROM scipis_block_index WHERE name = 'field';

-- Every predicate against the same condition written in SQL with IEEE NaN
-- rules (PostgreSQL's own float order puts NaN above every number and makes
-- NaN = NaN true; scipis follows IEEE 754 / NumPy instead).
CREATE FUNCTION pg_temp.check(pred text, cond text)
RETURNS TABLE (hits bigint, missing bigint, extra bigint, uncovered bigint) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH got AS (SELECT element AS i, coords, vals FROM scipis_block_query('field', %L)),
         want AS (SELECT i, ARRAY[c0, c1, c2]::bigint[] AS coords, ARRAY[x, y::float8] AS vals
                  FROM ref WHERE %s),
         rng AS (SELECT * FROM scipis_block_ranges('field', %L))
    SELECT (SELECT count(*) FROM got),
           (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) a),
           (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) b),
           (SELECT count(*) FROM got g JOIN ref r USING (i)
             WHERE NOT EXISTS (SELECT 1 FROM rng WHERE variable = 'x'
                                 AND r.pos * 8 >= byte_offset AND r.pos * 8 < byte_offset + byte_length)
                OR NOT EXISTS (SELECT 1 FROM rng WHERE variable = 'y'
                                 AND 4 + r.pos * 4 >= byte_offset AND 4 + r.pos * 4 < byte_offset + byte_length))
    $q$, pred, cond, pred);
END $$;
CREATE TEMP TABLE cases (pred text, cond text);
INSERT INTO cases VALUES
  ('x > 5', $$x > 5 AND x <> 'NaN'$$),
  ('x <= -3 OR y = 4', $$x <= -3 OR y = 4$$),
  ('NOT (x > 5)', $$NOT (x > 5 AND x <> 'NaN')$$),
  ('x <> 2.5', $$x <> 2.5$$),
  ('x = inf', $$x = 'Infinity'$$),
  ('x > 1e300', $$x = 'Infinity'$$),
  ('x < -1e300', $$x = '-Infinity'$$),
  ('x BETWEEN 1 AND 4 AND NOT y BETWEEN -3 AND 3', $$x BETWEEN 1 AND 4 AND NOT y BETWEEN -3 AND 3$$),
  ('x NOT BETWEEN -inf AND inf', $$x = 'NaN'$$),
  ('x = nan', 'false'),
  ('x <> nan', 'true'),
  ('(y > 5 OR y < -5) AND (x >= 0 OR NOT x < 100)',
   $$(y > 5 OR y < -5) AND ((x >= 0 AND x <> 'NaN') OR NOT (x < 100))$$),
  ('10 < y', 'y > 10'),
  ('"y" >= 11 and x > -inf', $$y >= 11 AND x <> 'NaN'$$),
  ('x between 4 and 1', 'false');
SELECT c.pred, k.* FROM cases c, pg_temp.check(c.pred, c.cond) k ORDER BY c.pred;

-- NaN compared the IEEE way, unlike PostgreSQL's float ordering.
SELECT 'NaN'::float8 > 5 AS postgres_nan_gt_5,
       (SELECT count(*) FROM scipis_block_query('field', 'x > 5') WHERE vals[1] = 'NaN') AS scipis_nan_hits;

-- Ranges: coalesced reads with their min/max; gap and size limits.
SELECT variable, block, first_partition, partitions, byte_offset, byte_length, min, max
FROM scipis_block_ranges('field', 'x > 9', max_gap => 0) ORDER BY variable, byte_offset;
SELECT variable, block, first_partition, partitions, byte_offset, byte_length, min, max
FROM scipis_block_ranges('field', 'x > 9') ORDER BY variable, byte_offset;
SELECT count(*) AS reads, sum(byte_length) AS bytes FROM scipis_block_ranges('field', 'x > 0', max_gap => 0);
SELECT count(*) AS reads, sum(byte_length) AS bytes FROM scipis_block_ranges('field', 'x > 0');
SELECT count(*) AS reads, sum(byte_length) AS bytes FROM scipis_block_ranges('field', 'x > 0', max_gap => 1000);
SELECT count(*) AS reads, max(byte_length) AS largest FROM scipis_block_ranges('field', 'x > -inf', max_read => 48);

-- Counting, with the three pruning modes.
SELECT pruning, hits, candidate_partitions, bytes_read, read_requests, elements_checked
FROM unnest(ARRAY['partition', 'block', 'none']) pruning,
     LATERAL scipis_block_count('field', 'x > 9', pruning) ORDER BY pruning;

-- 1-D default shape over a whole file, one storage block.
SELECT pg_temp.write_file(:'dir' || '/v.i64',
  (SELECT string_agg(pg_temp.le(int8send(g * 1000003 % 1009)), ''::bytea ORDER BY g)
   FROM generate_series(0, 999) g));
SELECT scipis_create_block_index('v', jsonb_build_object('v', jsonb_build_object('path', :'dir' || '/v.i64', 'dtype', 'int64'))) IS NOT NULL AS job;
SELECT elements, blocks, partitions, partition_elements, shape FROM scipis_block_stats('v');
SELECT element, coords, vals FROM scipis_block_query('v', 'v >= 1005') ORDER BY element;
SELECT count(*) FROM scipis_block_query('v', 'v < 10 or v > 1000');

-- Joins with user tables.
CREATE TEMP TABLE labels AS SELECT g AS element, 'label ' || g AS label FROM generate_series(0, 999, 3) g;
SELECT l.label, q.vals[1] FROM scipis_block_query('v', 'v BETWEEN 500 AND 502') q
JOIN labels l USING (element) ORDER BY 1;

-- Transactions: a rolled-back create leaves no file; a rolled-back drop keeps it.
CREATE FUNCTION pg_temp.index_path(n text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN current_setting('scipis.data_directory', true) IN ('', NULL)
              THEN current_setting('data_directory') || '/scipis'
              WHEN current_setting('scipis.data_directory') LIKE '/%'
              THEN current_setting('scipis.data_directory')
              ELSE current_setting('data_directory') || '/' || current_setting('scipis.data_directory') END
         || '/' || (SELECT oid FROM pg_database WHERE datname = current_database())
         || '/' || (SELECT index_file FROM scipis_block_index WHERE name = n) $$;
CREATE TEMP TABLE paths (n text, p text);
BEGIN;
SELECT scipis_create_block_index('tmp', jsonb_build_object('v', jsonb_build_object('path', :'dir' || '/v.i64', 'dtype', 'int64'))) IS NOT NULL AS job;
INSERT INTO paths SELECT 'tmp', pg_temp.index_path('tmp');
SELECT (pg_stat_file(p, true)).size > 0 AS exists_inside FROM paths WHERE n = 'tmp';
ROLLBACK;
INSERT INTO paths SELECT 'v', pg_temp.index_path('v');
SELECT count(*) FROM scipis_block_index WHERE name = 'tmp';
SELECT pg_stat_file(p, true) IS NULL AS gone_after_rollback FROM paths WHERE n = 'tmp';
BEGIN;
SELECT scipis_drop_block_index('v');
ROLLBACK;
SELECT (pg_stat_file(p, true)).size > 0 AS exists_after_rollback FROM paths WHERE n = 'v';
SELECT count(*) FROM scipis_block_query('v', 'v > 1000');
SELECT scipis_rebuild_block_index('v') IS NOT NULL AS job;
SELECT pg_stat_file(p, true) IS NULL AS old_file_gone FROM paths WHERE n = 'v';
SELECT count(*) FROM scipis_block_query('v', 'v > 1000');
SELECT scipis_drop_block_index('v');
SELECT count(*) FROM scipis_block_index WHERE name = 'v';
SELECT scipis_drop_block_index('v', if_exists => true);

-- Jobs: wait => false returns the job's id, a worker builds and records it.
SELECT scipis_create_block_index('queued', jsonb_build_object('v', jsonb_build_object(
  'path', :'dir' || '/v.i64', 'dtype', 'int64')), wait => false) AS qjob \gset
SELECT scipis_wait_job(:qjob);
SELECT kind, target, state, error FROM scipis_jobs WHERE id = :qjob;
SELECT elements, owner = current_user AS mine FROM scipis_block_stats('queued');
SELECT count(*) FROM scipis_block_query('queued', 'v > 1000');
SELECT scipis_rebuild_block_index('queued', wait => false) AS rjob \gset
SELECT scipis_wait_job(:rjob);
SELECT kind, state FROM scipis_jobs WHERE id = :rjob;
SELECT count(*) FROM scipis_block_query('queued', 'v > 1000');
-- Queued, then created by a waited call before the job runs: the job fails.
BEGIN;
SELECT scipis_create_block_index('twice', jsonb_build_object('v', jsonb_build_object(
  'path', :'dir' || '/v.i64', 'dtype', 'int64')), wait => false) AS djob \gset
SELECT scipis_create_block_index('twice', jsonb_build_object('v', jsonb_build_object(
  'path', :'dir' || '/v.i64', 'dtype', 'int64'))) IS NOT NULL AS job;
COMMIT;
SELECT scipis_wait_job(:djob);
SELECT state, error, sqlstate FROM scipis_jobs WHERE id = :djob;
-- A build error through a waited job is the caller's error.
\set ECHO none
SELECT format($q$DO $d$ BEGIN PERFORM scipis_create_block_index('missing', %L::jsonb);
  EXCEPTION WHEN OTHERS THEN RAISE WARNING '%%: %%', SQLSTATE, replace(SQLERRM, %L, '$DIR'); END $d$$q$,
  jsonb_build_object('v', jsonb_build_object('path', :'dir' || '/no_such.i64', 'dtype', 'int64')),
  :'dir') \gexec
\set ECHO all
SELECT scipis_drop_block_index('queued');
SELECT scipis_drop_block_index('twice');

SELECT scipis_drop_block_index('field');
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'rm -rf %s; cat >/dev/null'$$, :'dir') \gexec
\set ECHO all
