-- scipis_refresh: new, changed and deleted files read alone, given paths,
-- bad input, queued refreshes and scipis_wait_fresh. Files are written by
-- the server's own user through COPY TO PROGRAM; each batch of writes ends
-- with a pause of 0.2 s, so that no file counts as racy (written within
-- 0.1 s of the run that read it, and so read again by the next one).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
CREATE FUNCTION pg_temp.sh(cmd text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', cmd || '; cat >/dev/null');
END $$;
SELECT '/tmp/scipis-regress-refresh' AS root \gset
SELECT pg_temp.sh(format('rm -rf %1$s && mkdir -p %1$s/sub && printf "alpha beta\n" > %1$s/a.log'
  ' && printf "beta gamma\n" > %1$s/b.log && printf "gamma delta\n" > %1$s/sub/c.txt && sleep 0.2', :'root'));
SELECT scipis_create_collection('fresh', :'root');
SELECT files, tokens FROM scipis_index('fresh');

-- Nothing changed: nothing read, nothing new.
SELECT files_added, files_changed, files_deleted, bytes_read, files, deleted_docs, job > 0 AS job
FROM scipis_refresh('fresh');

-- One new, one rewritten, one deleted: only the first two are read.
SELECT now() AS before_refresh \gset
SELECT pg_temp.sh(format('printf "delta epsilon\n" > %1$s/d.log && printf "alpha zeta zeta\n" > %1$s/a.log'
  ' && rm %1$s/b.log && sleep 0.2', :'root'));
SELECT files_added, files_changed, files_deleted, bytes_read, files, deleted_docs, segments > 0 AS segs
FROM scipis_refresh('fresh');
SELECT replace(path, :'root', '') AS file, round(score::numeric, 9) AS score
FROM scipis_search('alpha beta gamma delta zeta', 'fresh', k => NULL);
SELECT replace(path, :'root', '') AS file, size, tokens FROM scipis_files WHERE collection = 'fresh';
SELECT count(*) FROM scipis_lookup(:'root' || '/b.log');
SELECT files, segments > 0 AS segs, fresh_as_of >= :'before_refresh' AS fresh
FROM scipis_collections WHERE name = 'fresh';

-- The same answers as a collection built afresh over the tree as it is.
SELECT scipis_create_collection('rebuilt', :'root');
SELECT files FROM scipis_index('rebuilt');
SELECT q, count(*) AS differing FROM unnest(ARRAY['alpha', 'beta', 'gamma delta', 'zeta epsilon']) q,
LATERAL ((SELECT path, score FROM scipis_search(q, 'fresh', k => NULL, ranking => 'bm25')
          EXCEPT SELECT path, score FROM scipis_search(q, 'rebuilt', k => NULL, ranking => 'bm25'))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'rebuilt', k => NULL, ranking => 'bm25')
          EXCEPT SELECT path, score FROM scipis_search(q, 'fresh', k => NULL, ranking => 'bm25'))) d
GROUP BY q ORDER BY q;

-- Given paths: only they are looked at.
SELECT pg_temp.sh(format('printf "omega\n" > %1$s/sub/c.txt && printf "omega\n" > %1$s/sub/e.txt'
  ' && printf "omega\n" > %1$s/d.log && sleep 0.2', :'root'));
SELECT files_added, files_changed, files_deleted, bytes_read
FROM scipis_refresh('fresh', ARRAY[:'root' || '/sub/']);
SELECT replace(path, :'root', '') AS file FROM scipis_search('omega', 'fresh') ORDER BY 1;
-- Named paths run in this backend: no job, no row in scipis_jobs.
SELECT count(*) AS jobs_before FROM scipis_jobs WHERE target = 'fresh' \gset
SELECT files_added, files_changed, files_deleted, job IS NULL AS no_job
FROM scipis_refresh('fresh', ARRAY[:'root' || '/d.log']);
SELECT count(*) - :jobs_before AS new_jobs FROM scipis_jobs WHERE target = 'fresh';
SELECT replace(path, :'root', '') AS file FROM scipis_search('omega', 'fresh') ORDER BY 1;

