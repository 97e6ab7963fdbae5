-- The scipis index access method on a small table: plans, answers with
-- index scans and without, writes, VACUUM, MVCC and bad input. Scores are
-- checked against the brute-force oracle by test/am; here their shape.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
SET extra_float_digits = 0;

CREATE TABLE am_docs (id int PRIMARY KEY, kind text, body text);
INSERT INTO am_docs VALUES
  (1, 'log', 'ERROR disk full on /dev/sda1'),
  (2, 'log', 'error error network unreachable'),
  (3, 'log', 'all good'),
  (4, 'log', NULL),
  (5, 'log', ''),
  (6, 'note', 'disk warning: 91% used'),
  (7, 'note', 'Überlauf im Puffer: error'),
  (8, 'note', '---');
CREATE INDEX am_docs_body ON am_docs USING scipis (body);
CREATE INDEX am_docs_kind ON am_docs (kind);
ANALYZE am_docs;

SET enable_seqscan = off;
-- @@@ through an index scan, a bitmap scan, and a BitmapAnd with a B-tree.
EXPLAIN (COSTS OFF) SELECT id FROM am_docs WHERE body @@@ 'error';
SELECT id FROM am_docs WHERE body @@@ 'error' ORDER BY id;
SELECT id FROM am_docs WHERE body @@@ scipis_query('error disk', match => 'all') ORDER BY id;
SELECT id FROM am_docs WHERE body @@@ 'überlauf' ORDER BY id;  -- bytes >= 0x80 are kept: no match
SELECT id FROM am_docs WHERE body @@@ 'Überlauf' ORDER BY id;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM am_docs WHERE body @@@ 'error' AND kind = 'log';
SELECT id FROM am_docs WHERE body @@@ 'error' AND kind = 'log' ORDER BY id;
RESET enable_indexscan;

-- On a larger table two selective conditions meet in a BitmapAnd.
CREATE TABLE am_lines (id int, host text, line text);
INSERT INTO am_lines SELECT i, 'node' || (i % 50),
  CASE WHEN i % 40 = 0 THEN 'kernel panic on cpu ' || i ELSE 'heartbeat ok seq ' || i END
  FROM generate_series(1, 4000) i;
CREATE INDEX am_lines_line ON am_lines USING scipis (line);
CREATE INDEX am_lines_host ON am_lines (host);
ANALYZE am_lines;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM am_lines WHERE line @@@ 'panic' AND host = 'node10';
SELECT id FROM am_lines WHERE line @@@ 'panic' AND host = 'node10' ORDER BY id;
-- Either condition: a BitmapOr, the same rows as the words and the hosts
-- counted without any index.
EXPLAIN (COSTS OFF) SELECT id FROM am_lines WHERE line @@@ 'panic' OR host = 'node10';
SELECT count(*), sum(id) FROM am_lines WHERE line @@@ 'panic' OR host = 'node10';
EXPLAIN (COSTS OFF) SELECT id FROM am_lines WHERE line @@@ 'panic' OR line @@@ 'seq';
SELECT count(*), sum(id) FROM am_lines WHERE line @@@ 'panic' OR line @@@ 'seq';
RESET enable_indexscan;
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SELECT count(*), sum(id) FROM am_lines
  WHERE ' ' || line || ' ' LIKE '% panic %' OR host = 'node10';
SELECT count(*), sum(id) FROM am_lines
  WHERE ' ' || line || ' ' LIKE '% panic %' OR ' ' || line || ' ' LIKE '% seq %';
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE am_lines;

-- Ranked: ORDER BY <@> LIMIT is an index scan; the rows that do not match
-- follow with distance 0, NULL values last, as a sort would give them.
EXPLAIN (COSTS OFF) SELECT id FROM am_docs ORDER BY body <@> 'error disk' LIMIT 3;
SELECT id, round((-(body <@> 'error disk'))::numeric, 6) AS score
  FROM am_docs ORDER BY body <@> 'error disk' LIMIT 3;
