// The block engine through its C door: build, reopen, plan, scan, damage.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "block/layout.h"
#include "scipis_engine.h"

using scipis::block::Layout;

namespace {

class TempDir {
public:
	TempDir()
	{
		char t[] = "/tmp/scipis_block_test_XXXXXX";
		path = mkdtemp(t);
	}
	~TempDir() { (void)!system(("rm -rf " + path).c_str()); }
	std::string path;
};

template <typename T>
void write_file(const std::string &path, const std::vector<T> &v, size_t header = 0)
{
	FILE *f = fopen(path.c_str(), "wb");
	ASSERT_TRUE(f);
	std::vector<char> h(header, 'H');
	if (header) fwrite(h.data(), 1, header, f);
	if (!v.empty()) fwrite(v.data(), sizeof(T), v.size(), f);
	fclose(f);
}

scipis_block_index *build(const std::string &ix, scipis_block_spec &spec, scipis_error *err)
{
	scipis_block_build *b = scipis_block_build_start(ix.c_str(), &spec, err);
	if (!b)
		return nullptr;
	while (!scipis_block_build_wait(b, 50)) {
	}
	scipis_block_info info;
	if (scipis_block_build_finish(b, &info, err) != 0)
		return nullptr;
	return scipis_block_open(ix.c_str(), err);
}

struct Hits {
	std::vector<int64_t> elements;
	std::vector<double> values;
};

Hits query(scipis_block_index *ix, const char *pred, scipis_block_prune prune = SCIPIS_PRUNE_PARTITION)
{
	scipis_block_read_opts o;
	scipis_block_read_opts_init(&o);
	o.prune = prune;
	scipis_error err;
	scipis_block_scan *s = scipis_block_scan_start(ix, pred, &o, &err);
	EXPECT_TRUE(s) << err.message;
	Hits h;
	if (!s)
		return h;
	scipis_block_hits b;
	int rc;
	scipis_block_info info;
	scipis_block_info_get(ix, &info);
	while ((rc = scipis_block_scan_next(s, &b, &err)) == 1)
		for (size_t i = 0; i < b.n; i++) {
			h.elements.push_back(b.elements[i]);
			for (int v = 0; v < info.n_vars; v++)
				h.values.push_back(b.values[i * info.n_vars + v]);
		}
	EXPECT_EQ(rc, 0) << err.message;
	scipis_block_scan_end(s);
	return h;
}

}  // namespace

TEST(BlockLayout, GlobalIndexesOfClippedBlocks)
{
	Layout l;
	l.init({5, 7, 3}, {2, 3, 2}, 4);
	EXPECT_EQ(l.n_blocks, 3 * 3 * 2);
	EXPECT_EQ(l.block_first_elem[l.n_blocks], 5 * 7 * 3);
	// Every global element appears exactly once in file order.
	std::vector<int> seen(l.elements, 0);
	for (int64_t b = 0; b < l.n_blocks; b++) {
		scipis::block::BlockMapper m(l, b);
		for (int64_t i = 0; i < l.block_elems(b); i++)
			seen[m.global(i)]++;
	}
	for (int s : seen)
		EXPECT_EQ(s, 1);
	int64_t c[3];
	l.coords(5 * 7 * 3 - 1, c);
	EXPECT_EQ(c[0], 4);
	EXPECT_EQ(c[1], 6);
	EXPECT_EQ(c[2], 2);
}

TEST(BlockLayout, RejectsBadShapes)
{
	Layout l;
	EXPECT_ANY_THROW(l.init({}, {}, 1));
	EXPECT_ANY_THROW(l.init({0}, {}, 1));
	EXPECT_ANY_THROW(l.init({-3}, {}, 1));
	EXPECT_ANY_THROW(l.init({4, 4}, {2}, 1));
	EXPECT_ANY_THROW(l.init({4}, {5}, 1));
	EXPECT_ANY_THROW(l.init({4}, {0}, 1));
	EXPECT_ANY_THROW(l.init({4}, {}, 0));
	EXPECT_ANY_THROW(l.init({int64_t(1) << 40, int64_t(1) << 40}, {}, 1));
}

