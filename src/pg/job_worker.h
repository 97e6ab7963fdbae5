/* Inside a job worker: what job_worker.c shares with job_block.c. */
#ifndef SCIPIS_JOB_WORKER_H
#define SCIPIS_JOB_WORKER_H

#include "jobs.h"

#include "datatype/timestamp.h"

/* How a run ended. */
typedef enum
{
	RUN_SUCCEEDED,
	RUN_FAILED,
	RUN_CANCELED,
	RUN_INTERRUPTED,			/* SIGTERM: queued again, run after the restart */
	RUN_DEAD					/* the postmaster died */
} RunEnd;

typedef struct JobRun
{
	int64		job_id;
	int			kind;			/* JOB_* */
	ScipisCollection c;			/* collections; block indexes: only c.name */
	char	   *dir;			/* collections: the index directory */
	bool		refresh;		/* collections: scipis_refresh, not a full build */
	bool		merge;			/* collections: a merge of a build's segments */
	char	   *paths;			/* a refresh's paths (jsonb text), NULL: the whole tree */
	Oid			role;
	bool		target_locked;	/* claimed with its target's lock */
	/* Block indexes: the spec (jsonb text), and the file being built. */
	char	   *variables;
	char	   *block_options;
	bool		rebuild;
	char	   *path;			/* absolute; chosen by the caller when waited */
	char	   *file;			/* relative, when this worker chose it */
	RunEnd		end;
	int64		base_read;		/* read_bytes and busy_seconds of earlier attempts */
	double		base_seconds;
	scipis_build_stats stats;
	scipis_block_info block_info;
	ErrorData  *error;
} JobRun;

/* Lives as long as one job (a commit leaves CurrentMemoryContext at the top). */
extern MemoryContext job_cxt;

void		job_begin_tx(void);
/* The job's kind as scipis_job.kind names it. */
const char *job_kind_name(const JobRun *r);
void		job_commit_tx(void);
int			job_machine_cores(void);
void		job_check_role(JobRun *r, const char *what);
void		job_mark_running(JobRun *r, int64 files, int64 bytes);
bool		job_report_progress(JobRun *r, const scipis_build_progress *p, const char *phase);
bool		job_poll(JobRun *r, TimestampTz *last, const scipis_build_progress *p,
					 const char *phase, bool done);

/* job_block.c */
void		job_block_args(JobRun *r, const char *args);
RunEnd		job_build_block(JobRun *r, int threads);
char	   *job_block_result_json(const scipis_block_info *info);
void		job_block_abort(void);

#endif
