-- PostgreSQL built-in full-text search, the way a PostgreSQL user would index
-- a log tree: one row per file with to_tsvector('simple', content) stored,
-- a GIN index on it, queries ranked by ts_rank, LIMIT 10.
--
--   psql -v tokens=simple|aligned -v unit=1000000 -v label=pgfts \
--        -f setup.sql < filelist
--
-- filelist (stdin): one absolute path per line (the server reads the files itself
--   with pg_read_binary_file, so it needs superuser and read access).
-- tokens: simple  = to_tsvector('simple', content), exactly;
--         aligned = the text first normalised so that PostgreSQL's parser
--                   yields exactly scipis's tokens (see README): every ASCII
--                   byte that is not [A-Za-z0-9_] becomes a space and '_'
--                   becomes 'ǂ' (which the parser keeps inside words).
-- unit: a tsvector holds at most 1 MiB of lexeme text, so a file larger
--   than unit bytes is stored as several rows (parts), cut at line ends.
--   With unit <= 1000000 no raw part can overflow; a part that still does
--   (aligned mode: 'ǂ' is 2 bytes) is cut again in halves.
\set ON_ERROR_STOP on
DROP SCHEMA IF EXISTS pgfts CASCADE;
CREATE SCHEMA pgfts;

CREATE TABLE pgfts.files (
	id		int PRIMARY KEY,
	path	text NOT NULL,
	size	bigint
);
CREATE TABLE pgfts.docs (
	path	text NOT NULL,
	part	int NOT NULL,		-- 1.. within the file
	tsv		tsvector NOT NULL
);
-- label: the system's name in bench.* (pgfts, or pgfts-aligned)
CREATE TABLE pgfts.config (tokens text NOT NULL, unit int NOT NULL, label text NOT NULL);
INSERT INTO pgfts.config VALUES (:'tokens', :unit, :'label');

CREATE TEMP TABLE filelist (path text);
\copy filelist FROM pstdin
INSERT INTO pgfts.files
SELECT row_number() OVER (ORDER BY path), path, (pg_stat_file(path)).size
FROM filelist;

-- OR of a set of tsqueries (empty ones dropped).
CREATE FUNCTION pgfts.tsquery_or_all(qs tsquery[]) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
	q tsquery;
	acc tsquery;
BEGIN
	FOREACH q IN ARRAY qs LOOP
		IF numnode(q) = 0 THEN CONTINUE; END IF;
		acc := CASE WHEN acc IS NULL THEN q ELSE acc || q END;
	END LOOP;
	RETURN coalesce(acc, ''::tsquery);
END
$$;
-- doc_tsv(text) and query_tsq(text) for the chosen token mode.
DO $do$
DECLARE
	mode text := (SELECT tokens FROM pgfts.config);
	norm text;
