-- The scipis tour, run by scripts/demo.sh on a throwaway cluster.
\getenv sample SCIPIS_SAMPLE
\echo '== create the extension and a collection over the Loghub samples'
CREATE EXTENSION scipis;
SELECT scipis_create_collection('loghub', :'sample', '{"include": "*.log"}');

\echo '== index it with the SCIPIS pipeline (crawler, readers, indexers, writers)'
SELECT files, bytes, tokens, terms, segments, round(seconds::numeric, 3) AS seconds,
       round(mib_per_s::numeric, 1) AS mib_per_s, skipped
FROM scipis_index('loghub');

\echo '== or as a background job: queue it, then wait for it and look at scipis_jobs'
SELECT job FROM scipis_index('loghub', wait => false) \gset
SELECT scipis_wait_job(:job, timeout => '5 minutes') AS state;
SELECT id, target, state, files_done, files_total, bytes_done, bytes_total, attempts, error
FROM scipis_jobs ORDER BY id;

\echo '== top 5 files for "error" (TF-IDF)'
SELECT regexp_replace(path, '.*/', '') AS file, round(score::numeric, 4) AS score, size
FROM scipis_search('error', k => 5);

\echo '== BM25, every file that has all of "failed password"'
SELECT regexp_replace(path, '.*/', '') AS file, round(score::numeric, 4) AS score
FROM scipis_search('failed password', k => NULL, ranking => 'bm25', match => 'all');

\echo '== results are rows: join them with your own catalog'
CREATE TABLE system_catalog (file text PRIMARY KEY, system text, team text);
INSERT INTO system_catalog VALUES
  ('HDFS_2k.log', 'Hadoop HDFS', 'storage'), ('OpenSSH_2k.log', 'sshd', 'security'),
  ('Apache_2k.log', 'httpd', 'web'), ('Linux_2k.log', 'kernel', 'ops'),
  ('BGL_2k.log', 'Blue Gene/L', 'hpc'), ('HPC_2k.log', 'cluster', 'hpc');
SELECT c.team, c.system, round(s.score::numeric, 4) AS score
FROM scipis_search('error failure denied', k => NULL) s
JOIN system_catalog c ON c.file = regexp_replace(s.path, '.*/', '')
ORDER BY s.score DESC;

\echo '== exact path lookup through the file-path index'
SELECT collection, regexp_replace(path, '.*/', '') AS file, size, tokens
FROM scipis_lookup(:'sample' || '/HDFS_2k.log');

\echo '== paths by pattern (as locate takes them: a substring, or a glob on the whole path)'
SELECT regexp_replace(path, '.*/', '') AS file, size,
       format('%s%s%s', mode >> 6 & 7, mode >> 3 & 7, mode & 7) AS perms
FROM scipis_locate('*/[A-H]*_2k.log', 'loghub') ORDER BY path;

\echo '== metadata conditions, answered from per-block statistics of the catalog'
SELECT regexp_replace(path, '.*/', '') AS file, size
FROM scipis_files WHERE size > 300000 AND collection = 'loghub' ORDER BY size DESC;
EXPLAIN (COSTS OFF) SELECT path FROM scipis_files WHERE size > 300000 AND collection = 'loghub';
SELECT collection, heap_bytes, mapped_bytes FROM scipis_backend_memory();

\echo '== the collection'
SELECT name, files, bytes, index_bytes FROM scipis_collections;