TEST(BlockIndex, MatchesBruteForceAcrossLayoutsAndTypes)
{
	TempDir d;
	std::mt19937_64 rng(7);
	const int64_t shape[3] = {13, 11, 9};
	const int64_t bshape[3] = {4, 5, 9};
	size_t n = 13 * 11 * 9;
	// The file holds blocks in file order; write global values through the layout.
	Layout l;
	l.init({13, 11, 9}, {4, 5, 9}, 1);
	std::vector<double> global(n);
	for (size_t i = 0; i < n; i++)
		global[i] = (rng() % 17 == 0) ? NAN : (rng() % 31 == 0) ? INFINITY : std::floor(std::sin(i * 0.01) * 100);
	std::vector<double> f64(n);
	std::vector<int32_t> i32(n);
	std::vector<double> gi32(n);
	size_t k = 0;
	for (int64_t b = 0; b < l.n_blocks; b++) {
		scipis::block::BlockMapper m(l, b);
		for (int64_t i = 0; i < l.block_elems(b); i++, k++) {
			int64_t g = m.global(i);
			f64[k] = global[g];
			i32[k] = (int32_t)(g % 97) - 40;
			gi32[g] = i32[k];
		}
	}
	write_file(d.path + "/x.f64", f64, 16);
	write_file(d.path + "/y.i32", i32);
	scipis_block_var vars[2] = {{"y", (d.path + "/y.i32").c_str(), "int32", 0},
								{"x", (d.path + "/x.f64").c_str(), "float64", 16}};
	std::string p0 = d.path + "/x.f64", p1 = d.path + "/y.i32";
	vars[0].path = p1.c_str();
	vars[1].path = p0.c_str();
	scipis_block_spec spec{};
	spec.vars = vars;
	spec.n_vars = 2;
	spec.shape = shape;
	spec.n_shape = 3;
	spec.block_shape = bshape;
	spec.n_block_shape = 3;
	spec.partition_bytes = 8 * 7;	 // 7 elements, not a divisor of anything
	spec.threads = 3;
	scipis_error err;
	scipis_block_index *ix = build(d.path + "/ix/a.sbi", spec, &err);
	ASSERT_TRUE(ix) << err.message;
	EXPECT_STREQ(scipis_block_var_name(ix, 0), "x");	 // sorted by name
	EXPECT_STREQ(scipis_block_var_name(ix, 1), "y");

	const char *preds[] = {"x > 50", "x < -90 OR y = 3", "NOT (x > 0) AND y BETWEEN -5 AND 5",
						   "x = inf", "x <> 3", "NOT (x < 1e9)", "y > 100",
						   "x >= -inf AND NOT (y <> 7)"};
	for (const char *pr : preds) {
		for (auto prune : {SCIPIS_PRUNE_PARTITION, SCIPIS_PRUNE_BLOCK, SCIPIS_PRUNE_NONE}) {
			Hits h = query(ix, pr, prune);
			std::vector<int64_t> want;
			for (size_t g = 0; g < n; g++) {
				double x = global[g], y = gi32[g];
				bool m;
				std::string s = pr;
				if (s == "x > 50") m = x > 50;
				else if (s == "x < -90 OR y = 3") m = x < -90 || y == 3;
				else if (s == "NOT (x > 0) AND y BETWEEN -5 AND 5") m = !(x > 0) && y >= -5 && y <= 5;
				else if (s == "x = inf") m = x == INFINITY;
				else if (s == "x <> 3") m = !(x == 3);
				else if (s == "NOT (x < 1e9)") m = !(x < 1e9);
				else if (s == "y > 100") m = y > 100;
				else m = x >= -INFINITY && !(!(y == 7));
				if (m)
					want.push_back((int64_t)g);
			}
			std::vector<int64_t> got = h.elements;
			std::sort(got.begin(), got.end());
			EXPECT_EQ(got, want) << pr << " prune " << prune;
			for (size_t i = 0; i < h.elements.size(); i++) {
				double x = h.values[2 * i], y = h.values[2 * i + 1];
				int64_t g = h.elements[i];
				EXPECT_TRUE((std::isnan(x) && std::isnan(global[g])) || x == global[g]);
				EXPECT_EQ(y, gi32[g]);
			}
		}
	}
	scipis_block_close(ix);
}