BEGIN
	IF mode = 'simple' THEN
		norm := '$1';
	ELSIF mode = 'aligned' THEN
		norm := $$replace(regexp_replace($1, '[^A-Za-z0-9_\u0080-\U0010FFFF]+', ' ', 'g'), '_', 'ǂ')$$;
	ELSE
		RAISE EXCEPTION 'tokens must be simple or aligned, not %', mode;
	END IF;
	EXECUTE format($f$
		CREATE FUNCTION pgfts.doc_tsv(text) RETURNS tsvector
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
		AS 'SELECT to_tsvector(''simple'', %s)'$f$, replace(norm, '''', ''''''));
	-- The query: each term through the same parser and normalisation, OR-ed
	-- (scipis's match 'any').
	EXECUTE format($f$
		CREATE FUNCTION pgfts.query_tsq(text) RETURNS tsquery
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
		AS 'SELECT pgfts.tsquery_or_all(array_agg(plainto_tsquery(''simple'', %s)))
			FROM regexp_split_to_table($1, '' +'') AS t'$f$,
		replace(replace(norm, '$1', 't'), '''', ''''''));
END
$do$;

-- The tsvectors of one file: one per part of at most `unit` bytes, cut just
-- after a newline (found in the last 16 KiB before the limit).
CREATE FUNCTION pgfts.parts(b bytea, unit int) RETURNS SETOF tsvector
LANGUAGE plpgsql AS $$
DECLARE
	len int := octet_length(b);
	pos int := 1;
	cut int;
	ws int;
	nl int;
BEGIN
	WHILE pos <= len LOOP
		IF len - pos + 1 <= unit THEN
			cut := len;
		ELSE
			ws := pos + unit - least(16384, unit / 2);
			nl := position('\x0a'::bytea IN substr(b, ws, pos + unit - ws));
			cut := CASE WHEN nl > 0 THEN ws + nl - 1 ELSE pos + unit - 1 END;
		END IF;
		RETURN QUERY SELECT * FROM pgfts.part_tsv(substr(b, pos, cut - pos + 1), unit);
		pos := cut + 1;
	END LOOP;
END
$$;

CREATE FUNCTION pgfts.part_tsv(piece bytea, unit int) RETURNS SETOF tsvector
LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		RETURN NEXT pgfts.doc_tsv(convert_from(piece, 'UTF8'));
		RETURN;
	EXCEPTION WHEN program_limit_exceeded THEN
		IF octet_length(piece) < 8192 THEN
			RAISE WARNING 'pgfts: a % byte piece does not fit in a tsvector; skipped', octet_length(piece);
			RETURN;
		END IF;
	END;
	RETURN QUERY SELECT * FROM pgfts.parts(piece, octet_length(piece) / 2);
END
$$;

-- One loader; run.sh starts as many as there are indexing threads, each in
-- its own session. Files are claimed biggest first through row locks
-- (SKIP LOCKED), so the loaders finish together.
CREATE FUNCTION pgfts.load(worker int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	f record;
	n bigint := 0;
	nbytes bigint := 0;
	t0 timestamptz := clock_timestamp();
	u int := (SELECT unit FROM pgfts.config);
BEGIN
	LOOP
		SELECT id, path, size INTO f FROM pgfts.files
		ORDER BY size DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED;
		EXIT WHEN NOT FOUND;
		-- locked rows stay locked until this transaction ends; mark ours done
		-- for ourselves by deleting them (the others skip them as locked)
		DELETE FROM pgfts.files WHERE id = f.id;
		INSERT INTO pgfts.docs (path, part, tsv)
		SELECT f.path, p.ord, p.tsv
		FROM pgfts.parts(pg_read_binary_file(f.path), u) WITH ORDINALITY AS p(tsv, ord);
		n := n + 1;
		nbytes := nbytes + f.size;
	END LOOP;
	INSERT INTO bench.build VALUES ((SELECT label FROM pgfts.config), 'load worker ' || worker,
		extract(epoch FROM clock_timestamp() - t0),
		jsonb_build_object('files', n, 'bytes', nbytes));
	RETURN n;
END
$$;

-- pass 0 = warm-up, passes 1.. = measured (pass 1 also records the top-k rows).
CREATE FUNCTION pgfts.run_queries(pass int, k int DEFAULT 10) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	t0 timestamptz;
	us float8;
	q tsquery;
	paths text[];
	scores float8[];
	label text := (SELECT c.label FROM pgfts.config c);
BEGIN
	-- plan every query for its own tsquery (as a client's query would be)
	PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
	-- and through the GIN index: the planner does not cost the detoasting of
	-- large tsvectors, so on a table of a few thousand rows it picks a
	-- sequential scan that reads every tsvector (about 2x slower overall)
	PERFORM set_config('enable_seqscan', 'off', true);
	FOR r IN SELECT * FROM bench.queries ORDER BY id LOOP
		t0 := clock_timestamp();
		q := pgfts.query_tsq(r.q);
		SELECT array_agg(d.path), array_agg(d.score) INTO paths, scores
		FROM (SELECT path, ts_rank(tsv, q) AS score
			  FROM pgfts.docs WHERE tsv @@ q
			  ORDER BY score DESC LIMIT k) d;
		us := extract(epoch FROM clock_timestamp() - t0) * 1e6;
		INSERT INTO bench.lat VALUES (label, pass, r.id, r.kind, us, coalesce(cardinality(paths), 0));
		IF pass = 1 AND paths IS NOT NULL THEN
			INSERT INTO bench.topk
			SELECT label, r.id, i, paths[i], scores[i] FROM generate_subscripts(paths, 1) AS i;
		END IF;
	END LOOP;
END
$$;
