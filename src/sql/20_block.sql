-- Block min/max indexes over numeric arrays in files (see bench/block/README.md).

CREATE TABLE scipis_block_index (
    name text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
    variables jsonb NOT NULL,
    options jsonb NOT NULL,
    variable_names text[] NOT NULL,     -- the order of vals in scipis_block_query
    owner name NOT NULL DEFAULT current_user,
    index_file text NOT NULL,           -- relative to the database's scipis directory
    shape bigint[] NOT NULL,
    block_shape bigint[] NOT NULL,
    partitions bigint NOT NULL,
    bytes_indexed bigint NOT NULL,
    index_bytes bigint NOT NULL,
    build_seconds double precision NOT NULL,
    built_at timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('scipis_block_index', '');
CREATE SEQUENCE scipis_block_file_seq;
SELECT pg_catalog.pg_extension_config_dump('scipis_block_file_seq', '');
GRANT SELECT ON scipis_block_index TO PUBLIC;
GRANT INSERT, UPDATE, DELETE ON scipis_block_index TO pg_read_server_files;
GRANT USAGE ON SEQUENCE scipis_block_file_seq TO pg_read_server_files;

-- Both build in a job worker (src/sql/40_jobs.sql) and return the job's id;
-- wait => false returns at once, the worker records the index when done.
CREATE FUNCTION scipis_create_block_index(name text, variables jsonb, options jsonb DEFAULT '{}',
                                          wait boolean DEFAULT true)
RETURNS bigint
AS 'MODULE_PATHNAME', 'scipis_create_block_index' LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_rebuild_block_index(name text, wait boolean DEFAULT true)
RETURNS bigint
AS 'MODULE_PATHNAME', 'scipis_rebuild_block_index' LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_drop_block_index(name text, if_exists boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'scipis_drop_block_index' LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_block_stats(name text)
RETURNS TABLE (index_name text, variables text[], shape bigint[], block_shape bigint[],
               elements bigint, blocks bigint, partitions bigint, partition_elements bigint,
               bytes_indexed bigint, index_bytes bigint, build_seconds double precision,
               built_at timestamptz, owner text, index_file text)
AS 'MODULE_PATHNAME', 'scipis_block_stats' LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_block_ranges(name text, predicate text,
                                    max_gap bigint DEFAULT NULL, max_read bigint DEFAULT NULL)
RETURNS TABLE (variable text, block bigint, first_partition bigint, partitions bigint,
               byte_offset bigint, byte_length bigint, min double precision,
               max double precision)
AS 'MODULE_PATHNAME', 'scipis_block_ranges' LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_block_query(name text, predicate text,
                                   max_gap bigint DEFAULT NULL, max_read bigint DEFAULT NULL)
RETURNS TABLE (element bigint, coords bigint[], vals double precision[])
AS 'MODULE_PATHNAME', 'scipis_block_query' LANGUAGE C VOLATILE;

CREATE FUNCTION scipis_block_count(name text, predicate text, pruning text DEFAULT 'partition',
                                   max_gap bigint DEFAULT NULL, max_read bigint DEFAULT NULL)
RETURNS TABLE (hits bigint, candidate_partitions bigint, bytes_read bigint,
               read_requests bigint, elements_checked bigint, seconds double precision)
AS 'MODULE_PATHNAME', 'scipis_block_count' LANGUAGE C VOLATILE;
