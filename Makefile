# scipis: the C++20 engine (src/core) and the PostgreSQL side (src/pg) in one
# scipis.so, built with PGXS.
EXTENSION = scipis
MODULE_big = scipis
EXTVERSION = 0.1

CORE_SRCS := $(sort $(wildcard src/core/*.cpp src/core/*/*.cpp))
PG_SRCS := $(sort $(wildcard src/pg/*.c))
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.c=.o)

# The install script is assembled from one file per concern.
SQL_PARTS := $(sort $(wildcard src/sql/*.sql))
DATA_built = sql/scipis--$(EXTVERSION).sql

REGRESS = $(patsubst sql/%.sql,%,$(filter-out sql/scipis--%,$(sort $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --outputdir=build/regress

WARN = -Wall -Wextra -Werror
PG_CPPFLAGS = -Isrc/core
# -MMD: each object gets a .d file of the headers it includes.
PG_CFLAGS = -MMD -MP $(WARN) -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
# NDEBUG: abseil's tables otherwise check every iterator and shuffle inserts.
ENGINE_CXXFLAGS = -std=c++20 -O2 -DNDEBUG $(WARN) -pthread
# -g1 after PostgreSQL's -g: line tables (backtraces, perf) at 3/4 of the
# compile time of full debug information.
PG_CXXFLAGS = -MMD -MP $(ENGINE_CXXFLAGS) -g1 -fno-strict-aliasing
# What the engine links with, everywhere it is linked.
ENGINE_LIBS = -lnuma -labsl_raw_hash_set -labsl_hash -labsl_city -labsl_low_level_hash \
	-lpthread
SHLIB_LINK = -lstdc++ $(ENGINE_LIBS)
EXTRA_CLEAN = build test/engine/engine_tests $(OBJS:.o=.d)

# JIT bitcode is not worth a clang dependency for this module.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

-include $(OBJS:.o=.d)

# The Loghub sample (with its LICENSE and CITATION) is installed beside the
# extension's files, where the server can read it: the regression suites
# and the demo index it from there.
SAMPLE_FILES := $(sort $(wildcard data/loghub-2k/*))
install: install-sample
install-sample:
	$(MKDIR_P) '$(DESTDIR)$(datadir)/scipis/loghub-2k'
	$(INSTALL_DATA) $(SAMPLE_FILES) '$(DESTDIR)$(datadir)/scipis/loghub-2k/'
uninstall: uninstall-sample
uninstall-sample:
	rm -rf '$(DESTDIR)$(datadir)/scipis'

# pg_regress writes its results under build/regress.
installcheck: | build/regress
build/regress:
	mkdir -p $@

sql/scipis--$(EXTVERSION).sql: $(SQL_PARTS)
	cat $^ > $@

# Engine unit tests: the engine objects linked with GoogleTest, no server.
# The test files are compiled as one unity file per core (scripts/unity.py,
# as the sanitizer build below does): 29 s instead of 99 s on two cores,
# a third of the test command's engine suite; file-local names must be
# unique across test/engine.
ENGINE_TEST_SRCS := $(sort $(wildcard test/engine/*.cpp))
TEST_PARTS := $(shell n=$$(nproc 2>/dev/null || echo 2); seq 0 $$((n - 1)))
ENGINE_TEST_UNITY := $(patsubst %,build/test/unity-%.cpp,$(TEST_PARTS))
ENGINE_TEST_OBJS := $(ENGINE_TEST_UNITY:.cpp=.o)
-include $(ENGINE_TEST_OBJS:.o=.d)
$(ENGINE_TEST_UNITY): build/test/unity-%.cpp: FORCE
	@mkdir -p $(dir $@)
	@python3 scripts/unity.py $@ $* $(words $(TEST_PARTS)) $(ENGINE_TEST_SRCS)
$(ENGINE_TEST_OBJS): build/test/unity-%.o: build/test/unity-%.cpp
	$(CXX) -std=c++20 -O1 -g1 -DNDEBUG $(WARN) -MMD -MP -Isrc/core -pthread -c $< -o $@
test/engine/engine_tests: $(CORE_SRCS:.cpp=.o) $(ENGINE_TEST_OBJS)
	$(CXX) -pthread -o $@ $(ENGINE_TEST_OBJS) $(CORE_SRCS:.cpp=.o) -lgtest -lgtest_main $(ENGINE_LIBS)

# One shard per core, side by side (scripts/gtest-shards.sh).
engine-check: test/engine/engine_tests
	bash scripts/gtest-shards.sh test/engine/engine_tests

# The same tests on an engine built with AddressSanitizer and UBSan: any
# out-of-bounds access, use after free, leak or undefined behaviour fails.
# The engine and the tests are each compiled as a few unity files, one per
# core (each file parsing its headers on its own took three times as
# long), so file-local names must be unique across src/core and across
# test/engine; the plain build above keeps one object per file, so each
# still compiles alone. The tests get ASan only. -g1: line tables, all a
# report's stack needs.
ASAN_SAN = -fsanitize=address -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_CXXFLAGS = -std=c++20 -O1 -g1 $(ASAN_SAN) $(WARN) -pthread -fno-strict-aliasing
ASAN_PARTS := $(shell n=$$(nproc 2>/dev/null || echo 2); seq 0 $$((n - 1)))
ASAN_UNITY := $(patsubst %,build/asan/unity-%.cpp,$(ASAN_PARTS))
ASAN_OBJS := $(ASAN_UNITY:.cpp=.o)
ASAN_TEST_UNITY := $(patsubst %,build/asan/test-unity-%.cpp,$(ASAN_PARTS))
ASAN_TEST_OBJS := $(ASAN_TEST_UNITY:.cpp=.o)
-include $(ASAN_OBJS:.o=.d) $(ASAN_TEST_OBJS:.o=.d)
# Rewritten only when the list of sources changes, so make stays incremental.
$(ASAN_UNITY): build/asan/unity-%.cpp: FORCE
	@mkdir -p $(dir $@)
	@python3 scripts/unity.py $@ $* $(words $(ASAN_PARTS)) $(CORE_SRCS)
$(ASAN_TEST_UNITY): build/asan/test-unity-%.cpp: FORCE
	@mkdir -p $(dir $@)
	@python3 scripts/unity.py $@ $* $(words $(ASAN_PARTS)) $(ENGINE_TEST_SRCS)
$(ASAN_OBJS): build/asan/unity-%.o: build/asan/unity-%.cpp
	$(CXX) $(ASAN_CXXFLAGS) -fsanitize=undefined -MMD -MP -Isrc/core -c $< -o $@
$(ASAN_TEST_OBJS): build/asan/test-unity-%.o: build/asan/test-unity-%.cpp
	$(CXX) $(ASAN_CXXFLAGS) -MMD -MP -Isrc/core -c $< -o $@
build/asan/engine_tests: $(ASAN_OBJS) $(ASAN_TEST_OBJS)
	$(CXX) $(ASAN_CXXFLAGS) -fsanitize=undefined -o $@ $(ASAN_TEST_OBJS) $(ASAN_OBJS) \
		-lgtest -lgtest_main $(ENGINE_LIBS)

# LeakSanitizer needs ptrace, which some containers forbid: probed first.
engine-asan: build/asan/engine_tests
	@if ASAN_OPTIONS=detect_leaks=1 build/asan/engine_tests --gtest_filter=-* >/dev/null 2>&1; \
	then leaks=1; else leaks=0; echo "LeakSanitizer cannot run here: leak checks off"; fi; \
	ASAN_OPTIONS=detect_leaks=$$leaks:abort_on_error=1 bash scripts/gtest-shards.sh build/asan/engine_tests

# Indexing through the engine alone, for profiling (bench/README.md).
bench/build/index_bench: $(CORE_SRCS:.cpp=.o) bench/engine/index_bench.cpp
	@mkdir -p bench/build
	$(CXX) $(ENGINE_CXXFLAGS) -Isrc/core -o $@ bench/engine/index_bench.cpp \
		$(CORE_SRCS:.cpp=.o) $(ENGINE_LIBS)

index-bench: bench/build/index_bench

# The token path and the TF-IDF index alone, one core each, and what memory
# costs on the machine (bench/README.md).
bench/build/%: bench/engine/%.cpp $(CORE_SRCS:.cpp=.o)
	@mkdir -p bench/build
	$(CXX) $(ENGINE_CXXFLAGS) -Isrc/core -o $@ $< \
		$(CORE_SRCS:.cpp=.o) $(ENGINE_LIBS)

engine-micro: bench/build/token_bench bench/build/index_replay bench/build/page_cost

.PHONY: FORCE install-sample uninstall-sample engine-check engine-asan index-bench engine-micro
