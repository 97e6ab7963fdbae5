-- Bad input to every function: a clear error with an SQLSTATE.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
-- The sample `make install` puts beside the extension's files.
SELECT setting || '/scipis/loghub-2k' AS root FROM pg_config WHERE name = 'SHAREDIR' \gset
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

SELECT scipis_create_collection('err_logs', :'root', '{"split_factor": 4}');
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', 'err_logs')$$);
SELECT files FROM scipis_index('err_logs');

SELECT pg_temp.try($$SELECT * FROM scipis_search('error', 'no_such')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_index('no_such')$$);
SELECT pg_temp.try($$SELECT scipis_drop_collection('no_such')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search('')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search(' -- !! ', 'err_logs')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search(NULL)$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', k => 0)$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', k => -5)$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', ranking => 'bm42')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', match => 'some')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_lookup(NULL::text)$$);
SELECT pg_temp.try(format('SELECT scipis_create_collection(%L, %L)', 'err_logs', :'root'));
SELECT pg_temp.try($$SELECT scipis_create_collection('', '/tmp')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', 'relative/dir')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/nonexistent/scipis/dir')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/dev/null')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', NULL)$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '[1, 2]')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"colour": 1}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"split_factor": 0}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"split_factor": "many"}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"index_depth": 1.5}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"block_size": 100}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"block_size": "64 parsecs"}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"tfidf_index_size": -1}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"reader_threads": -2}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"follow_symlinks": "yes"}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"direct_writes": 1}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"include": [1]}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"include": {"a": "b"}}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"tokenizer": "ngram"}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"tokenizer": "word", "delimiters": " "}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"direct_io": true, "block_size": 5000}')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('x', '/tmp', '{"path_index_size": null}')$$);
-- Sizes accept units.
SELECT scipis_create_collection('units', '/tmp', '{"block_size": "64kB", "tfidf_index_size": "1MB"}');
SELECT options FROM scipis_collections WHERE name = 'units';
SELECT scipis_drop_collection('units');

-- Privileges: reading server files needs pg_read_server_files.
CREATE ROLE scipis_nobody;
CREATE ROLE scipis_reader IN ROLE pg_read_server_files;
SET ROLE scipis_nobody;
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', 'err_logs')$$);
SELECT pg_temp.try($$SELECT scipis_create_collection('mine', '/tmp')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_index('err_logs')$$);
SELECT pg_temp.try($$SELECT scipis_drop_collection('err_logs')$$);
SELECT pg_temp.try($$INSERT INTO scipis_collection (name, root, owner) VALUES ('x', '/', 'scipis_nobody')$$);
SELECT count(*) FROM scipis_search('error');
SELECT count(*) FROM scipis_files;
RESET ROLE;
SET ROLE scipis_reader;
SELECT count(*) FROM scipis_search('error', 'err_logs');
SELECT scipis_create_collection('readers', :'root', '{"include": "*.nothing"}');
SELECT files FROM scipis_index('readers');
SELECT pg_temp.try($$SELECT scipis_drop_collection('err_logs')$$);
SELECT scipis_drop_collection('readers');
RESET ROLE;
DROP ROLE scipis_nobody;
DROP ROLE scipis_reader;

SELECT scipis_drop_collection('err_logs');
SELECT pg_temp.try($$SELECT * FROM scipis_search('error', 'err_logs')$$);
