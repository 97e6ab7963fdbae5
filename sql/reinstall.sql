-- DROP EXTENSION leaves index files behind (the library need not be loaded
-- to see it happen); a new installation numbers collections from 1 again
-- and must not take the old files for its own.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
-- The sample `make install` puts beside the extension's files.
SELECT setting || '/scipis/loghub-2k' AS root FROM pg_config WHERE name = 'SHAREDIR' \gset
SELECT scipis_create_collection('before', :'root');
SELECT files > 0 AS indexed FROM scipis_index('before');
SELECT count(*) > 0 AS found FROM scipis_search('error', 'before');
DROP EXTENSION scipis;
CREATE EXTENSION scipis;
-- Same id as a collection of the old installation: not indexed yet.
SELECT scipis_create_collection('after', :'root');
SELECT name, files, index_bytes, last_indexed FROM scipis_collections;
SELECT count(*) FROM scipis_search('error', 'after');
SELECT count(*) FROM scipis_files;
SELECT files > 0 AS indexed FROM scipis_index('after');
SELECT count(*) > 0 AS found FROM scipis_search('error', 'after');
-- The function that cleans up runs only as part of CREATE EXTENSION.
SELECT count(*) FROM pg_proc WHERE proname = 'scipis_remove_leftovers';

-- DROP DATABASE leaves that database's directory behind; creating the
-- extension in any database removes those of databases that are gone.
SELECT current_database() AS home \gset
CREATE DATABASE scipis_dropped;
\c scipis_dropped
SET client_min_messages = warning;
CREATE EXTENSION scipis;
RESET client_min_messages;
SELECT scipis_create_collection('gone', :'root');
SELECT files > 0 AS indexed FROM scipis_index('gone');
SELECT oid AS gone_oid FROM pg_database WHERE datname = current_database() \gset
\c :home
DROP DATABASE scipis_dropped;
SELECT :'gone_oid' IN (SELECT pg_ls_dir('scipis')) AS left_behind;
DROP EXTENSION scipis;
CREATE EXTENSION scipis;
SELECT :'gone_oid' IN (SELECT pg_ls_dir('scipis')) AS left_behind;
-- This database's own directory stays.
SELECT (SELECT oid::text FROM pg_database WHERE datname = current_database())
       IN (SELECT pg_ls_dir('scipis')) AS own_directory;
