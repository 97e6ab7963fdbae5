-- Filter columns: `USING scipis (body, ts, ...)` decides conditions on the
-- columns after the text inside the index. Every answer is checked against
-- the sequential-scan path (index and bitmap scans off, the index named),
-- which evaluates the conditions in the executor.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
SET extra_float_digits = 0;

CREATE TABLE amf (id int PRIMARY KEY, ts timestamptz, n int8, f float8, r real, d date,
                  s int2, body text) WITH (autovacuum_enabled = off);
INSERT INTO amf
SELECT i,
       CASE WHEN i % 101 = 0 THEN NULL ELSE '2026-01-01 00:00:00+00'::timestamptz + i * interval '37 seconds' END,
       CASE i % 7 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 ELSE (i * 7919) % 2001 - 1000 END,
       CASE i % 29 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity' WHEN 3 THEN -0.0
                   WHEN 4 THEN NULL ELSE ((i * 31) % 400) / 8.0 - 25 END,
       ((i * 13) % 100) / 4.0 - 12.5,
       '2026-03-01'::date + (i % 90),
       (i % 300 - 150)::int2,
       'w' || (i % 7) || ' x' || (i % 11) || repeat(' common', 1 + i % 3) ||
         CASE WHEN i % 5 = 0 THEN ' rare' || (i % 13) ELSE '' END
FROM generate_series(1, 6000) i;
CREATE INDEX amf_idx ON amf USING scipis (body, ts, n, f, r, d, s);
ANALYZE amf;

-- The index's top k and the sequential path's agree: scores in order, and
-- the rows scoring above the k-th (a tie at the k-th may pick others).
CREATE FUNCTION amf_check(q text, cond text, k int) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  sql text := 'SELECT array_agg(round(sc::numeric, 9) ORDER BY sc DESC, id), array_agg(id ORDER BY id) FILTER (WHERE sc > (SELECT min(sc) FROM r)) FROM r';
  ia numeric[]; ib int[]; sa numeric[]; sb int[];
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  EXECUTE format('WITH r AS (SELECT id, -(body <@> %L::scipisquery) sc FROM amf WHERE body @@@ %L::scipisquery AND %s ORDER BY body <@> %L::scipisquery LIMIT %s) ',
                 q, q, cond, q, coalesce(k::text, 'ALL')) || sql INTO ia, ib;
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE format('WITH r AS (SELECT id, -(body <@> scipis_query(%L, index => %L)) sc FROM amf WHERE body @@@ scipis_query(%L, index => %L) AND %s ORDER BY 2 DESC LIMIT %s) ',
                 q, 'amf_idx', q, 'amf_idx', cond, coalesce(k::text, 'ALL')) || sql INTO sa, sb;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  RETURN CASE WHEN ia IS NOT DISTINCT FROM sa AND ib IS NOT DISTINCT FROM sb
              THEN 'same, ' || coalesce(cardinality(ia), 0) || ' rows'
              ELSE format('DIFFERENT: index %s %s, sequential %s %s', ia, ib, sa, sb) END;
END $f$;

