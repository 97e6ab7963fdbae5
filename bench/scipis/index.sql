-- Builds the collection, timed; records scipis_index()'s own row too.
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
INSERT INTO bench.build
SELECT 'scipis', 'sizes run ' || current_setting('bench.run'), 0, to_jsonb(c)
FROM scipis_collections c WHERE name = 'bench';
SELECT step, round(seconds::numeric, 2) AS seconds, detail FROM bench.build WHERE system = 'scipis' ORDER BY step;
