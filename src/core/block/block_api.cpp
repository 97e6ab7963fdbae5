// The door of the block engine: every entry point catches everything.
#include <cerrno>
#include <cstring>
#include <new>
#include <unistd.h>

#include "block_builder.h"
#include "block_scan.h"
#include "scipis_engine.h"
#include "util/door.h"

using namespace scipis::block;

struct scipis_block_build {
	Builder b;
	scipis_block_build(const char *path, const scipis_block_spec *spec) : b(path, spec) {}
};

struct scipis_block_index {
	std::unique_ptr<OpenIndex> ix;
};

struct scipis_block_scan {
	std::unique_ptr<Scan> s;
};


extern "C" {

scipis_block_build *scipis_block_build_start(const char *index_path, const scipis_block_spec *spec,
											 scipis_error *err)
{
	scipis_block_build *b = nullptr;
	if (scipis::guarded(err, [&] {
			if (!index_path || !spec)
				fail(SCIPIS_E_INVALID, "missing index path or spec");
			b = new scipis_block_build(index_path, spec);
			b->b.start();
		}) != 0) {
		delete b;
		return nullptr;
	}
	return b;
}

int scipis_block_build_wait(scipis_block_build *b, int timeout_ms)
{
	try {
		return b->b.wait(timeout_ms) ? 1 : 0;
	} catch (...) {
		return 1;	// finish reports what went wrong
	}
}

void scipis_block_build_cancel(scipis_block_build *b) { b->b.cancel(); }

int scipis_block_build_finish(scipis_block_build *b, scipis_block_info *info, scipis_error *err)
{
	int rc = scipis::guarded(err, [&] { b->b.finish(info); });
	delete b;
	return rc;
}

void scipis_block_build_abort(scipis_block_build *b)
{
	if (!b)
		return;
	b->b.cancel();
	try {
		delete b;
	} catch (...) {
	}
}

scipis_block_index *scipis_block_open(const char *index_path, scipis_error *err)
{
	scipis_block_index *h = nullptr;
	if (scipis::guarded(err, [&] {
			h = new scipis_block_index;
			h->ix = open_index(index_path ? index_path : "");
		}) != 0) {
		delete h;
		return nullptr;
	}
	return h;
}

void scipis_block_close(scipis_block_index *ix) { delete ix; }

void scipis_block_info_get(const scipis_block_index *ix, scipis_block_info *info)
{
	fill_info(ix->ix->d, info);
}

const char *scipis_block_var_name(const scipis_block_index *ix, int i)
{
	if (i < 0 || (size_t)i >= ix->ix->names.size())
		return nullptr;
	return ix->ix->names[i].c_str();
}

void scipis_block_coords(const scipis_block_index *ix, int64_t element, int64_t *coords)
{
	ix->ix->d.layout.coords(element, coords);
}

void scipis_block_read_opts_init(scipis_block_read_opts *o)
{
	o->max_gap = -1;
	o->max_read = 0;
	o->prune = SCIPIS_PRUNE_PARTITION;
	o->count_only = 0;
}

static void check_opts(const scipis_block_read_opts *o)
{
	if (o->prune != SCIPIS_PRUNE_PARTITION && o->prune != SCIPIS_PRUNE_BLOCK &&
		o->prune != SCIPIS_PRUNE_NONE)
		fail(SCIPIS_E_INVALID, "unknown pruning mode");
	if (o->max_read > (int64_t(1) << 30))
		fail(SCIPIS_E_INVALID, "max_read must be at most 1 GiB");
}

int scipis_block_plan(scipis_block_index *ix, const char *predicate,
					  const scipis_block_read_opts *opts, scipis_block_range_list *out,
					  scipis_error *err)
{
	out->ranges = nullptr;
	out->n = 0;
	out->owner = nullptr;
	return scipis::guarded(err, [&] {
			   check_opts(opts);
			   OpenIndex &oi = *ix->ix;
			   Predicate p = parse_predicate(predicate ? predicate : "", oi.names);
			   std::vector<Read> reads = plan_reads(oi, p, *opts, nullptr);
			   auto *v = new std::vector<scipis_block_range>();
			   std::unique_ptr<std::vector<scipis_block_range>> hold(v);
			   const Layout &l = oi.d.layout;
			   for (const Read &r : reads)
				   for (size_t k = 0; k < oi.d.vars.size(); k++) {
					   const VarInfo &vi = oi.d.vars[k];
					   int es = dtype_size(vi.dtype);
					   scipis_block_range x;
					   x.var = (int)k;
					   x.block = r.block;
					   x.first_partition = r.first_part;
					   x.partitions = r.cand;
					   x.offset = vi.header_bytes + (l.block_first_elem[r.block] + r.elem_begin) * es;
					   x.length = (r.elem_end - r.elem_begin) * es;
					   read_minmax(oi, p, *opts, r, (int)k, &x.min, &x.max);
					   v->push_back(x);
				   }
			   out->ranges = v->data();
			   out->n = v->size();
			   out->owner = hold.release();
		   });
}

void scipis_block_ranges_free(scipis_block_range_list *r)
{
	delete static_cast<std::vector<scipis_block_range> *>(r->owner);
	r->owner = nullptr;
	r->ranges = nullptr;
	r->n = 0;
}

scipis_block_scan *scipis_block_scan_start(scipis_block_index *ix, const char *predicate,
										   const scipis_block_read_opts *opts, scipis_error *err)
{
	scipis_block_scan *s = nullptr;
	if (scipis::guarded(err, [&] {
			check_opts(opts);
			Predicate p = parse_predicate(predicate ? predicate : "", ix->ix->names);
			s = new scipis_block_scan;
			s->s = std::make_unique<Scan>(*ix->ix, std::move(p), *opts);
		}) != 0) {
		delete s;
		return nullptr;
	}
	return s;
}

int scipis_block_scan_next(scipis_block_scan *s, scipis_block_hits *out, scipis_error *err)
{
	int rc = 0;
	if (scipis::guarded(err, [&] { rc = s->s->next(out) ? 1 : 0; }) != 0)
		return -1;
	return rc;
}

void scipis_block_scan_info_get(const scipis_block_scan *s, scipis_block_scan_info *info)
{
	*info = s->s->info;
}

void scipis_block_scan_end(scipis_block_scan *s) { delete s; }

int scipis_block_remove(const char *index_path, scipis_error *err)
{
	return scipis::guarded(err, [&] {
			   if (unlink(index_path) != 0 && errno != ENOENT)
				   fail(SCIPIS_E_IO, "could not remove \"%s\": %s", index_path, strerror(errno));
		   });
}

}  // extern "C"
