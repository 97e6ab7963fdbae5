-- After the loaders: the GIN index and planner statistics, timed.
\set ON_ERROR_STOP on
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	CREATE INDEX docs_tsv_gin ON pgfts.docs USING gin (tsv);
	INSERT INTO bench.build VALUES ((SELECT label FROM pgfts.config), 'create index', extract(epoch FROM clock_timestamp() - t0), NULL);
END
$$;
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	ANALYZE pgfts.docs;
	INSERT INTO bench.build VALUES ((SELECT label FROM pgfts.config), 'analyze', extract(epoch FROM clock_timestamp() - t0), NULL);
END
$$;
-- Sizes: table (heap + TOAST, where large tsvectors live) and the GIN index.
INSERT INTO bench.build
SELECT (SELECT label FROM pgfts.config), 'sizes', 0, jsonb_build_object(
	'rows', (SELECT count(*) FROM pgfts.docs),
	'files', (SELECT count(DISTINCT path) FROM pgfts.docs),
	'split_files', (SELECT count(*) FROM (SELECT path FROM pgfts.docs GROUP BY path HAVING count(*) > 1) s),
	'table_bytes', pg_table_size('pgfts.docs'),
	'gin_bytes', pg_relation_size('pgfts.docs_tsv_gin'),
	'total_bytes', pg_total_relation_size('pgfts.docs'),
	'tokens', (SELECT tokens FROM pgfts.config),
	'unit', (SELECT unit FROM pgfts.config));
SELECT step, round(seconds::numeric, 2) AS seconds, detail FROM bench.build WHERE system = (SELECT label FROM pgfts.config) ORDER BY step;