-- Bad input.
SELECT * FROM scipis_refresh('nosuch');
SELECT * FROM scipis_refresh(NULL);
SELECT * FROM scipis_refresh('fresh', ARRAY['relative/path']);
SELECT * FROM scipis_refresh('fresh', ARRAY['/elsewhere']);
SELECT * FROM scipis_refresh('fresh', ARRAY[:'root' || '/../etc']);
SELECT * FROM scipis_refresh('fresh', ARRAY[]::text[]);
SELECT * FROM scipis_refresh('fresh', ARRAY[NULL]);
SELECT scipis_wait_fresh('fresh', timeout => interval '1 month');
SELECT scipis_wait_fresh('nosuch');

-- Queued, then waited for; a refresh shows in scipis_jobs.
SELECT pg_temp.sh(format('rm %1$s/sub/e.txt && sleep 0.2', :'root'));
SELECT job AS refresh_job, files_added IS NULL AS no_result FROM scipis_refresh('fresh', wait => false) \gset
SELECT :'no_result';
SELECT scipis_wait_job(:refresh_job);
SELECT kind, state, files_done FROM scipis_jobs WHERE id = :refresh_job;
SELECT count(*) FROM scipis_search('omega', 'fresh');

-- Fresh already, fresh after a refresh it runs, and a time not reached.
SELECT scipis_wait_fresh('fresh', now() - interval '1 hour');
SELECT scipis_wait_fresh('fresh');
SELECT fresh_as_of >= now() - interval '1 minute' AS fresh FROM scipis_collections WHERE name = 'fresh';
SELECT scipis_wait_fresh('fresh', now() + interval '1 hour', interval '0.2 s');

-- A log that only grew: just its appended bytes (and the 4 KiB before its
-- old end, checked) are read; "gam" + "ma" becomes one token, "gamma".
SELECT pg_temp.sh(format('seq 1 30000 | sed "s/^/line /" > %1$s/big.log && printf "omega gam" >> %1$s/big.log'
  ' && sleep 0.2', :'root'));
SELECT files_added, files_changed, files_appended FROM scipis_refresh('fresh');
SELECT pg_temp.sh(format('printf "ma zeta\nline 7\n" >> %1$s/big.log && sleep 0.2', :'root'));
SELECT files_added, files_changed, files_appended, files_deleted, bytes_read < 4096 + 64 AS read_little,
       files
FROM scipis_refresh('fresh');
SELECT replace(path, :'root', '') AS file, size, tokens FROM scipis_files
WHERE collection = 'fresh' AND path LIKE '%big%';
SELECT scipis_drop_collection('rebuilt');
SELECT scipis_create_collection('rebuilt', :'root');
SELECT files FROM scipis_index('rebuilt');
SELECT q, count(*) AS differing
FROM unnest(ARRAY['gam', 'gamma', 'zeta line', 'omega', '7', 'line 30000']) q,
LATERAL ((SELECT path, score FROM scipis_search(q, 'fresh', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'rebuilt', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'rebuilt', k => 3)
          EXCEPT SELECT path, score FROM scipis_search(q, 'fresh', k => 3))) d
GROUP BY q ORDER BY q;
SELECT replace(path, :'root', '') AS file, size, tokens FROM scipis_files
WHERE collection = 'rebuilt' AND path LIKE '%big%';
SELECT replace(path, :'root', '') AS file FROM scipis_search('gamma', 'fresh', k => 2);
SELECT replace(path, :'root', '') AS file FROM scipis_search('gamma', 'rebuilt', k => 2);

-- Compaction: refresh jobs merge small segments on their own (and drop
-- tombstones once they are half of what a merge would cover);
-- scipis_compact merges every indexer: tombstones dropped, the appended
-- log's linked documents folded into one, the same answers.
-- (What is left to merge depends on which indexer read which file.)
SELECT deleted_docs, seconds >= 0 AS timed FROM scipis_compact('fresh');
SELECT files, deleted_docs FROM scipis_collections WHERE name = 'fresh';
SELECT q, count(*) AS differing
FROM unnest(ARRAY['gam', 'gamma', 'zeta line', 'omega', '7', 'line 30000', 'alpha zeta']) q,
LATERAL ((SELECT path, score FROM scipis_search(q, 'fresh', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'rebuilt', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'rebuilt', k => 3)
          EXCEPT SELECT path, score FROM scipis_search(q, 'fresh', k => 3))) d
