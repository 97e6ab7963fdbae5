-- Builds the collection, timed; records scipis_index()'s own row too, then
-- waits for the merge job the build queued (README "Compaction": it merges
-- the build's segments beside searches) and records it: the queries that
-- follow run on what users query by default.
--   psql -v run=N -f index.sql
\set ON_ERROR_STOP on
SET bench.run = :'run';
DO $$
DECLARE
	t0 timestamptz := clock_timestamp();
	r record;
BEGIN
	SELECT * INTO r FROM scipis_index('bench');
	INSERT INTO bench.build VALUES ('scipis', 'scipis_index() run ' || current_setting('bench.run'),
		extract(epoch FROM clock_timestamp() - t0), to_jsonb(r));
	PERFORM scipis_wait_job(id) FROM scipis_jobs
	WHERE target = 'bench' AND kind = 'merge' AND state IN ('queued', 'running');
	INSERT INTO bench.build
	SELECT 'scipis', 'merge job run ' || current_setting('bench.run'),
		extract(epoch FROM finished - started), result
	FROM scipis_job WHERE target = 'bench' AND kind = 'merge' AND submitted >= t0;
END
$$;
INSERT INTO bench.build
SELECT 'scipis', 'sizes run ' || current_setting('bench.run'), 0, to_jsonb(c)
FROM scipis_collections c WHERE name = 'bench';
SELECT step, round(seconds::numeric, 2) AS seconds, detail FROM bench.build WHERE system = 'scipis' ORDER BY step;