SELECT id, body <@> 'error disk' AS d FROM am_docs ORDER BY body <@> 'error disk', id;
SELECT id, round((-(body <@> scipis_query('error disk', 'bm25')))::numeric, 6) AS score
  FROM am_docs ORDER BY body <@> scipis_query('error disk', 'bm25') LIMIT 3;
-- A filter that rejects most rows still gets k rows in score order.
SELECT id FROM am_docs WHERE kind = 'note' ORDER BY body <@> 'error disk' LIMIT 2;
-- The backend's page cache changes no answer: off, then back on.
SHOW scipis.index_cache_size;
SET scipis.index_cache_size = 0;
SELECT id, body <@> 'error disk' AS d FROM am_docs ORDER BY body <@> 'error disk', id LIMIT 4;
RESET scipis.index_cache_size;
SELECT id, body <@> 'error disk' AS d FROM am_docs ORDER BY body <@> 'error disk', id LIMIT 4;
SET scipis.index_cache_size = -1;

-- Without index scans, the operators give the same rows and scores when the
-- query names the index.
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM am_docs ORDER BY body <@> scipis_query('error disk', index => 'am_docs_body') LIMIT 3;
SELECT id, round((-(body <@> scipis_query('error disk', index => 'am_docs_body')))::numeric, 6) AS score
  FROM am_docs ORDER BY body <@> scipis_query('error disk', index => 'am_docs_body'), id LIMIT 3;
SELECT id FROM am_docs WHERE body @@@ 'error' ORDER BY id;
RESET enable_indexscan;
RESET enable_bitmapscan;
SET enable_seqscan = off;

-- Writes: a committed row is found by the next statement; a rolled-back
-- one never; VACUUM removes dead entries from the statistics.
INSERT INTO am_docs VALUES (9, 'log', 'disk disk disk');
SELECT id FROM am_docs ORDER BY body <@> 'disk' LIMIT 2;
BEGIN;
INSERT INTO am_docs VALUES (10, 'log', 'phantom row');
SELECT id FROM am_docs WHERE body @@@ 'phantom';
ROLLBACK;
SELECT id FROM am_docs WHERE body @@@ 'phantom';
UPDATE am_docs SET body = 'network restored' WHERE id = 2;
DELETE FROM am_docs WHERE id = 1;
SELECT id FROM am_docs WHERE body @@@ 'error network' ORDER BY id;
VACUUM am_docs;
SELECT id, round((-(body <@> 'disk'))::numeric, 6) AS score FROM am_docs ORDER BY body <@> 'disk' LIMIT 3;
COPY am_docs FROM stdin;
11	log	copy disk row
12	log	\N
\.
SELECT id FROM am_docs WHERE body @@@ 'copy' ORDER BY id;
TRUNCATE am_docs;
SELECT count(*) FROM am_docs WHERE body @@@ 'disk';
INSERT INTO am_docs VALUES (1, 'log', 'after truncate disk');
REINDEX INDEX am_docs_body;
SELECT id FROM am_docs WHERE body @@@ 'disk';
REINDEX INDEX CONCURRENTLY am_docs_body;
SELECT id FROM am_docs WHERE body @@@ 'truncate';
DROP INDEX am_docs_body;
CREATE INDEX CONCURRENTLY am_docs_body ON am_docs USING scipis (body);
INSERT INTO am_docs VALUES (2, 'log', 'concurrently built disk');
SELECT id FROM am_docs WHERE body @@@ 'disk' ORDER BY id;
SELECT * FROM scipis_index_check('am_docs_body');

