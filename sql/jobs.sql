-- Jobs: scipis_index runs in a background worker; scipis_jobs, cancel, wait.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
SELECT setting || '/scipis/loghub-2k' AS root FROM pg_config WHERE name = 'SHAREDIR' \gset
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9]+', 'N', 'g');
END $$;

SELECT scipis_create_collection('jobs_logs', :'root');
SHOW scipis.max_workers;
-- wait => true (the default): a worker runs it, the caller gets its numbers.
SELECT files, skipped, job IS NOT NULL AS has_job FROM scipis_index('jobs_logs');
SELECT count(*) AS matches FROM scipis_search('error', 'jobs_logs', k => NULL) \gset
SELECT target, kind, state, phase, files_done = files_total AS all_files,
       bytes_done = bytes_total AS all_bytes, bytes_total > 0 AS sized,
       mib_per_s > 0 AS rated, elapsed > '0'::interval AS timed, time_left,
       submitted_by = current_user::regrole AS mine, scheduled, attempts, error, sqlstate
FROM scipis_jobs WHERE target = 'jobs_logs';

-- wait => false: queued, only the job's id is returned, a worker runs it.
SELECT files IS NULL AND tokens IS NULL AS no_numbers, job AS queued
FROM scipis_index('jobs_logs', wait => false) \gset
SELECT :'no_numbers' AS no_numbers;
SELECT scipis_wait_job(:queued);
SELECT state, files_done = files_total AS all_files, attempts
FROM scipis_jobs WHERE id = :queued;
SELECT count(*) = :matches AS same_answers FROM scipis_search('error', 'jobs_logs', k => NULL);
SELECT scipis_wait_job(:queued, '0'::interval);
SELECT scipis_cancel_job(:queued) AS canceled_after_the_end;

-- A job queued and canceled before its transaction commits never runs.
BEGIN;
SELECT job AS doomed FROM scipis_index('jobs_logs', wait => false) \gset
SELECT scipis_cancel_job(:doomed);
COMMIT;
SELECT state, started IS NULL AS never_started, finished IS NOT NULL AS ended
FROM scipis_jobs WHERE id = :doomed;
SELECT scipis_wait_job(:doomed);

-- A job whose role is gone when it starts fails; its error shows to the
-- submitter, the collection's owner and superusers only.
CREATE ROLE scipis_job_sub IN ROLE pg_read_server_files;
CREATE ROLE scipis_job_other;
BEGIN;
SET LOCAL ROLE scipis_job_sub;
SELECT job AS orphan FROM scipis_index('jobs_logs', wait => false) \gset
RESET ROLE;
DROP ROLE scipis_job_sub;
COMMIT;
SELECT scipis_wait_job(:orphan);
SELECT state, regexp_replace(error, '[0-9]+', 'N', 'g') AS error, sqlstate,
       submitted_by IS NOT NULL AS has_role
FROM scipis_jobs WHERE id = :orphan;
SET ROLE scipis_job_other;
SELECT state, error IS NULL AS error_hidden, sqlstate IS NULL AS sqlstate_hidden
FROM scipis_jobs WHERE id = :orphan;
SELECT pg_temp.try(format('SELECT scipis_cancel_job(%s)', :queued));
SELECT pg_temp.try($$SELECT * FROM scipis_job$$);
RESET ROLE;

-- Bad input.
SELECT pg_temp.try($$SELECT scipis_cancel_job(-1)$$);
SELECT pg_temp.try($$SELECT scipis_wait_job(-1)$$);
SELECT pg_temp.try($$SELECT scipis_wait_job(NULL)$$);
SELECT pg_temp.try(format('SELECT scipis_wait_job(%s, %L)', :queued, '-1 second'));
SELECT scipis_cancel_job(NULL) IS NULL AS strict;
SELECT pg_temp.try(format('SELECT scipis_create_collection(%L, %L, %L)', 'jobs_bad', :'root',
                          '{"refresh_interval": "soon"}'));
SELECT pg_temp.try(format('SELECT scipis_create_collection(%L, %L, %L)', 'jobs_bad', :'root',
                          '{"refresh_interval": "10 ms"}'));
SELECT pg_temp.try(format('SELECT scipis_create_collection(%L, %L, %L)', 'jobs_bad', :'root',
                          '{"refresh_interval": 60}'));

-- A schedule: kept, shown as the next run (the launcher needs the preload).
SELECT scipis_create_collection('jobs_nightly', :'root', '{"refresh_interval": "1 day"}');
SELECT next_run - now() > '23 hours' AS next_run_tomorrow FROM scipis_collections
WHERE name = 'jobs_nightly';
SELECT next_run IS NULL AS unscheduled FROM scipis_collections WHERE name = 'jobs_logs';

-- Dropping a collection cancels its queued jobs.
BEGIN;
SELECT job AS dropped FROM scipis_index('jobs_nightly', wait => false) \gset
SELECT scipis_drop_collection('jobs_nightly');
COMMIT;
SELECT state, error FROM scipis_jobs WHERE id = :dropped;

-- A collection created in the caller's open transaction indexes too: the
-- worker gets what it needs from the caller, not from the table.
BEGIN;
SELECT scipis_create_collection('jobs_tx', :'root');
SELECT files > 0 AS indexed FROM scipis_index('jobs_tx');
SELECT count(*) > 0 AS answers FROM scipis_search('error', 'jobs_tx');
ROLLBACK;

SELECT scipis_drop_collection('jobs_logs');
DROP ROLE scipis_job_other;
