-- Jobs: indexing runs in background workers (README "Jobs"). A job is a
-- row written by the workers in their own transactions, so it survives
-- restarts; only SELECT through the view is granted, the functions check
-- the caller's privileges and write the table themselves.
CREATE TABLE scipis_job (
    id              bigserial PRIMARY KEY,
    target          text NOT NULL,
    collection_id   bigint,             -- scipis_collection.id for collection jobs
    -- merge: a build's segments, merged after it (scipis_index queues it)
    kind            text NOT NULL CHECK (kind IN ('index', 'refresh', 'merge', 'block index')),
    state           text NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
    phase           text CHECK (phase IN ('crawling', 'indexing', 'flushing', 'committing', 'merging')),
    files_done      bigint NOT NULL DEFAULT 0,
    bytes_done      bigint NOT NULL DEFAULT 0,
    files_found     bigint NOT NULL DEFAULT 0,
    bytes_found     bigint NOT NULL DEFAULT 0,
    crawl_done      boolean NOT NULL DEFAULT false,
    run_seconds     double precision NOT NULL DEFAULT 0,  -- of the current run
    expected_files  bigint,             -- the previous index's, for the estimate
    expected_bytes  bigint,
    result          jsonb,              -- scipis_index's row, once succeeded
    submitted_by    oid NOT NULL,
    scheduled       boolean NOT NULL DEFAULT false,
    waited          boolean NOT NULL DEFAULT false,  -- a caller waits on it
    submitted       timestamptz NOT NULL DEFAULT now(),
    started         timestamptz,
    finished        timestamptz,
    attempts        integer NOT NULL DEFAULT 0,
    cancel_requested boolean NOT NULL DEFAULT false,
    worker_pid      integer,
    error_message   text,
    error_sqlstate  text,
    args            jsonb,              -- block index jobs: variables, options, rebuild
    resumed_files   bigint NOT NULL DEFAULT 0,  -- of the done: kept from an interrupted run
    resumed_bytes   bigint NOT NULL DEFAULT 0,
    read_bytes      bigint NOT NULL DEFAULT 0,  -- read by every attempt together
    busy_seconds    double precision NOT NULL DEFAULT 0  -- building, every attempt together
);
CREATE INDEX scipis_job_open ON scipis_job (id) WHERE state IN ('queued', 'running');
CREATE INDEX scipis_job_collection ON scipis_job (collection_id, submitted);
REVOKE ALL ON scipis_job FROM PUBLIC;

-- The error text is shown to the role that submitted the job, the
-- target's owner and superusers; others see that it failed.
CREATE VIEW scipis_jobs AS
SELECT j.id, j.target, j.kind, j.state, j.phase,
       j.files_done, j.bytes_done, j.files_found, j.bytes_found,
       CASE WHEN j.crawl_done THEN j.files_found END AS files_total,
       CASE WHEN j.crawl_done THEN j.bytes_found END AS bytes_total,
       j.resumed_files, j.resumed_bytes, j.read_bytes, j.busy_seconds,
       round(((j.bytes_done - j.resumed_bytes) / 1048576.0 / nullif(j.run_seconds, 0))::numeric, 1)
           AS mib_per_s,
       CASE WHEN j.state = 'running' THEN now() - j.started
            ELSE j.finished - j.started END AS elapsed,
       CASE WHEN j.state = 'running' AND j.bytes_done > j.resumed_bytes AND j.run_seconds > 0 THEN
            make_interval(secs => greatest(0,
                (CASE WHEN j.crawl_done THEN j.bytes_found
                      ELSE greatest(j.bytes_found, coalesce(j.expected_bytes, 0)) END
                 - j.bytes_done) * j.run_seconds / nullif(j.bytes_done - j.resumed_bytes, 0)))
       END AS time_left,
       j.submitted_by::regrole AS submitted_by, j.scheduled,
       j.submitted, j.started, j.finished, j.attempts,
       CASE WHEN v.may_see THEN j.error_message END AS error,
       CASE WHEN v.may_see THEN j.error_sqlstate END AS sqlstate
FROM scipis_job j
LEFT JOIN scipis_collection c ON c.id = j.collection_id
LEFT JOIN scipis_block_index b ON j.kind = 'block index' AND b.name = j.target
    AND EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = b.owner),
LATERAL (SELECT coalesce(pg_has_role(current_user, j.submitted_by, 'USAGE'), false)
             OR coalesce(pg_has_role(current_user, c.owner, 'USAGE'), false)
             OR coalesce(pg_has_role(current_user, b.owner, 'USAGE'), false)
             AS may_see) v;
GRANT SELECT ON scipis_jobs TO PUBLIC;

CREATE FUNCTION scipis_cancel_job(id bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'scipis_cancel_job'
LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION scipis_wait_job(id bigint, timeout interval DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'scipis_wait_job'
LANGUAGE C VOLATILE;

-- Without shared_preload_libraries = 'scipis' nothing runs jobs that a
-- server restart interrupted until the next job is queued: this queues
-- them again and starts a worker now.
CREATE FUNCTION scipis_run_jobs()
RETURNS bigint
AS 'MODULE_PATHNAME', 'scipis_run_jobs'
LANGUAGE C VOLATILE;

-- scipis_collections with the next scheduled run.
CREATE OR REPLACE VIEW scipis_collections AS
SELECT c.name, c.root, c.options, c.owner, s.files, s.bytes, s.index_bytes,
       s.last_indexed,
       CASE WHEN c.options ? 'refresh_interval' THEN
           coalesce((SELECT max(j.submitted) FROM scipis_job j
                     WHERE j.collection_id = c.id AND j.scheduled), c.created)
           + (c.options->>'refresh_interval')::interval
       END AS next_run,
       s.segments, s.deleted_docs, s.fresh_as_of
FROM scipis_collection c, LATERAL scipis_collection_stats(c.name) s;

-- Brings the index up to date with the tree, or with just the given paths
-- (files or subtrees under the root), reading only new and changed files,
-- and of a log that only grew only what it appended (README "Refresh"). Runs in a background worker as a job of kind
-- 'refresh'; wait => false returns at once with only the job's id set.
CREATE FUNCTION scipis_refresh(name text, paths text[] DEFAULT NULL, wait boolean DEFAULT true,
    OUT files_added bigint, OUT files_changed bigint, OUT files_appended bigint,
    OUT files_deleted bigint,
    OUT bytes_read bigint, OUT seconds double precision, OUT files bigint,
    OUT deleted_docs bigint, OUT segments bigint, OUT job bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'scipis_refresh_collection'
LANGUAGE C VOLATILE;

-- Merges every segment of each of the collection's indexers into one run,
-- dropping tombstoned documents and folding appended files' linked
-- documents (README "Compaction"); answers are the same before and after.
-- Runs in the calling backend, after any build or refresh of the
-- collection; refreshes merge their tail tiers on their own.
CREATE FUNCTION scipis_compact(name text,
    OUT segments_merged bigint, OUT docs_dropped bigint, OUT chains_folded bigint,
    OUT segments bigint, OUT deleted_docs bigint, OUT index_bytes bigint,
    OUT seconds double precision)
RETURNS record
AS 'MODULE_PATHNAME', 'scipis_compact_collection'
LANGUAGE C VOLATILE;

-- Returns true once every change to the tree made before as_of is
-- searchable (fresh_as_of >= as_of): a refresh already queued or running
-- is waited for, else one is run; false when timeout passes first.
CREATE FUNCTION scipis_wait_fresh(name text, as_of timestamptz DEFAULT now(),
    timeout interval DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'scipis_wait_fresh'
LANGUAGE C VOLATILE;