-- scipis_index_check: nothing to report, until a row goes in while the index
-- is not maintained (a superuser's catalog edit, as an example of damage).
CREATE TABLE am_chk (id int, body text);
INSERT INTO am_chk SELECT i, 'w' || (i % 13) || CASE WHEN i % 9 = 0 THEN NULL ELSE ' y' END
  FROM generate_series(1, 300) i;
CREATE INDEX am_chk_body ON am_chk USING scipis (body) WITH (pending_limit = 64);
INSERT INTO am_chk SELECT i, 'late ' || i FROM generate_series(301, 400) i;
DELETE FROM am_chk WHERE id % 3 = 0;
SELECT * FROM scipis_index_check('am_chk_body');
VACUUM am_chk;
SELECT * FROM scipis_index_check('am_chk_body');
UPDATE pg_index SET indisready = false WHERE indexrelid = 'am_chk_body'::regclass;
INSERT INTO am_chk VALUES (1000, 'unindexed row');
UPDATE pg_index SET indisready = true WHERE indexrelid = 'am_chk_body'::regclass;
SELECT problem, detail FROM scipis_index_check('am_chk_body');
SELECT * FROM scipis_index_check('am_chk');
DROP TABLE am_chk;

-- Pending merges fold the newest segments back while each is larger than
-- the one before it: the many equal segments of a build stay, they are not
-- all rewritten behind the first one a merge reaches. One indexer, so that
-- the build's segments are the same every run (its writes merged a few at
-- a time, as much as its memory holds, into equal segments).
CREATE TABLE am_tiers (id int, body text);
INSERT INTO am_tiers SELECT i, 'w' || (i % 1000) || ' x' || (i * 7 % 5003) || ' common'
  FROM generate_series(1, 200000) i;
CREATE INDEX am_tiers_body ON am_tiers USING scipis (body)
  WITH (tfidf_index_size = 1, indexer_threads = 1, pending_limit = 64);
CREATE TEMP TABLE am_tiers_built AS SELECT segment FROM scipis_index_segments('am_tiers_body');
SELECT count(*) >= 4 AS several FROM am_tiers_built;
SELECT ordinal = 1 AS first, first_page = 1 AS at_page_1, pages > 0 AND bytes > 0 AS sized
  FROM scipis_index_segments('am_tiers_body') WHERE ordinal = 1;
INSERT INTO am_tiers SELECT i, 'w' || (i % 1000) || ' late' || (i % 77) || ' common'
  FROM generate_series(200001, 250000) i;
SELECT count(*) >= (SELECT count(*) FROM am_tiers_built) / 2 AS build_segments_stay
  FROM scipis_index_segments('am_tiers_body') JOIN am_tiers_built USING (segment);
SELECT count(*) <= (SELECT count(*) FROM am_tiers_built) + 12 AS few
  FROM scipis_index_segments('am_tiers_body');