TEST(BlockIndex, RangesCoalesceAndRespectLimits)
{
	TempDir d;
	std::vector<double> v(10000);
	for (size_t i = 0; i < v.size(); i++)
		v[i] = (double)i;
	write_file(d.path + "/v", v);
	std::string p = d.path + "/v";
	scipis_block_var var{"v", p.c_str(), "float64", 0};
	scipis_block_spec spec{};
	spec.vars = &var;
	spec.n_vars = 1;
	spec.partition_bytes = 800;	 // 100 elements
	scipis_error err;
	scipis_block_index *ix = build(d.path + "/v.sbi", spec, &err);
	ASSERT_TRUE(ix) << err.message;
	scipis_block_read_opts o;
	scipis_block_read_opts_init(&o);
	o.max_gap = 0;
	scipis_block_range_list r;
	ASSERT_EQ(scipis_block_plan(ix, "v BETWEEN 250 AND 649 OR v = 5000", &o, &r, &err), 0) << err.message;
	ASSERT_EQ(r.n, 2u);
	EXPECT_EQ(r.ranges[0].offset, 200 * 8);
	EXPECT_EQ(r.ranges[0].length, 500 * 8);
	EXPECT_EQ(r.ranges[0].partitions, 5);
	EXPECT_EQ(r.ranges[0].min, 200);
	EXPECT_EQ(r.ranges[0].max, 699);
	EXPECT_EQ(r.ranges[1].offset, 5000 * 8);
	scipis_block_ranges_free(&r);
	o.max_read = 1600;	// two partitions
	ASSERT_EQ(scipis_block_plan(ix, "v BETWEEN 250 AND 649", &o, &r, &err), 0);
	EXPECT_EQ(r.n, 3u);
	scipis_block_ranges_free(&r);
	scipis_block_read_opts_init(&o);	// default gap: 64 KiB reads through 43 partitions
	ASSERT_EQ(scipis_block_plan(ix, "v BETWEEN 250 AND 649 OR v = 5000", &o, &r, &err), 0);
	EXPECT_EQ(r.n, 1u);
	EXPECT_EQ(r.ranges[0].partitions, 6);
	scipis_block_ranges_free(&r);
	scipis_block_read_opts_init(&o);
	o.max_gap = 800 * 3;	// read through three partitions
	ASSERT_EQ(scipis_block_plan(ix, "v < 100 OR v BETWEEN 400 AND 450 OR v > 9850", &o, &r, &err), 0);
	EXPECT_EQ(r.n, 2u);
	EXPECT_EQ(r.ranges[0].length, 500 * 8);
	EXPECT_EQ(r.ranges[0].partitions, 2);
	scipis_block_ranges_free(&r);
	EXPECT_EQ(scipis_block_plan(ix, "v < ", &o, &r, &err), -1);
	EXPECT_EQ(err.code, SCIPIS_E_INVALID);
	scipis_block_close(ix);
}

TEST(BlockIndex, BadSpecsAreClearErrors)
{
	TempDir d;
	std::vector<float> v(100, 1.0f);
	write_file(d.path + "/f", v);
	std::string p = d.path + "/f";
	scipis_error err;
	auto try_build = [&](scipis_block_var var, const int64_t *shape, int nshape, int64_t pbytes) {
		scipis_block_spec spec{};
		spec.vars = &var;
		spec.n_vars = 1;
		spec.shape = shape;
		spec.n_shape = nshape;
		spec.partition_bytes = pbytes;
		scipis_block_index *ix = build(d.path + "/x.sbi", spec, &err);
		if (ix)
			scipis_block_close(ix);
		return ix != nullptr;
	};
	int64_t big[1] = {101}, ok[1] = {100}, neg[1] = {-1};
	EXPECT_FALSE(try_build({"f", p.c_str(), "float32", 0}, big, 1, 0));
	EXPECT_NE(std::string(err.message).find("need 404"), std::string::npos) << err.message;
	EXPECT_FALSE(try_build({"f", p.c_str(), "complex64", 0}, ok, 1, 0));
	EXPECT_NE(std::string(err.message).find("unknown dtype"), std::string::npos);
	EXPECT_FALSE(try_build({"f", p.c_str(), "float32", 0}, neg, 1, 0));
	EXPECT_EQ(err.code, SCIPIS_E_INVALID);
	EXPECT_FALSE(try_build({"f", p.c_str(), "float32", 0}, ok, 1, 2));
	EXPECT_NE(std::string(err.message).find("smaller than one element"), std::string::npos);
	EXPECT_FALSE(try_build({"f", p.c_str(), "float64", 4}, nullptr, 0, 0));	// 396 bytes
	EXPECT_NE(std::string(err.message).find("whole number"), std::string::npos);
	EXPECT_FALSE(try_build({"f", "/nonexistent/file", "float32", 0}, ok, 1, 0));
	EXPECT_EQ(err.code, SCIPIS_E_IO);
	EXPECT_FALSE(try_build({"f", "relative", "float32", 0}, ok, 1, 0));
	EXPECT_FALSE(try_build({"f", p.c_str(), "float32", -1}, ok, 1, 0));
	EXPECT_TRUE(try_build({"f", p.c_str(), "float32", 0}, nullptr, 0, 0));
}

