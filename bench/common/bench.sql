-- Shared by the PostgreSQL FTS and scipis runs: the query set and the
-- measurements. Loaded once per benchmark cluster by run.sh:
--   psql -f bench/common/bench.sql < queries.tsv
\set ON_ERROR_STOP on
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.queries, bench.lat, bench.topk, bench.build;
-- From pick_queries: id, kind (t1 = one term, t3 = three terms), the query
-- text (terms separated by spaces), their document frequencies, N.
CREATE TABLE bench.queries (
	id		int PRIMARY KEY,
	kind	text NOT NULL,
	q		text NOT NULL,
	dfs		text,
	n		int
);
-- One row per query and pass; "us" is measured inside the server with
-- clock_timestamp() around the query, nrows = rows returned (<= 10).
CREATE TABLE bench.lat (
	system	text NOT NULL,
	pass	int NOT NULL,
	id		int NOT NULL,
	kind	text NOT NULL,
	us		float8 NOT NULL,
	nrows	int NOT NULL
);
-- The rows of the measured pass, for comparing result lists across systems.
CREATE TABLE bench.topk (
	system	text NOT NULL,
	id		int NOT NULL,
	rank	int NOT NULL,
	path	text NOT NULL,
	score	float8
);
-- Build (indexing) measurements.
CREATE TABLE bench.build (
	system	text NOT NULL,
	step	text NOT NULL,
	seconds	float8 NOT NULL,
	detail	jsonb
);
\copy bench.queries FROM pstdin WITH (FORMAT csv, DELIMITER E'\t', HEADER true)
SELECT kind, count(*) AS queries FROM bench.queries GROUP BY kind ORDER BY kind;