-- Row sets of plain and bitmap scans (conditions on filter columns only
-- included) against the sequential path.
CREATE FUNCTION amf_set(q text, cond text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE a int[]; b int[]; c int[];
  w text := CASE WHEN q IS NULL THEN cond ELSE format('body @@@ %L::scipisquery AND %s', q, cond) END;
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE 'SELECT array_agg(id ORDER BY id) FROM amf WHERE ' || w INTO a;
  PERFORM set_config('enable_bitmapscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  EXECUTE 'SELECT array_agg(id ORDER BY id) FROM amf WHERE ' || w INTO b;
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  EXECUTE 'SELECT array_agg(id ORDER BY id) FROM amf WHERE ' ||
          CASE WHEN q IS NULL THEN cond
               ELSE format('body @@@ scipis_query(%L, index => %L) AND %s', q, 'amf_idx', cond) END INTO c;
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  RETURN CASE WHEN a IS NOT DISTINCT FROM c AND b IS NOT DISTINCT FROM c
              THEN 'same, ' || coalesce(cardinality(c), 0) || ' rows'
              ELSE format('DIFFERENT: index %s, bitmap %s, sequential %s', a, b, c) END;
END $f$;

-- The conditions go into the index scan, not into a filter above it.
EXPLAIN (COSTS OFF) SELECT id FROM amf
  WHERE body @@@ 'rare3' AND ts >= '2026-01-01 12:00+00' AND ts < '2026-01-02 00:00+00'
  ORDER BY body <@> 'rare3' LIMIT 10;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM amf WHERE n < 0 AND d = '2026-03-05';
RESET enable_seqscan;
-- A condition the index cannot decide stays a filter.
EXPLAIN (COSTS OFF) SELECT id FROM amf WHERE body @@@ 'rare3' AND f IS NULL
  ORDER BY body <@> 'rare3' LIMIT 10;

SELECT q, cond, k, amf_check(q, cond, k) FROM (VALUES
  ('common', 'ts >= ''2026-01-01 12:00+00'' AND ts < ''2026-01-02 00:00+00''', 10),
  ('common', 'ts >= ''2026-01-01 12:00+00'' AND ts < ''2026-01-02 00:00+00''', NULL),
  ('w3 x5', 'ts > ''2026-01-02 10:00+00''', 1),
  ('w3 x5', 'ts <= ''2026-01-01 01:00+00''', 10),
  ('rare7', 'n = 9223372036854775807', NULL),
  ('rare7 w1', 'n = -9223372036854775808', 10),
  ('common', 'n < -9223372036854775808', 10),
  ('common', 'n > 9223372036854775807', 10),
  ('common', 'n BETWEEN -10 AND 10', 10),
  ('w2', 'n = 5::int2', NULL),
  ('w2', 'n < 1000::int4 AND n > -1000::int2', 10),
  ('common', 'f = ''NaN''', 10),
  ('common', 'f > ''Infinity''', NULL),
  ('common', 'f = ''Infinity''', 10),
  ('common', 'f < ''-Infinity''', 10),
  ('common', 'f <= ''-Infinity''', 10),
  ('common', 'f = 0', NULL),
  ('common', 'f = -0.0', 10),
  ('common', 'f >= -1.5 AND f < 2.25', 10),
  ('common', 'f < 1.5::float4', 10),
  ('x3', 'r = -12.5', NULL),
  ('x3', 'r > 0.1', 10),
  ('x3', 'r >= 0.1::float8 AND r < 3', NULL),
  ('rare2 rare4', 'd = ''2026-03-05''', NULL),
  ('rare2 rare4', 'd > ''2026-05-01'' AND s < 0', 10),
  ('common', 's >= 149 AND s <= 149', 10),
  ('common', 's = 70000', 10),
  ('common', 'ts >= ''2026-01-01 12:00+00'' AND n > 0 AND f > 0 AND r > 0 AND d < ''2026-04-01'' AND s > -100', 10),
  ('common', 'f IS NULL', 10),
  ('common', 'ts IS NULL', NULL),
  ('common', 'ts > NULL', 10)
) v(q, cond, k);

SELECT q, cond, amf_set(q, cond) FROM (VALUES
  ('rare3', 'ts < ''2026-01-01 08:00+00'''),
  ('w4', 'n > 0 AND f > 0'),
  (NULL, 'n < 0 AND d = ''2026-03-05'''),
  (NULL, 's = -150'),
  (NULL, 'f = ''NaN'' AND r < 0'),
  (NULL, 'ts >= ''2026-01-02 00:00+00'' AND ts < ''2026-01-02 00:10:00+00''')
) v(q, cond);

-- The ordered scan with a selective condition returns k rows when k pass.
SELECT count(*) FROM (SELECT id FROM amf WHERE body @@@ 'common'
  AND ts >= '2026-01-03 00:00+00' AND ts < '2026-01-03 00:20+00'
  ORDER BY body <@> 'common' LIMIT 10) x;

-- Rows written later go through the pending list with their values; then
-- merged by VACUUM. Answers agree before and after; the check is clean.
INSERT INTO amf
SELECT i, '2026-01-05 00:00:00+00'::timestamptz + (i - 6000) * interval '1 minute',
       i - 6000, CASE WHEN i % 3 = 0 THEN NULL ELSE i / 100.0 END, i % 17, '2026-06-01'::date, 7,
       'late w' || (i % 7) || ' common'
FROM generate_series(6001, 6300) i;
UPDATE amf SET ts = '2026-01-05 12:00:00+00', body = body || ' moved' WHERE id % 500 = 0;
DELETE FROM amf WHERE id % 450 = 7;
SELECT q, cond, amf_check(q, cond, 10) FROM (VALUES
  ('late', 'ts >= ''2026-01-05 02:00+00'''),
  ('moved common', 'ts = ''2026-01-05 12:00:00+00'''),
  ('common', 'n BETWEEN 1 AND 300 AND f IS NOT NULL'),
  ('w1', 'd = ''2026-06-01''')
) v(q, cond);
SELECT amf_set(NULL, 's = 7 AND f > 62'), amf_set('late', 's = 7 AND f > 62');
SELECT * FROM scipis_index_check('amf_idx');
VACUUM amf;
SELECT q, cond, amf_check(q, cond, 10) FROM (VALUES
  ('late', 'ts >= ''2026-01-05 02:00+00'''),
  ('moved common', 'ts = ''2026-01-05 12:00:00+00'''),
  ('common', 'n BETWEEN 1 AND 300 AND f IS NOT NULL')
) v(q, cond);
SELECT amf_set(NULL, 's = 7 AND f > 62'), amf_set('late', 's = 7 AND f > 62');
SELECT * FROM scipis_index_check('amf_idx');

-- Expressions, partial indexes and a varchar text column with filter columns.
CREATE TABLE amf2 (id int, t varchar, u text, at timestamp);
INSERT INTO amf2 SELECT i, 'v' || (i % 5), 'u' || (i % 3), '2026-01-01'::timestamp + i * interval '1 hour'
  FROM generate_series(1, 400) i;
CREATE INDEX amf2_idx ON amf2 USING scipis ((t || ' ' || u), at) WHERE id > 10;
SET enable_seqscan = off;
SELECT count(*) FROM amf2 WHERE (t || ' ' || u) @@@ 'v1 u2' AND at < '2026-01-05' AND id > 10;
RESET enable_seqscan;
SELECT count(*) FROM amf2 WHERE (t || ' ' || u) @@@ scipis_query('v1 u2', index => 'amf2_idx')
  AND at < '2026-01-05' AND id > 10;
SELECT * FROM scipis_index_check('amf2_idx');

-- Columns a scipis index cannot hold.
CREATE INDEX amf_bad ON amf USING scipis (ts, body);
CREATE INDEX amf_bad ON amf USING scipis (body, body);
CREATE INDEX amf_bad ON amf USING scipis (body, (n::numeric));
CREATE INDEX amf_bad ON amf USING scipis (body, ts) INCLUDE (n);

DROP TABLE amf, amf2;

-- Runs of 4096 rows: the index's readers summarise each filter column per
-- run, and a window over timestamps that follow the rows passes or skips
-- whole runs (NULL timestamps in some runs, windows inside one run, across
-- runs, on their edges and outside every row). The same checks on a table
-- of 30,000 rows, by the same functions.
CREATE TABLE amf (id int PRIMARY KEY, ts timestamptz, body text) WITH (autovacuum_enabled = off);
INSERT INTO amf
SELECT i,
       CASE WHEN i % 997 = 0 OR i BETWEEN 12000 AND 12100 THEN NULL
            ELSE '2026-01-01 00:00:00+00'::timestamptz + i * interval '1 second' END,
       'w' || (i % 7) || CASE WHEN i % 3 = 0 THEN ' common' ELSE '' END ||
         CASE WHEN i % 50 = 0 THEN ' rare' ELSE '' END
FROM generate_series(1, 30000) i;
CREATE INDEX amf_idx ON amf USING scipis (body, ts);
ANALYZE amf;
SELECT q, cond, k, amf_check(q, cond, k) FROM (VALUES
  ('rare', 'ts >= ''2026-01-01 01:23:20+00'' AND ts < ''2026-01-01 04:43:20+00''', 10),
  ('rare', 'ts >= ''2026-01-01 01:23:20+00'' AND ts < ''2026-01-01 04:43:20+00''', NULL),
  ('common', 'ts >= ''2026-01-01 01:23:20+00'' AND ts < ''2026-01-01 04:43:20+00''', 10),
  ('common w3', 'ts > ''2026-01-01 02:16:32+00'' AND ts <= ''2026-01-01 03:24:48+00''', 25),
  ('w1 rare', 'ts >= ''2026-01-01 03:10:00+00'' AND ts < ''2026-01-01 03:30:00+00''', NULL),
  ('common', 'ts = ''2026-01-01 01:08:16+00''', 1),
  ('common', 'ts = ''2026-01-01 01:08:15+00''', 1),
  ('w5', 'ts < ''2026-01-01 00:01:00+00''', NULL),
  ('w5', 'ts >= ''2026-01-01 08:20:00+00''', NULL),
  ('rare', 'ts > ''2026-01-02 00:00:00+00''', 10),
  ('common', 'ts >= ''2026-01-01 03:20:00+00'' AND ts < ''2026-01-01 03:22:00+00''', NULL)
) v(q, cond, k);
SELECT amf_set('common', 'ts >= ''2026-01-01 01:08:16+00'' AND ts < ''2026-01-01 02:16:32+00'''),
       amf_set(NULL, 'ts >= ''2026-01-01 03:19:00+00'' AND ts < ''2026-01-01 03:23:00+00''');
DROP TABLE amf;
DROP FUNCTION amf_check(text, text, int), amf_set(text, text);
