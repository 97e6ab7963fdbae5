-- Collections: directory trees indexed by the SCIPIS pipeline.

-- The registry. Only SELECT is granted: the functions below check the
-- caller's privileges and write it themselves. Index statistics are not
-- stored here but read from each collection's manifest, so a restored dump
-- never shows numbers for files that are not there.
CREATE TABLE scipis_collection (
    id      bigserial PRIMARY KEY,
    name    text NOT NULL UNIQUE,
    root    text NOT NULL,
    options jsonb NOT NULL DEFAULT '{}',
    owner   regrole NOT NULL,
    created timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('scipis_collection', '');
SELECT pg_catalog.pg_extension_config_dump('scipis_collection_id_seq', '');
REVOKE ALL ON scipis_collection FROM PUBLIC;
GRANT SELECT ON scipis_collection TO PUBLIC;

CREATE FUNCTION scipis_create_collection(name text, root text, options jsonb DEFAULT '{}')
RETURNS void
AS 'MODULE_PATHNAME', 'scipis_create_collection'
LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_drop_collection(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'scipis_drop_collection'
LANGUAGE C VOLATILE STRICT;

-- Runs in a background worker (src/sql/40_jobs.sql): wait => false returns
-- at once with only the job's id set. A build that leaves an indexer
-- several segments queues a job of kind 'merge' after it (collection
-- option merge_after_build; README "Compaction").
CREATE FUNCTION scipis_index(name text, wait boolean DEFAULT true,
    OUT files bigint, OUT bytes bigint, OUT tokens bigint, OUT terms bigint,
    OUT segments bigint, OUT seconds double precision,
    OUT mib_per_s double precision, OUT skipped bigint, OUT job bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'scipis_index_collection'
LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_search(query text, collection text DEFAULT NULL,
    k integer DEFAULT 10, ranking text DEFAULT 'tfidf', match text DEFAULT 'any')
RETURNS TABLE (collection text, path text, score double precision,
    size bigint, mtime timestamptz)
AS 'MODULE_PATHNAME', 'scipis_search_sql'
LANGUAGE C VOLATILE ROWS 10;

CREATE FUNCTION scipis_lookup(path text)
RETURNS TABLE (collection text, path text, size bigint, mtime timestamptz, tokens bigint,
    ctime timestamptz, uid bigint, gid bigint, mode integer, inode bigint)
AS 'MODULE_PATHNAME', 'scipis_lookup_sql'
LANGUAGE C VOLATILE ROWS 1;

-- Exact bytes, for paths that are not valid in the database encoding.
CREATE FUNCTION scipis_lookup(path bytea)
RETURNS TABLE (collection text, path text, size bigint, mtime timestamptz, tokens bigint,
    ctime timestamptz, uid bigint, gid bigint, mode integer, inode bigint)
AS 'MODULE_PATHNAME', 'scipis_lookup_sql'
LANGUAGE C VOLATILE ROWS 1;

-- Its support function only makes the planner load the library, whose
-- custom scan then answers conditions on scipis_files from the catalog's
-- statistics (README).
CREATE FUNCTION scipis_files_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'scipis_files_support'
LANGUAGE C STRICT;

CREATE FUNCTION scipis_list_files()
RETURNS TABLE (collection text, path text, size bigint, mtime timestamptz, tokens bigint,
    ctime timestamptz, uid bigint, gid bigint, mode integer, inode bigint)
AS 'MODULE_PATHNAME', 'scipis_files_sql'
LANGUAGE C VOLATILE SUPPORT scipis_files_support;

CREATE VIEW scipis_files AS SELECT * FROM scipis_list_files();

-- Paths by pattern (docs/search-semantics.md, "Paths"): a substring, or a
-- shell glob on the whole path when the pattern has *, ? or [.
CREATE FUNCTION scipis_locate(pattern text, collection text DEFAULT NULL)
RETURNS TABLE (collection text, path text, size bigint, mtime timestamptz, tokens bigint,
    ctime timestamptz, uid bigint, gid bigint, mode integer, inode bigint)
AS 'MODULE_PATHNAME', 'scipis_locate_sql'
LANGUAGE C VOLATILE;

-- Exact bytes, for patterns that are not valid in the database encoding.
CREATE FUNCTION scipis_locate(pattern bytea, collection text DEFAULT NULL)
RETURNS TABLE (collection text, path text, size bigint, mtime timestamptz, tokens bigint,
    ctime timestamptz, uid bigint, gid bigint, mode integer, inode bigint)
AS 'MODULE_PATHNAME', 'scipis_locate_sql'
LANGUAGE C VOLATILE;

-- What this backend holds for the collections it has opened: the
-- engine's own heap (bounded, whatever the number of files) and the
-- segment files it maps (the page cache's pages, shared by all backends).
CREATE FUNCTION scipis_backend_memory()
RETURNS TABLE (collection text, heap_bytes bigint, mapped_bytes bigint)
AS 'MODULE_PATHNAME', 'scipis_backend_memory'
LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_collection_stats(name text,
    OUT files bigint, OUT bytes bigint, OUT index_bytes bigint,
    OUT last_indexed timestamptz, OUT segments bigint, OUT deleted_docs bigint,
    OUT fresh_as_of timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'scipis_collection_stats'
LANGUAGE C VOLATILE STRICT;

CREATE VIEW scipis_collections AS
SELECT c.name, c.root, c.options, c.owner, s.files, s.bytes, s.index_bytes,
       s.last_indexed
FROM scipis_collection c, LATERAL scipis_collection_stats(c.name) s;

GRANT SELECT ON scipis_files, scipis_collections TO PUBLIC;