SELECT count(*) FROM am_tiers WHERE body @@@ 'common';
SELECT count(*) FROM am_tiers WHERE body @@@ 'late5';
SELECT * FROM scipis_index_segments('am_tiers');
-- VACUUM rewrites the segments holding dead rows one at a time, each in its
-- place, into the pages the one before freed: the index grows by at most
-- its largest segment (and the page or two of the pending list's), it does
-- not double.
SELECT pg_relation_size('am_tiers_body') AS tiers_before_vacuum \gset
SELECT count(*) AS tiers_nseg, max(pages) AS tiers_largest FROM scipis_index_segments('am_tiers_body') \gset
DELETE FROM am_tiers WHERE id % 10 = 7;
VACUUM am_tiers;
SELECT count(*) <= :tiers_nseg + 1 AS segments_kept FROM scipis_index_segments('am_tiers_body');
SELECT pg_relation_size('am_tiers_body') <= :tiers_before_vacuum + (:tiers_largest + 2) * current_setting('block_size')::int AS no_doubling;
SELECT count(*) FROM am_tiers WHERE body @@@ 'common';
SELECT * FROM scipis_index_check('am_tiers_body');
DROP TABLE am_tiers, am_tiers_built;

-- A scan with no condition (count(*) when only the index is allowed)
-- lists every row, NULL values included.
CREATE TABLE am_all (id int, body text);
INSERT INTO am_all SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 'w' || i END FROM generate_series(1, 500) i;
CREATE INDEX am_all_body ON am_all USING scipis (body) WITH (pending_limit = 64);
INSERT INTO am_all SELECT i, 'late' FROM generate_series(501, 600) i;
VACUUM am_all;
SELECT count(*) FROM am_all;  -- enable_seqscan is off here
SET enable_indexonlyscan = off;
SELECT count(*) FROM am_all;
RESET enable_indexonlyscan;
DROP TABLE am_all;

-- Expressions and partial indexes.
CREATE TABLE am_tickets (id int, title text, body varchar(200), open bool);
INSERT INTO am_tickets VALUES (1, 'Disk', 'full again', true), (2, 'Net', 'disk ok', false),
  (3, 'Disk', 'replaced', true);
CREATE INDEX am_tickets_all ON am_tickets USING scipis ((title || ' ' || body)) WHERE open;
CREATE INDEX am_tickets_body ON am_tickets USING scipis (body) WITH (tokenizer = 'whitespace', indexer_threads = 1);
EXPLAIN (COSTS OFF) SELECT id FROM am_tickets WHERE (title || ' ' || body) @@@ 'disk' AND open;
SELECT id FROM am_tickets WHERE (title || ' ' || body) @@@ 'disk' AND open ORDER BY id;
SELECT id FROM am_tickets WHERE body @@@ 'disk' ORDER BY id;

-- Bad input: clear errors.
SELECT scipis_query('');
SELECT scipis_query('x', 'tfidf2');
SELECT scipis_query('x', match => 'some');
SELECT scipis_query('x', NULL);
SELECT id FROM am_docs WHERE body @@@ '---';
SELECT id FROM am_docs WHERE body @@@ NULL::scipisquery;
CREATE INDEX am_bad ON am_docs USING scipis (body) WITH (foo = 1);
CREATE INDEX am_bad ON am_docs USING scipis (body) WITH (tokenizer = 'words');
CREATE INDEX am_bad ON am_docs USING scipis (body) WITH (tokenizer = 'word', delimiters = ' ');
CREATE INDEX am_bad ON am_docs USING scipis (body) WITH (indexer_threads = -1);
CREATE INDEX am_bad ON am_docs USING scipis (id);
CREATE INDEX am_bad ON am_docs USING scipis (kind, body);
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- One scipis index on the column: the query binds to it at plan time.
SELECT id FROM am_docs ORDER BY body <@> 'disk' LIMIT 1;
-- Two: the query must name one.
CREATE INDEX am_docs_body_ws ON am_docs USING scipis (body) WITH (tokenizer = 'whitespace');
SELECT id FROM am_docs ORDER BY body <@> 'disk' LIMIT 1;
DROP INDEX am_docs_body_ws;
SELECT id FROM am_docs ORDER BY body <@> scipis_query('disk', index => 'am_docs_kind') LIMIT 1;
RESET enable_indexscan;
RESET enable_bitmapscan;
-- The text form round-trips.
SELECT scipis_query('a "b"', 'bm25', 'all', 'am_docs_body');
SELECT '{"query": "a \"b\"", "ranking": "bm25", "match": "all", "index": "am_docs_body"}'::scipisquery;
SELECT 'plain words'::scipisquery;

DROP TABLE am_docs, am_tickets;

-- Long values, stored out of line (TOAST): what an ordered index scan
-- returns for a row, in the select list too, is what the operators compute
-- on the row's own text with index scans off.
CREATE TABLE am_long (id int PRIMARY KEY, kind int, body text);
INSERT INTO am_long
SELECT i, i % 4, (SELECT string_agg(CASE WHEN i % 3 <> 0 AND j % (7 + i % 5) = 0 THEN 'needle'
                                    WHEN j % 11 = 0 THEN 'thread'
                                    ELSE substr(md5((i * 100000 + j)::text), 1, 6) END, ' ')
                  FROM generate_series(1, 2000 + 300 * i) j)
FROM generate_series(1, 30) i;
INSERT INTO am_long VALUES (31, 0, 'a needle in a short row'), (32, 0, NULL);
CREATE INDEX am_long_body ON am_long USING scipis (body);
SELECT reltoastrelid::regclass AS long_toast FROM pg_class WHERE relname = 'am_long' \gset
SELECT count(DISTINCT chunk_id) AS values_out_of_line FROM :long_toast;
-- The planner's row estimate of @@@ comes from the index: its df over its N,
-- times the table's rows.
CREATE FUNCTION plan_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j->0->'Plan'->>'Plan Rows')::float8;
END $$;
SELECT plan_rows($$SELECT id FROM am_long WHERE body @@@ 'needle'$$) AS estimated,
       (SELECT count(*) FROM am_long WHERE body @@@ 'needle') AS actual;
