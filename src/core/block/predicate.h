// Predicates over the variables of one index: comparisons with constants
// combined with AND, OR, NOT. Values compare as doubles with IEEE 754
// semantics: every comparison but <> is false for NaN.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scipis::block {

enum class Op : uint8_t { Lt, Le, Gt, Ge, Eq, Ne, Between, And, Or, Not };

struct Node {
	Op op;
	int var = -1;		   // leaves
	double a = 0, b = 0;   // constant; BETWEEN a AND b
	int left = -1, right = -1;
};

struct Predicate {
	std::vector<Node> nodes;
	int root = -1;
	std::vector<bool> uses;	// per variable
};

// Throws Error(SCIPIS_E_INVALID) naming the 1-based character position.
Predicate parse_predicate(std::string_view text, const std::vector<std::string> &vars);

// What a partition holds for one variable: the non-NaN values lie in
// [min, max]; nans of the n values are NaN.
struct Summary {
	double min, max;
	uint64_t nans, n;
};

// Can the predicate be true for some element of a partition whose
// variables are summarised by s[var]? Never false when an element matches.
bool may_match(const Predicate &p, const Summary *s);

// Evaluates the predicate on n aligned elements: cols[var][i] (only the
// used variables need be present); mask[i] = 1 where it holds.
void evaluate(const Predicate &p, const double *const *cols, size_t n, uint8_t *mask);

}  // namespace scipis::block
