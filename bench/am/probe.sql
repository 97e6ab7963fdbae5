-- Exploratory latency loops over bench/am's queries on a server that
-- already holds `lines` (10 M rows, bench/am/prepare.py) with a scipis
-- index on `line` (and `lines_ts` for the filtered kinds). Not a peer
-- comparison: A/B probes of scipis builds (bench/am/probe_ab.sh swaps
-- scipis.so between calls). Load with
--   psql -v queries=/var/tmp/scipis-am/queries-lines-...tsv -f bench/am/probe.sql
-- then: SELECT * FROM probe('t1', 'cached', 6);  -- p50 and mean over queries
--       SELECT * FROM probe_mix(3);               -- all kinds, the bench's order
-- A query's latency is the median of its passes; times are clock_timestamp()
-- around the statement, in the server (as bench/am's am_time()).
DROP TABLE IF EXISTS q;
CREATE TABLE q (qid text, kind text, terms text, ts_lo text, ts_hi text, lo_id text, hi_id text, df text);
COPY q FROM :'queries' WITH (FORMAT text, HEADER true);

-- One-off: the statement's text parsed and planned each time.
CREATE OR REPLACE FUNCTION t_oneoff(qt text) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz; ids bigint[]; sc float8[];
BEGIN
  t0 := clock_timestamp();
  EXECUTE format('SELECT array_agg(id), array_agg(-d) FROM (SELECT id, line <@> %L::scipisquery AS d FROM lines WHERE line @@@ %L::scipisquery ORDER BY d LIMIT 10) x', qt, qt) INTO ids, sc;
  RETURN 1e6 * extract(epoch FROM clock_timestamp() - t0);
END $f$;

-- Plan cached as a prepared statement's (static SQL in PL/pgSQL).
CREATE OR REPLACE FUNCTION t_cached(q text) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz; qq scipisquery; ids bigint[]; sc float8[];
BEGIN
  t0 := clock_timestamp();
  qq := q::scipisquery;
  SELECT array_agg(x.id), array_agg(-x.d) INTO ids, sc
    FROM (SELECT r.id, r.line <@> qq AS d FROM lines r WHERE r.line @@@ qq ORDER BY d LIMIT 10) x;
  RETURN 1e6 * extract(epoch FROM clock_timestamp() - t0);
END $f$;

-- The same with the generic plan forced (the setting holds inside t_cached,
-- whose cached plan is chosen again at each execution).
CREATE OR REPLACE FUNCTION t_generic(q text) RETURNS float8 LANGUAGE sql
SET plan_cache_mode = force_generic_plan AS $f$ SELECT t_cached(q) $f$;

-- Plan cached, with the timestamp window of the filtered kinds.
CREATE OR REPLACE FUNCTION t_cached_f(q text, lo timestamptz, hi timestamptz) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz; qq scipisquery; ids bigint[]; sc float8[];
BEGIN
  t0 := clock_timestamp();
  qq := q::scipisquery;
  SELECT array_agg(x.id), array_agg(-x.d) INTO ids, sc
    FROM (SELECT r.id, r.line <@> qq AS d FROM lines r WHERE r.line @@@ qq AND r.ts >= lo AND r.ts < hi ORDER BY d LIMIT 10) x;
  RETURN 1e6 * extract(epoch FROM clock_timestamp() - t0);
END $f$;

-- The queries of one kind, `passes` times in a row (mode: oneoff, cached, generic).
CREATE OR REPLACE FUNCTION probe(k text, mode text, passes int) RETURNS TABLE(p50 float8, mean float8) LANGUAGE plpgsql AS $f$
DECLARE r record; i int;
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS tm(qid text, us float8); TRUNCATE tm;
  FOR i IN 1..passes LOOP
    FOR r IN SELECT qid, terms FROM q WHERE kind = k ORDER BY qid LOOP
      IF mode = 'oneoff' THEN INSERT INTO tm VALUES (r.qid, t_oneoff(r.terms));
      ELSIF mode = 'cached' THEN INSERT INTO tm VALUES (r.qid, t_cached(r.terms));
      ELSE INSERT INTO tm VALUES (r.qid, t_generic(r.terms)); END IF;
    END LOOP;
  END LOOP;
  RETURN QUERY SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY m), avg(m)
    FROM (SELECT qid, percentile_disc(0.5) WITHIN GROUP (ORDER BY us) m FROM tm GROUP BY qid) s;
END $f$;

-- All 400 queries in the bench's order (each kind after the other), a
-- warm-up pass and `passes` measured ones, plan cached; per kind.
CREATE OR REPLACE FUNCTION probe_mix(passes int) RETURNS TABLE(kind text, p50 float8, mean float8) LANGUAGE plpgsql AS $f$
DECLARE r record; i int; us float8;
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS tmx(qid text, kind text, us float8); TRUNCATE tmx;
  FOR i IN 0..passes LOOP
    FOR r IN SELECT * FROM q ORDER BY qid LOOP
      IF r.ts_lo IS NULL OR r.ts_lo = '' THEN us := t_cached(r.terms);
      ELSE us := t_cached_f(r.terms, to_timestamp(r.ts_lo::bigint), to_timestamp(r.ts_hi::bigint)); END IF;
      IF i > 0 THEN INSERT INTO tmx VALUES (r.qid, r.kind, us); END IF;
    END LOOP;
  END LOOP;
  RETURN QUERY SELECT s.kind, percentile_disc(0.5) WITHIN GROUP (ORDER BY m), avg(m)
    FROM (SELECT t.qid, t.kind, percentile_disc(0.5) WITHIN GROUP (ORDER BY t.us) m FROM tmx t GROUP BY t.qid, t.kind) s
    GROUP BY s.kind ORDER BY 1;
END $f$;