SELECT plan_rows($$SELECT id FROM am_long WHERE body @@@ 'absent words'$$) AS estimated;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id, body <@> 'needle' AS d FROM am_long ORDER BY d LIMIT 40;
CREATE TEMP TABLE long_by_index AS
SELECT 1 AS qn, id, body <@> 'needle' AS d, body @@@ 'needle' AS m FROM am_long ORDER BY d LIMIT 40;
INSERT INTO long_by_index
SELECT 2, id, body <@> 'needle thread' AS d, body @@@ 'needle thread' FROM am_long ORDER BY d LIMIT 7;
INSERT INTO long_by_index
SELECT 3, id, body <@> scipis_query('needle thread', 'bm25', 'all') AS d,
       body @@@ scipis_query('needle thread', 'bm25', 'all')
FROM am_long WHERE kind <> 1 ORDER BY d LIMIT 5;
-- A version of a row with the same value: the same stored value, its score.
UPDATE am_long SET kind = kind WHERE id IN (4, 5);
INSERT INTO long_by_index
SELECT 4, id, body <@> 'needle' AS d, body @@@ 'needle' FROM am_long ORDER BY d LIMIT 40;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
RESET enable_seqscan;
CREATE TEMP TABLE long_by_seq AS
SELECT 1 AS qn, id, body <@> 'needle' AS d, body @@@ 'needle' AS m FROM am_long ORDER BY d, id LIMIT 40;
INSERT INTO long_by_seq
SELECT 2, id, body <@> 'needle thread' AS d, body @@@ 'needle thread' FROM am_long ORDER BY d LIMIT 7;
INSERT INTO long_by_seq
SELECT 3, id, body <@> scipis_query('needle thread', 'bm25', 'all') AS d,
       body @@@ scipis_query('needle thread', 'bm25', 'all')
FROM am_long WHERE kind <> 1 ORDER BY d LIMIT 5;
INSERT INTO long_by_seq
SELECT 4, id, body <@> 'needle' AS d, body @@@ 'needle' FROM am_long ORDER BY d, id LIMIT 40;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT qn, count(*) AS rows, count(*) FILTER (WHERE m) AS matching, count(*) FILTER (WHERE d IS NULL) AS null_rows
FROM long_by_index GROUP BY qn ORDER BY qn;
-- Every row and score alike (1e-12 relative); nothing on one side only.
SELECT qn, id, i.d AS by_index, s.d AS by_seq, i.m AS m_index, s.m AS m_seq
FROM long_by_index i FULL JOIN long_by_seq s USING (qn, id)
WHERE i.id IS NULL OR s.id IS NULL OR i.m IS DISTINCT FROM s.m
   OR (i.d IS NULL) <> (s.d IS NULL) OR abs(i.d - s.d) > 1e-12 * abs(s.d);
DROP TABLE am_long;
DROP FUNCTION plan_rows(text);