TEST(BlockIndex, DamageIsDetectedAndNamed)
{
	TempDir d;
	std::vector<int64_t> v(50000);
	for (size_t i = 0; i < v.size(); i++)
		v[i] = (int64_t)i * 3;
	write_file(d.path + "/v", v);
	std::string p = d.path + "/v";
	scipis_block_var var{"v", p.c_str(), "int64", 0};
	scipis_block_spec spec{};
	spec.vars = &var;
	spec.n_vars = 1;
	spec.partition_bytes = 64;
	scipis_error err;
	std::string ixp = d.path + "/v.sbi";
	scipis_block_index *ix = build(ixp, spec, &err);
	ASSERT_TRUE(ix) << err.message;
	scipis_block_close(ix);
	struct stat st;
	ASSERT_EQ(stat(ixp.c_str(), &st), 0);
	std::vector<char> orig(st.st_size);
	FILE *f = fopen(ixp.c_str(), "rb");
	ASSERT_EQ(fread(orig.data(), 1, orig.size(), f), orig.size());
	fclose(f);
	// Flip one byte at a time in a spread of places; every one must be caught.
	for (size_t pos : {size_t(0), size_t(9), size_t(20), size_t(60), orig.size() / 2, orig.size() - 20,
					   orig.size() - 3}) {
		std::vector<char> bad = orig;
		bad[pos] ^= 0x40;
		FILE *g = fopen(ixp.c_str(), "wb");
		fwrite(bad.data(), 1, bad.size(), g);
		fclose(g);
		scipis_block_index *x = scipis_block_open(ixp.c_str(), &err);
		EXPECT_EQ(x, nullptr) << "byte " << pos;
		if (x)
			scipis_block_close(x);
		EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
		EXPECT_NE(std::string(err.message).find(ixp), std::string::npos) << err.message;
	}
	FILE *g = fopen(ixp.c_str(), "wb");
	fwrite(orig.data(), 1, orig.size() - 100, g);	 // truncated
	fclose(g);
	EXPECT_EQ(scipis_block_open(ixp.c_str(), &err), nullptr);
	EXPECT_EQ(err.code, SCIPIS_E_CORRUPT);
	unlink(ixp.c_str());
	EXPECT_EQ(scipis_block_open(ixp.c_str(), &err), nullptr);
	EXPECT_EQ(err.code, SCIPIS_E_NOT_INDEXED);
}

TEST(BlockIndex, ChangedDataFileIsRefused)
{
	TempDir d;
	std::vector<double> v(1000, 2.0);
	write_file(d.path + "/v", v);
	std::string p = d.path + "/v";
	scipis_block_var var{"v", p.c_str(), "float64", 0};
	scipis_block_spec spec{};
	spec.vars = &var;
	spec.n_vars = 1;
	scipis_error err;
	scipis_block_index *ix = build(d.path + "/v.sbi", spec, &err);
	ASSERT_TRUE(ix);
	scipis_block_close(ix);
	v.push_back(1);
	write_file(d.path + "/v", v);
	EXPECT_EQ(scipis_block_open((d.path + "/v.sbi").c_str(), &err), nullptr);
	EXPECT_EQ(err.code, SCIPIS_E_NOT_INDEXED);
	EXPECT_NE(std::string(err.message).find("changed"), std::string::npos);
}

TEST(BlockIndex, CancelStopsABuild)
{
	TempDir d;
	std::vector<double> v(size_t(1) << 23, 1.0);	 // 64 MiB
	write_file(d.path + "/v", v);
	std::string p = d.path + "/v";
	scipis_block_var var{"v", p.c_str(), "float64", 0};
	scipis_block_spec spec{};
	spec.vars = &var;
	spec.n_vars = 1;
	spec.threads = 1;
	scipis_error err;
	std::string ixp = d.path + "/v.sbi";
	scipis_block_build *b = scipis_block_build_start(ixp.c_str(), &spec, &err);
	ASSERT_TRUE(b);
	scipis_block_build_cancel(b);
	// Prompt means well within the bound, which allows for AddressSanitizer
	// and a loaded machine; the wait goes on past it so that the build is
	// always finished before it is freed.
	int waited = 0;
	while (!scipis_block_build_wait(b, 100)) waited++;
	EXPECT_LT(waited, 50) << "a cancel must stop the build promptly";
	scipis_block_info info;
	int rc = scipis_block_build_finish(b, &info, &err);
	if (rc != 0) {
		EXPECT_EQ(err.code, SCIPIS_E_CANCELED);
		EXPECT_NE(access(ixp.c_str(), F_OK), 0);
	}
}
