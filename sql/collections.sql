-- Collections over the shipped loghub samples: index, search, look up, join.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
-- The sample `make install` puts beside the extension's files.
SELECT setting || '/scipis/loghub-2k' AS root FROM pg_config WHERE name = 'SHAREDIR' \gset
SELECT scipis_create_collection('loghub', :'root');
SELECT files, bytes, tokens, terms, segments > 0 AS has_segments, skipped,
       seconds > 0 AS timed, mib_per_s > 0 AS rated
FROM scipis_index('loghub');

-- Ranked search; paths shown relative to the root.
SELECT collection, replace(path, :'root', '') AS file, round(score::numeric, 9) AS score, size
FROM scipis_search('error');
SELECT replace(path, :'root', '') AS file, round(score::numeric, 9) AS score
FROM scipis_search('connection closed', k => 3, ranking => 'bm25');
SELECT replace(path, :'root', '') AS file, round(score::numeric, 9) AS score
FROM scipis_search('failed password', 'loghub', NULL, 'tfidf', 'all');
SELECT count(*) FROM scipis_search('INFO', k => NULL);

-- Results are rows: join them with a catalog of one's own.
CREATE TABLE system_owner (file text PRIMARY KEY, team text);
INSERT INTO system_owner VALUES ('/Apache_2k.log', 'web'), ('/OpenSSH_2k.log', 'security'),
  ('/HDFS_2k.log', 'storage'), ('/Linux_2k.log', 'ops');
SELECT o.team, replace(s.path, :'root', '') AS file, round(s.score::numeric, 6) AS score
FROM scipis_search('error failure denied', k => NULL) s
JOIN system_owner o ON o.file = replace(s.path, :'root', '')
ORDER BY s.score DESC;

-- Path lookup and the file list.
SELECT collection, replace(path, :'root', '') AS file, size, tokens
FROM scipis_lookup(:'root' || '/HDFS_2k.log');
SELECT count(*) FROM scipis_lookup(:'root' || '/HDFS_2k');
SELECT count(*), sum(size), sum(tokens) FROM scipis_files WHERE collection = 'loghub';
SELECT name, replace(root, :'root', '<root>') AS root, options, files, bytes,
       index_bytes > 0 AS has_index, last_indexed IS NOT NULL AS indexed
FROM scipis_collections;

-- Rebuilding gives the same answers.
SELECT files, tokens, terms FROM scipis_index('loghub');
SELECT replace(path, :'root', '') AS file, round(score::numeric, 9) AS score
FROM scipis_search('error', k => 3);

-- A query of 300,000 distinct terms costs time linear in its length: the
-- timeout fails the test should parsing or merging turn quadratic (minutes).
SET statement_timeout = '60s';
CREATE TEMP TABLE many AS
SELECT * FROM scipis_search((SELECT string_agg('zz' || g, ' ') FROM generate_series(1, 300000) g)
                            || ' error zz7', 'loghub', NULL);
RESET statement_timeout;
SELECT count(*) AS rows, (SELECT count(*) FROM scipis_search('error', 'loghub', NULL)) AS error_rows,
       (SELECT count(*) FROM (SELECT path, score FROM many
                              EXCEPT SELECT path, score FROM scipis_search('error', 'loghub', NULL)) d)
         AS differing
FROM many;

-- A build whose table holds a few thousand terms writes several segments;
-- scipis_compact merges each indexer's in step into one, however many
-- terms: the same answers, bit for bit, as the collection built whole.
SELECT scipis_create_collection('loghub_small_table', :'root',
                                '{"tfidf_index_size": 1048576, "indexer_threads": 1,
                                  "merge_after_build": false}');
SELECT segments > 1 AS several_segments FROM scipis_index('loghub_small_table');
SELECT segments_merged > 1 AS merged, segments FROM scipis_compact('loghub_small_table');
SELECT q, count(*) AS differing
FROM unnest(ARRAY['error', 'connection closed', 'failed password', 'INFO', 'blk_ 0', 'zzz']) q,
LATERAL ((SELECT path, score FROM scipis_search(q, 'loghub_small_table', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'loghub', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'loghub', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'loghub_small_table', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'loghub', k => 5)
          EXCEPT SELECT path, score FROM scipis_search(q, 'loghub_small_table', k => 5))) d
GROUP BY q ORDER BY q;
SELECT scipis_drop_collection('loghub_small_table');

-- By default the build queues a merge job that does the same beside
-- refreshes: once it is done, one segment and the same answers.
SELECT scipis_create_collection('loghub_merged', :'root',
                                '{"tfidf_index_size": 1048576, "indexer_threads": 1}');
SELECT segments > 1 AS several_segments FROM scipis_index('loghub_merged');
SELECT kind, state IN ('queued', 'running', 'succeeded') AS queued
FROM scipis_jobs WHERE target = 'loghub_merged' ORDER BY id;
SELECT scipis_wait_job(id) AS merge_job FROM scipis_jobs WHERE target = 'loghub_merged' AND kind = 'merge';
SELECT (j.result->>'segments_merged')::int > 1 AS merged, (j.result->>'segments')::int AS segments_after,
       c.segments
FROM scipis_job j, scipis_collections c
WHERE j.target = 'loghub_merged' AND j.kind = 'merge' AND c.name = 'loghub_merged';
SELECT q, count(*) AS differing
FROM unnest(ARRAY['error', 'connection closed', 'failed password', 'INFO', 'blk_ 0', 'zzz']) q,
LATERAL ((SELECT path, score FROM scipis_search(q, 'loghub_merged', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'loghub', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'loghub', k => NULL)
          EXCEPT SELECT path, score FROM scipis_search(q, 'loghub_merged', k => NULL))
         UNION ALL
         (SELECT path, score FROM scipis_search(q, 'loghub', k => 5)
          EXCEPT SELECT path, score FROM scipis_search(q, 'loghub_merged', k => 5))) d
GROUP BY q ORDER BY q;
-- A build that leaves each indexer one segment queues none.
SELECT segments FROM scipis_index('loghub');
SELECT count(*) AS merge_jobs FROM scipis_jobs WHERE target = 'loghub' AND kind = 'merge';
SELECT scipis_create_collection('bad_merge_option', '/tmp', '{"merge_after_build": "yes"}');
SELECT scipis_drop_collection('loghub_merged');
