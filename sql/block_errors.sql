-- Block min/max indexes: every bad input is a clear error with an SQLSTATE.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
\set VERBOSITY terse

SELECT '/tmp/scipis_block_errors_' || pg_backend_pid() AS dir \gset
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'mkdir -p %s && chmod 755 %s && cat >/dev/null'$$, :'dir', :'dir') \gexec
\set ECHO all
CREATE FUNCTION pg_temp.le(b bytea) RETURNS bytea LANGUAGE sql AS
$$ SELECT string_agg(substr(b, i, 1), ''::bytea ORDER BY i DESC) FROM generate_series(1, length(b)) i $$;
CREATE FUNCTION pg_temp.write_file(path text, data bytea) RETURNS void LANGUAGE plpgsql AS $$
DECLARE o oid;
BEGIN
  o := lo_from_bytea(0, data);
  PERFORM lo_export(o, path);
  PERFORM lo_unlink(o);
END $$;
-- Runs a statement and shows its SQLSTATE and message, paths made stable.
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE replace(q, '$DIR', current_setting('scipis_test.dir'));
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN sqlstate || ': ' || regexp_replace(replace(sqlerrm, current_setting('scipis_test.dir'), '$DIR'),
                                            '"[^"]*/block/[0-9]+\.sbi"', '"<index file>"');
END $$;
SELECT set_config('scipis_test.dir', :'dir', false) IS NOT NULL AS ok;

-- 100 float32 values (400 bytes).
SELECT pg_temp.write_file(:'dir' || '/f.f32',
  (SELECT string_agg(pg_temp.le(float4send(g::float4)), ''::bytea ORDER BY g) FROM generate_series(1, 100) g));
-- 1000 int32 values for the damage tests.
SELECT pg_temp.write_file(:'dir' || '/d.i32',
  (SELECT string_agg(pg_temp.le(int4send(g)), ''::bytea ORDER BY g) FROM generate_series(1, 1000) g));

-- Bad shapes of the variables and options arguments.
CREATE TEMP TABLE bad (stmt text);
INSERT INTO bad VALUES
  ($$SELECT scipis_create_block_index('b', '[]')$$),
  ($$SELECT scipis_create_block_index('b', '"x"')$$),
  ($$SELECT scipis_create_block_index('b', '{}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": 3}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": 7, "dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32", "endian": "big"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32", "header_bytes": -4}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32", "header_bytes": 1.5}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32", "header_bytes": "4"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float16"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float64"}}', '{"shape": [100]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": [10, 11]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32", "header_bytes": 400}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "int64", "header_bytes": 4}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": [0]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": [-10]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": []}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": 100}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": [10, 10], "block_shape": [5]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": [10, 10], "block_shape": [5, 20]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"shape": [10, 10], "block_shape": [5, 0]}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"partition_bytes": 0}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"partition_bytes": -8}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"partition_bytes": 3}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"partition_bytes": 1e20}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"threads": 0}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"threads": 1000}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '{"partition_size": 64}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}', '[1]')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "f.f32", "dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/missing.f32", "dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR", "dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('b', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}, "g": {"path": "$DIR/d.i32", "dtype": "int32"}}')$$),
  ($$SELECT scipis_create_block_index(NULL, '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}')$$),
  ($$SELECT scipis_create_block_index('b', NULL)$$);
SELECT pg_temp.try(stmt) AS result FROM bad;
SELECT count(*) AS no_index_left FROM scipis_block_index;

-- Good index, then bad queries.
SELECT pg_temp.try($$SELECT scipis_create_block_index('f', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}, "g": {"path": "$DIR/d.i32", "dtype": "int32"}}', '{"shape": [10, 10], "partition_bytes": 16}')$$);
SELECT pg_temp.try($$SELECT scipis_create_block_index('f', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}')$$);
TRUNCATE bad;
INSERT INTO bad VALUES
  ($$SELECT * FROM scipis_block_query('nope', 'f > 1')$$),
  ($$SELECT * FROM scipis_block_query('f', '')$$),
  ($$SELECT * FROM scipis_block_query('f', '   ')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f >')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > 1 AND')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > 1 g < 2')$$),
  ($$SELECT * FROM scipis_block_query('f', 'temp > 1')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > g')$$),
  ($$SELECT * FROM scipis_block_query('f', '1 < 2')$$),
  ($$SELECT * FROM scipis_block_query('f', '(f > 1')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > 1)')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f >> 1')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f ~ 1')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > 1e999')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > 12abc')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f BETWEEN 1 OR 2')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f NOT > 2')$$),
  ($$SELECT * FROM scipis_block_query('f', '"f > 2')$$),
  ($$SELECT * FROM scipis_block_query('f', 'f > ''1''')$$),
  ($$SELECT * FROM scipis_block_query('f', NULL)$$),
  ($$SELECT * FROM scipis_block_query(NULL, 'f > 1')$$),
  ($$SELECT * FROM scipis_block_ranges('f', 'f > 1', max_gap => -1)$$),
  ($$SELECT * FROM scipis_block_ranges('f', 'f > 1', max_read => 0)$$),
  ($$SELECT * FROM scipis_block_count('f', 'f > 1', 'brin')$$),
  ($$SELECT * FROM scipis_block_stats('nope')$$),
  ($$SELECT scipis_drop_block_index('nope')$$),
  ($$SELECT scipis_rebuild_block_index('nope')$$);
