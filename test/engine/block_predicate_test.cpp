// Parser, exact evaluation and partition pruning of block predicates.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "block/block_error.h"
#include "block/predicate.h"

using namespace scipis::block;

namespace {

const std::vector<std::string> kVars = {"a", "b", "temp x"};

bool eval1(const std::string &pred, double a, double b = 0, double c = 0)
{
	Predicate p = parse_predicate(pred, kVars);
	double va[1] = {a}, vb[1] = {b}, vc[1] = {c};
	const double *cols[3] = {va, vb, vc};
	uint8_t m = 9;
	evaluate(p, cols, 1, &m);
	return m == 1;
}

std::string parse_error(const std::string &pred)
{
	try {
		parse_predicate(pred, kVars);
	} catch (const Error &e) {
		EXPECT_EQ(e.code(), SCIPIS_E_INVALID);
		return e.what();
	}
	return "";
}

}  // namespace

TEST(BlockPredicate, Comparisons)
{
	EXPECT_TRUE(eval1("a < 5", 4));
	EXPECT_FALSE(eval1("a < 5", 5));
	EXPECT_TRUE(eval1("a <= 5", 5));
	EXPECT_TRUE(eval1("a > -1.5e3", 0));
	EXPECT_TRUE(eval1("a >= .5", 0.5));
	EXPECT_TRUE(eval1("a = 2", 2));
	EXPECT_TRUE(eval1("a == 2", 2));
	EXPECT_TRUE(eval1("a <> 2", 3));
	EXPECT_TRUE(eval1("a != 2", 3));
	EXPECT_TRUE(eval1("5 > a", 4));	 // constant first flips
	EXPECT_FALSE(eval1("5 < a", 4));
	EXPECT_TRUE(eval1("a BETWEEN 1 AND 3", 3));
	EXPECT_FALSE(eval1("a between 3 and 1", 2));	// not symmetric, as SQL
	EXPECT_TRUE(eval1("a NOT BETWEEN 1 AND 3", 4));
	EXPECT_TRUE(eval1("a < 1 OR b > 2 AND b < 4", 5, 3));
	EXPECT_FALSE(eval1("(a < 1 OR b > 2) AND b < 4", 5, 5));
	EXPECT_TRUE(eval1("NOT NOT a = 1", 1));
	EXPECT_TRUE(eval1("\"temp x\" > 1", 0, 0, 2));
	EXPECT_TRUE(eval1("a < inf", 1e308));
	EXPECT_TRUE(eval1("a > -Infinity", -1e308));
}

TEST(BlockPredicate, NaNAndInfinity)
{
	double nan = std::nan("");
	for (const char *p : {"a < 5", "a <= 5", "a > 5", "a >= 5", "a = 5", "a BETWEEN -inf AND inf",
						  "a = nan", "a < nan", "a > -inf"})
		EXPECT_FALSE(eval1(p, nan)) << p;
	EXPECT_TRUE(eval1("a <> 5", nan));
	EXPECT_TRUE(eval1("a <> nan", 1));
	EXPECT_TRUE(eval1("NOT (a > 5)", nan));
	EXPECT_TRUE(eval1("a NOT BETWEEN 1 AND 2", nan));
	EXPECT_TRUE(eval1("a = inf", INFINITY));
	EXPECT_TRUE(eval1("a > 1e308", INFINITY));
	EXPECT_TRUE(eval1("a < -1e308", -INFINITY));
	EXPECT_FALSE(eval1("a < -inf", -INFINITY));
}

TEST(BlockPredicate, ErrorsNamePositions)
{
	EXPECT_NE(parse_error("").find("empty"), std::string::npos);
	EXPECT_NE(parse_error("a <").find("position 4"), std::string::npos);
	EXPECT_NE(parse_error("a < 5 AND").find("position 10"), std::string::npos);
	EXPECT_NE(parse_error("zz < 5").find("unknown variable \"zz\""), std::string::npos);
	EXPECT_NE(parse_error("a < b").find("two variables"), std::string::npos);
	EXPECT_NE(parse_error("1 < 2").find("two constants"), std::string::npos);
	EXPECT_NE(parse_error("(a < 5").find("\")\""), std::string::npos);
	EXPECT_NE(parse_error("a < 5)").find("position 6"), std::string::npos);
	EXPECT_NE(parse_error("a ~ 5").find("unexpected character"), std::string::npos);
	EXPECT_NE(parse_error("a < 1e999").find("out of range"), std::string::npos);
	EXPECT_NE(parse_error("a < 5x").find("expected a number"), std::string::npos);
	EXPECT_NE(parse_error("a BETWEEN 1 OR 2").find("AND in BETWEEN"), std::string::npos);
	EXPECT_NE(parse_error("a NOT < 1").find("BETWEEN after NOT"), std::string::npos);
	EXPECT_NE(parse_error("\"a < 1").find("unterminated"), std::string::npos);
	EXPECT_NE(parse_error(std::string(1000, '(') + "a < 1" + std::string(1000, ')')).find("deeply"),
			  std::string::npos);
}

