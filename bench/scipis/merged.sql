-- After index.sql, outside its timing: waits for the merge job the build
-- queued (README "Compaction": it merges the build's segments beside
-- searches) and records it, then the collection's sizes: the queries that
-- follow run on what users query by default.
--   psql -v run=N -f merged.sql
\set ON_ERROR_STOP on
SET bench.run = :'run';
SELECT count(scipis_wait_job(id)) AS merge_jobs_waited FROM scipis_jobs
WHERE target = 'bench' AND kind = 'merge' AND state IN ('queued', 'running');
INSERT INTO bench.build
SELECT 'scipis', 'merge job run ' || current_setting('bench.run'),
	extract(epoch FROM finished - started), result
FROM scipis_job WHERE target = 'bench' AND kind = 'merge'
	AND id > (SELECT max(id) FROM scipis_job WHERE target = 'bench' AND kind = 'index');
INSERT INTO bench.build
SELECT 'scipis', 'sizes run ' || current_setting('bench.run'), 0, to_jsonb(c)
FROM scipis_collections c WHERE name = 'bench';
SELECT step, round(seconds::numeric, 2) AS seconds, detail FROM bench.build WHERE system = 'scipis' ORDER BY step;