GROUP BY q ORDER BY q;
SELECT replace(path, :'root', '') AS file, size, tokens FROM scipis_files
WHERE collection = 'fresh' ORDER BY 1;
SELECT segments_merged, docs_dropped FROM scipis_compact('fresh');
SELECT * FROM scipis_compact('nosuch');
SELECT * FROM scipis_compact(NULL);

-- skip_unchanged_dirs: a whole-tree refresh lists only directories whose
-- mtime (or inode, ctime) changed since the last walk, and stats only the
-- files in those. A file rewritten in place changes no directory: unseen
-- until its directory changes or its path is refreshed.
SELECT '/tmp/scipis-regress-skip' AS sroot \gset
SELECT pg_temp.sh(format('rm -rf %1$s && mkdir -p %1$s/a %1$s/b && printf "one\n" > %1$s/a/x.log'
  ' && printf "two\n" > %1$s/b/y.log && sleep 0.2', :'sroot'));
SELECT scipis_create_collection('skipping', :'sroot', '{"skip_unchanged_dirs": true}');
SELECT files FROM scipis_index('skipping');
SELECT pg_temp.sh(format('printf "three\n" > %1$s/a/x.log && sleep 0.2', :'sroot'));
SELECT files_added, files_changed, files_deleted FROM scipis_refresh('skipping');
SELECT count(*) AS three FROM scipis_search('three', 'skipping');
SELECT pg_temp.sh(format('printf "four\n" > %1$s/a/z.log && rm %1$s/b/y.log && sleep 0.2', :'sroot'));
SELECT files_added, files_changed, files_deleted FROM scipis_refresh('skipping');
SELECT replace(path, :'sroot', '') AS file FROM scipis_search('three four two', 'skipping') ORDER BY 1;
SELECT pg_temp.sh(format('printf "five\n" > %1$s/a/z.log && sleep 0.2', :'sroot'));
SELECT files_added, files_changed FROM scipis_refresh('skipping', ARRAY[:'sroot' || '/a/z.log']);
SELECT replace(path, :'sroot', '') AS file FROM scipis_search('five', 'skipping');
SELECT scipis_create_collection('badskip', :'sroot', '{"skip_unchanged_dirs": "yes"}');
SELECT scipis_drop_collection('skipping');
SELECT pg_temp.sh(format('rm -rf %1$s', :'sroot'));

-- synchronous_commit = off: a waited refresh of named paths may leave its
-- journal record unsynced (a crash of the machine could take it back, the
-- next refresh would read the change again); its answers are the same.
SELECT '/tmp/scipis-regress-async' AS aroot \gset
SELECT pg_temp.sh(format('rm -rf %1$s && mkdir -p %1$s && seq 1 4000 | sed "s/^/line alpha /" > %1$s/a.log'
  ' && printf "beta gamma\n" > %1$s/b.log && sleep 0.2', :'aroot'));
SELECT scipis_create_collection('async', :'aroot');
SELECT files FROM scipis_index('async');
SET synchronous_commit = off;
SELECT pg_temp.sh(format('printf "delta one\n" >> %1$s/a.log && sleep 0.2', :'aroot'));
SELECT files_appended, files_changed FROM scipis_refresh('async', ARRAY[:'aroot' || '/a.log']);
SELECT pg_temp.sh(format('printf "delta two beta\n" >> %1$s/a.log && sleep 0.2', :'aroot'));
SELECT files_appended, files_changed FROM scipis_refresh('async', ARRAY[:'aroot' || '/a.log']);
RESET synchronous_commit;
SELECT scipis_create_collection('async_rebuilt', :'aroot');
SELECT files FROM scipis_index('async_rebuilt');
SELECT q, count(*) AS differing
FROM unnest(ARRAY['delta', 'beta', 'alpha two', 'line 4000']) q,
LATERAL ((SELECT path, score FROM scipis_search(q, 'async', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'async_rebuilt', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'async_rebuilt', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'async', k => NULL))) d
GROUP BY q ORDER BY q;
SELECT replace(path, :'aroot', '') AS file FROM scipis_search('delta', 'async') ORDER BY 1;
SELECT scipis_drop_collection('async');
SELECT scipis_drop_collection('async_rebuilt');
SELECT pg_temp.sh(format('rm -rf %1$s', :'aroot'));

SELECT scipis_drop_collection('fresh');
SELECT scipis_drop_collection('rebuilt');
SELECT pg_temp.sh(format('rm -rf %1$s', :'root'));