SELECT pg_temp.try(stmt) AS result FROM bad;
SELECT hits FROM scipis_block_count('f', 'f > 90 and g <= 95');

-- A damaged index file is an error naming it; so is a missing one.
CREATE FUNCTION pg_temp.index_path(n text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN current_setting('scipis.data_directory', true) IN ('', NULL)
              THEN current_setting('data_directory') || '/scipis'
              WHEN current_setting('scipis.data_directory') LIKE '/%'
              THEN current_setting('scipis.data_directory')
              ELSE current_setting('data_directory') || '/' || current_setting('scipis.data_directory') END
         || '/' || (SELECT oid FROM pg_database WHERE datname = current_database())
         || '/' || (SELECT index_file FROM scipis_block_index WHERE name = n) $$;
SELECT pg_temp.index_path('f') AS ixpath \gset
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'cp %s %s/saved.sbi && printf Z | dd of=%s bs=1 seek=100 conv=notrunc 2>/dev/null; cat >/dev/null'$$, :'ixpath', :'dir', :'ixpath') \gexec
\set ECHO all
SELECT pg_temp.try($$SELECT * FROM scipis_block_query('f', 'f > 1')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_block_stats('f')$$);
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'cp %s/saved.sbi %s && printf Z | dd of=%s bs=1 seek=5 conv=notrunc 2>/dev/null; cat >/dev/null'$$, :'dir', :'ixpath', :'ixpath') \gexec
\set ECHO all
SELECT pg_temp.try($$SELECT * FROM scipis_block_query('f', 'f > 1')$$);
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'cp %s/saved.sbi %s && printf Z | dd of=%s bs=1 seek=$(( $(stat -c %%s %s) - 40 )) conv=notrunc 2>/dev/null; cat >/dev/null'$$, :'dir', :'ixpath', :'ixpath', :'ixpath') \gexec
\set ECHO all
SELECT pg_temp.try($$SELECT * FROM scipis_block_query('f', 'f > 1')$$);
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'cp %s/saved.sbi %s && truncate -s 200 %s; cat >/dev/null'$$, :'dir', :'ixpath', :'ixpath') \gexec
\set ECHO all
SELECT pg_temp.try($$SELECT * FROM scipis_block_ranges('f', 'f > 1')$$);
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'rm %s; cat >/dev/null'$$, :'ixpath') \gexec
\set ECHO all
SELECT pg_temp.try($$SELECT * FROM scipis_block_count('f', 'f > 1')$$);
SELECT scipis_rebuild_block_index('f') IS NOT NULL AS job;
SELECT hits FROM scipis_block_count('f', 'f > 90 and g <= 95');
-- A data file that changed after the build is refused until a rebuild.
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'printf abcd >> %s/d.i32; cat >/dev/null'$$, :'dir') \gexec
\set ECHO all
SELECT pg_temp.try($$SELECT * FROM scipis_block_query('f', 'f > 1')$$);
SELECT scipis_rebuild_block_index('f') IS NOT NULL AS job;
SELECT hits FROM scipis_block_count('f', 'f > 90 and g <= 95');

-- Privileges: creating needs pg_read_server_files; reading another role's
-- index needs it too; dropping needs ownership.
DROP ROLE IF EXISTS regress_scipis_block_nobody;
DROP ROLE IF EXISTS regress_scipis_block_reader;
CREATE ROLE regress_scipis_block_nobody;
CREATE ROLE regress_scipis_block_reader IN ROLE pg_read_server_files;
GRANT USAGE ON SCHEMA public TO regress_scipis_block_nobody, regress_scipis_block_reader;
SET ROLE regress_scipis_block_nobody;
SELECT pg_temp.try($$SELECT scipis_create_block_index('mine', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}')$$);
SELECT pg_temp.try($$SELECT * FROM scipis_block_query('f', 'f > 1')$$);
SELECT pg_temp.try($$SELECT scipis_drop_block_index('f')$$);
SELECT count(*) AS registry_visible FROM scipis_block_index;
RESET ROLE;
SET ROLE regress_scipis_block_reader;
SELECT count(*) AS reader_hits FROM scipis_block_query('f', 'f > 95');
SELECT pg_temp.try($$SELECT scipis_drop_block_index('f')$$);
SELECT pg_temp.try($$SELECT scipis_create_block_index('mine', '{"f": {"path": "$DIR/f.f32", "dtype": "float32"}}')$$);
SELECT owner FROM scipis_block_index WHERE name = 'mine';
SELECT pg_temp.try($$SELECT scipis_drop_block_index('mine')$$);
RESET ROLE;
REVOKE USAGE ON SCHEMA public FROM regress_scipis_block_nobody, regress_scipis_block_reader;
DROP ROLE regress_scipis_block_nobody;
DROP ROLE regress_scipis_block_reader;

SELECT scipis_drop_block_index('f');
\set ECHO none
SELECT format($$COPY (SELECT 1) TO PROGRAM 'rm -rf %s; cat >/dev/null'$$, :'dir') \gexec
\set ECHO all
