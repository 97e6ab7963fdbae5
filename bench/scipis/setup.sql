-- scipis: one collection over the corpus, built with scipis_index().
--   psql -v corpus=DIR -v threads=N -f setup.sql
\set ON_ERROR_STOP on
CREATE EXTENSION IF NOT EXISTS scipis;
DROP SCHEMA IF EXISTS scipisb CASCADE;
CREATE SCHEMA scipisb;

-- pass 0 = warm-up, passes 1.. = measured (pass 1 also records the top-k rows).
-- Each query is timed inside the server: clock_timestamp() around one
-- scipis_search() call that returns the top-k rows (tf-idf, match any).
CREATE FUNCTION scipisb.run_queries(pass int, k int DEFAULT 10) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	t0 timestamptz;
	us float8;
	paths text[];
	scores float8[];
BEGIN
	FOR r IN SELECT * FROM bench.queries ORDER BY id LOOP
		t0 := clock_timestamp();
		SELECT array_agg(s.path), array_agg(s.score) INTO paths, scores
		FROM scipis_search(r.q, 'bench', k, 'tfidf', 'any') AS s;
		us := extract(epoch FROM clock_timestamp() - t0) * 1e6;
		INSERT INTO bench.lat VALUES ('scipis', pass, r.id, r.kind, us, coalesce(cardinality(paths), 0));
		IF pass = 1 AND paths IS NOT NULL THEN
			INSERT INTO bench.topk
			SELECT 'scipis', r.id, i, paths[i], scores[i] FROM generate_subscripts(paths, 1) AS i;
		END IF;
	END LOOP;
END
$$;

SELECT scipis_create_collection('bench', :'corpus',
	jsonb_build_object('indexer_threads', :threads));