// may_match must hold whenever some element of a partition matches.
TEST(BlockPredicate, PruningNeverDropsAHit)
{
	std::mt19937_64 rng(42);
	std::uniform_real_distribution<double> u(-10, 10);
	const char *leaves[] = {"<", "<=", ">", ">=", "=", "<>"};
	const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, 1.0, -1.0};
	auto constant = [&]() -> std::string {
		int k = (int)(rng() % 10);
		if (k == 0) return "nan";
		if (k == 1) return "inf";
		if (k == 2) return "-inf";
		return std::to_string((int)std::floor(u(rng)));
	};
	std::function<std::string(int)> gen = [&](int depth) -> std::string {
		int k = depth > 3 ? 0 : (int)(rng() % 5);
		std::string v = (rng() % 2) ? "a" : "b";
		if (k == 0)
			return v + " " + leaves[rng() % 6] + " " + constant();
		if (k == 1)
			return v + " BETWEEN " + constant() + " AND " + constant();
		if (k == 2)
			return "NOT (" + gen(depth + 1) + ")";
		return "(" + gen(depth + 1) + (k == 3 ? " AND " : " OR ") + gen(depth + 1) + ")";
	};
	int checked = 0;
	for (int trial = 0; trial < 3000; trial++) {
		Predicate p = parse_predicate(gen(0), kVars);
		size_t n = 1 + rng() % 8;
		std::vector<double> a(n), b(n), c(n, 0);
		for (size_t i = 0; i < n; i++) {
			a[i] = (rng() % 4 == 0) ? specials[rng() % 6] : std::floor(u(rng));
			b[i] = (rng() % 4 == 0) ? specials[rng() % 6] : std::floor(u(rng));
		}
		std::vector<uint8_t> m(n);
		const double *cols[3] = {a.data(), b.data(), c.data()};
		evaluate(p, cols, n, m.data());
		Summary s[3];
		for (int v = 0; v < 3; v++) {
			const std::vector<double> &x = v == 0 ? a : v == 1 ? b : c;
			s[v] = Summary{INFINITY, -INFINITY, 0, n};
			for (double d : x) {
				if (std::isnan(d)) {
					s[v].nans++;
					continue;
				}
				s[v].min = std::min(s[v].min, d);
				s[v].max = std::max(s[v].max, d);
			}
		}
		bool any = false;
		for (uint8_t x : m)
			any |= x;
		if (any) {
			EXPECT_TRUE(may_match(p, s));
			checked++;
		}
	}
	EXPECT_GT(checked, 500);
}

TEST(BlockPredicate, NaNOnlyPartitionsAreSkippedUnlessNaNCanMatch)
{
	Summary s[3] = {{INFINITY, -INFINITY, 10, 10}, {0, 1, 0, 10}, {0, 0, 0, 10}};
	EXPECT_FALSE(may_match(parse_predicate("a > 5", kVars), s));
	EXPECT_FALSE(may_match(parse_predicate("a = nan", kVars), s));
	EXPECT_TRUE(may_match(parse_predicate("a <> 5", kVars), s));
	EXPECT_TRUE(may_match(parse_predicate("NOT (a > 5)", kVars), s));
	// NaN never widens min/max: [0, 1] with NaNs excludes 5.
	Summary t[3] = {{0, 1, 3, 10}, {0, 1, 0, 10}, {0, 0, 0, 10}};
	EXPECT_FALSE(may_match(parse_predicate("a > 5", kVars), t));
	EXPECT_TRUE(may_match(parse_predicate("NOT (a < 5)", kVars), t));
	EXPECT_FALSE(may_match(parse_predicate("b > 5 OR a BETWEEN 2 AND 3", kVars), t));
}
