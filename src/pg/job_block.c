/*
 * Block index jobs in a job worker. Waited on, the worker only builds the
 * file its caller named and the caller records it; queued, the worker
 * picks the file, builds it and records it in its own transaction as the
 * role that queued the job.
 */
#include "job_worker.h"

#include <unistd.h>

#include "block_pg.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

static scipis_block_build *current = NULL;

/* The job row's args: {"variables": ..., "options": ..., "rebuild": bool}. */
void
job_block_args(JobRun *r, const char *args)
{
	Jsonb	   *jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(args)));
	JsonbValue *v;
	JsonbValue	key;

	key.type = jbvString;
#define FIELD(name) (key.val.string.val = (name), key.val.string.len = strlen(name), \
					 findJsonbValueFromContainer(&jb->root, JB_FOBJECT, &key))
	v = FIELD("variables");
	r->variables = v && v->type == jbvBinary
		? JsonbToCString(NULL, v->val.binary.data, v->val.binary.len) : pstrdup("null");
	v = FIELD("options");
	r->block_options = v && v->type == jbvBinary
		? JsonbToCString(NULL, v->val.binary.data, v->val.binary.len) : pstrdup("{}");
	v = FIELD("rebuild");
	r->rebuild = v != NULL && v->type == jbvBool && v->val.boolean;
#undef FIELD
}

char *
job_block_result_json(const scipis_block_info *info)
{
	return psprintf("{\"partitions\": " UINT64_FORMAT ", \"blocks\": " UINT64_FORMAT
					", \"bytes_indexed\": " UINT64_FORMAT ", \"index_bytes\": " UINT64_FORMAT
					", \"seconds\": %.6f}",
					(uint64) info->partitions, (uint64) info->blocks,
					(uint64) info->bytes_indexed, (uint64) info->index_bytes,
					info->build_seconds);
}

void
job_block_abort(void)
{
	if (current != NULL)
		scipis_block_build_abort(current);
	current = NULL;
}

static Jsonb *
parse(const char *text)
{
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/* As the job's role: records the built file (the old one goes at commit). */
static void
record(JobRun *r)
{
	Oid			save_user;
	int			save_sec;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(r->role, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		if (r->rebuild)
		{
			BlockEntry	e;

			block_lookup(NULL, r->c.name, &e);
			block_check_owner(&e);
			block_store(NULL, false, r->c.name, parse(r->variables), parse(r->block_options),
						r->file, &r->block_info);
			block_file_dropped(block_full_path(e.index_file));
		}
		else
		{
			if (block_index_exists(NULL, r->c.name))
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_OBJECT),
						 errmsg("block index \"%s\" already exists", r->c.name)));
			block_store(NULL, true, r->c.name, parse(r->variables), parse(r->block_options),
						r->file, &r->block_info);
		}
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
}

RunEnd
job_build_block(JobRun *r, int threads)
{
	BlockSpecPg spec;
	scipis_error err;
	TimestampTz last = 0;
	bool		queued = r->path == NULL;

	job_begin_tx();
	job_check_role(r, queued && r->rebuild ? "rebuild a block index" : "create a block index");
	job_mark_running(r, -1, -1);
	{
		MemoryContext old = MemoryContextSwitchTo(job_cxt);

		block_parse_spec(parse(r->variables), parse(r->block_options), &spec);
		if (queued)
		{
			r->file = block_next_file(NULL);
			r->path = block_full_path(r->file);
		}
		MemoryContextSwitchTo(old);
	}
	job_commit_tx();
	if (spec.spec.threads == 0 || spec.spec.threads > threads)
		spec.spec.threads = threads;

	current = scipis_block_build_start(r->path, &spec.spec, &err);
	if (current == NULL)
		block_raise(r->c.name, &err);
	r->end = RUN_SUCCEEDED;
	for (;;)
	{
		bool		done = scipis_block_build_wait(current, 100);

		if (job_poll(r, &last, NULL, "indexing", done))
			break;
	}
	if (r->end != RUN_SUCCEEDED)
	{
		job_block_abort();
		if (r->end == RUN_DEAD)
			proc_exit(1);
		return r->end;
	}
	if (scipis_block_build_finish(current, &r->block_info, &err) != 0)
	{
		current = NULL;
		block_raise(r->c.name, &err);
	}
	current = NULL;
	if (!queued)
		return RUN_SUCCEEDED;

	/* A file nothing records is removed. */
	PG_TRY();
	{
		job_begin_tx();
		record(r);
		job_commit_tx();
	}
	PG_CATCH();
	{
		(void) unlink(r->path);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return RUN_SUCCEEDED;
}
