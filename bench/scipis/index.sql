-- Builds the collection, timed; records scipis_index()'s own row too
-- (merged.sql then waits for the merge job the build queued).
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
END
$$;
