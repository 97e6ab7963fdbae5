-- pgTAP: the collection API checked against what PostgreSQL itself says of
-- the same files (pg_ls_dir, pg_stat_file), and its ordering rules.
\set QUIET on
\set ON_ERROR_STOP on
SELECT setting || '/scipis/loghub-2k' AS sample FROM pg_config WHERE name = 'SHAREDIR' \gset
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS scipis;
SELECT plan(33);

SELECT has_function('scipis_create_collection', ARRAY['text', 'text', 'jsonb']);
SELECT has_function('scipis_index', ARRAY['text', 'boolean']);
SELECT has_function('scipis_cancel_job', ARRAY['bigint']);
SELECT has_function('scipis_wait_job', ARRAY['bigint', 'interval']);
SELECT has_function('scipis_run_jobs', ARRAY[]::text[]);
SELECT has_function('scipis_refresh', ARRAY['text', 'text[]', 'boolean']);
SELECT has_function('scipis_compact', ARRAY['text']);
SELECT has_function('scipis_wait_fresh', ARRAY['text', 'timestamp with time zone', 'interval']);
SELECT has_function('scipis_create_block_index', ARRAY['text', 'jsonb', 'jsonb', 'boolean']);
SELECT has_view('scipis_jobs');
SELECT has_function('scipis_search', ARRAY['text', 'text', 'integer', 'text', 'text']);
SELECT has_function('scipis_lookup', ARRAY['text']);
SELECT has_function('scipis_drop_collection', ARRAY['text']);
SELECT has_view('scipis_files');
SELECT has_view('scipis_collections');
SELECT ok((SELECT extconfig IS NOT NULL FROM pg_extension WHERE extname = 'scipis'),
          'the registry is dumped with the extension');

SELECT scipis_create_collection('tap_a', :'sample');
SELECT scipis_create_collection('tap_b', :'sample', '{"index_depth": 1, "split_factor": 64}');
SELECT lives_ok($$SELECT * FROM scipis_index('tap_a')$$, 'index tap_a');
SELECT lives_ok($$SELECT * FROM scipis_index('tap_b')$$, 'index tap_b');
-- The job's counters against what pg_ls_dir and pg_stat_file say of the tree.
SELECT results_eq(
  $$SELECT files_done, files_total, bytes_done, bytes_total FROM scipis_jobs
    WHERE target = 'tap_a' AND state = 'succeeded' ORDER BY id DESC LIMIT 1$$,
  format($$SELECT count(*), count(*), sum((pg_stat_file(%L || '/' || f)).size)::bigint,
                  sum((pg_stat_file(%L || '/' || f)).size)::bigint FROM pg_ls_dir(%L) f$$,
         :'sample', :'sample', :'sample'),
  'the job of tap_a counted every file and byte of the tree');

SELECT set_eq(
  format($$SELECT path FROM scipis_files WHERE collection = 'tap_a'$$),
  format($$SELECT %L || '/' || f FROM pg_ls_dir(%L) f$$, :'sample', :'sample'),
  'scipis_files lists every file of the tree');
SELECT set_eq(
  $$SELECT path, size, date_trunc('second', mtime) AS m, date_trunc('second', ctime) AS c
    FROM scipis_files WHERE collection = 'tap_a'$$,
  $$SELECT path, (pg_stat_file(path)).size, date_trunc('second', (pg_stat_file(path)).modification) AS m,
           date_trunc('second', (pg_stat_file(path)).change) AS c
    FROM scipis_files WHERE collection = 'tap_a'$$,
  'sizes and times are those the file system reports');
SELECT is(
  (SELECT count(*) FROM scipis_files
   WHERE collection = 'tap_a' AND (mode & 61440) = 32768 AND (mode & 292) <> 0
     AND uid >= 0 AND gid >= 0 AND inode <> 0),
  (SELECT count(*) FROM scipis_files WHERE collection = 'tap_a'),
  'every file is a regular file (S_IFREG), readable, with an owner and an inode');
SELECT set_eq(
  $$SELECT path, size, inode FROM scipis_locate('HDFS', 'tap_a')$$,
  $$SELECT path, size, inode FROM scipis_files WHERE collection = 'tap_a' AND strpos(path, 'HDFS') > 0$$,
  'scipis_locate with a substring gives the files whose path holds it');
SELECT is(
  (SELECT count(*) FROM scipis_files f, LATERAL scipis_lookup(f.path) l
   WHERE f.collection = 'tap_a' AND l.collection = 'tap_a'
     AND (l.path, l.size, l.mtime, l.tokens, l.ctime, l.uid, l.gid, l.mode, l.inode)
       = (f.path, f.size, f.mtime, f.tokens, f.ctime, f.uid, f.gid, f.mode, f.inode)),
  (SELECT count(*) FROM scipis_files WHERE collection = 'tap_a'),
  'every file is found by scipis_lookup with the same row');

SELECT is((SELECT count(*) FROM scipis_search('error', 'tap_a', k => 1))::int, 1, 'k => 1 gives one row');
SELECT cmp_ok((SELECT count(*) FROM scipis_search('info', 'tap_a', k => NULL))::int, '>',
              (SELECT count(*) FROM scipis_search('info', 'tap_a'))::int, 'k => NULL gives every match');
SELECT is(
  (SELECT count(*) FROM (
     SELECT score, path, lead(score) OVER w AS next_score, lead(path) OVER w AS next_path
     FROM (SELECT *, row_number() OVER () AS rn FROM scipis_search('error failed info', 'tap_a', k => NULL)) s
     WINDOW w AS (ORDER BY rn)) x
   WHERE next_score > score OR (next_score = score AND next_path < path))::int,
  0, 'rows come by score descending, then path ascending');
SELECT is(
  (SELECT count(*) FROM scipis_search('connection error', 'tap_a', k => NULL, match => 'all')
   WHERE path NOT IN (SELECT path FROM scipis_search('connection error', 'tap_a', k => NULL)))::int,
  0, 'match all returns a subset of match any');
SELECT set_eq(
  $$SELECT path, score FROM scipis_search('error failed', 'tap_a', k => NULL, ranking => 'bm25')$$,
  $$SELECT path, score FROM scipis_search('error failed', 'tap_b', k => NULL, ranking => 'bm25')$$,
  'the same tree gives the same scores whatever the tuning');
SELECT results_eq(
  $$SELECT collection, path FROM scipis_search('error', k => 4)$$,
  $$SELECT c, p FROM (SELECT path AS p, score AS s FROM scipis_search('error', 'tap_a', k => 2)) x,
      (VALUES ('tap_a'), ('tap_b')) v(c) ORDER BY s DESC, p, c$$,
  'without a collection, collections are merged by score, then path');

SELECT throws_ok($$SELECT * FROM scipis_search('  ', 'tap_a')$$, '22023', NULL, 'an empty query is an error');
SELECT throws_ok($$SELECT * FROM scipis_search('x', 'tap_none')$$, '42704', NULL, 'an unknown collection is an error');
SELECT throws_ok($$SELECT scipis_create_collection('tap_c', '/tmp', '{"index_depth": 0}')$$, '22023', NULL,
                 'a bad option is an error');

SELECT scipis_drop_collection('tap_a');
SELECT scipis_drop_collection('tap_b');
SELECT * FROM finish();
