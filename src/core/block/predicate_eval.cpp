// Exact evaluation on values, and the conservative test on partition
// summaries that decides which partitions are read.
#include <cmath>
#include <cstring>
#include <memory>

#include "predicate.h"

namespace scipis::block {

namespace {

struct TF {
	bool t, f;	// some element can make it true / false
};

TF summary_leaf(const Node &n, const Summary &s)
{
	bool any = s.n > s.nans;	// some value is a number
	bool nan = s.nans > 0;
	double lo = s.min, hi = s.max, c = n.a;
	switch (n.op) {
	case Op::Lt: return {any && lo < c, nan || (any && !(hi < c))};
	case Op::Le: return {any && lo <= c, nan || (any && !(hi <= c))};
	case Op::Gt: return {any && hi > c, nan || (any && !(lo > c))};
	case Op::Ge: return {any && hi >= c, nan || (any && !(lo >= c))};
	case Op::Eq: {
		bool in = any && lo <= c && c <= hi;
		bool all = any && lo == c && hi == c;
		return {in, nan || (any && !all)};
	}
	case Op::Ne: {
		bool in = any && lo <= c && c <= hi;
		bool all = any && lo == c && hi == c;
		return {nan || (any && !all), in};
	}
	case Op::Between: {
		bool t = any && n.a <= n.b && hi >= n.a && lo <= n.b;
		bool all = any && lo >= n.a && hi <= n.b;
		return {t, nan || (any && !all)};
	}
	default: return {true, true};
	}
}

TF summary_eval(const Predicate &p, int i, const Summary *s)
{
	const Node &n = p.nodes[i];
	switch (n.op) {
	case Op::And: {
		TF l = summary_eval(p, n.left, s);
		TF r = summary_eval(p, n.right, s);
		return {l.t && r.t, l.f || r.f};
	}
	case Op::Or: {
		TF l = summary_eval(p, n.left, s);
		TF r = summary_eval(p, n.right, s);
		return {l.t || r.t, l.f && r.f};
	}
	case Op::Not: {
		TF c = summary_eval(p, n.left, s);
		return {c.f, c.t};
	}
	default: return summary_leaf(n, s[n.var]);
	}
}

template <typename F>
void leaf_loop(const double *x, size_t n, uint8_t *m, F f)
{
	for (size_t i = 0; i < n; i++)
		m[i] = f(x[i]) ? 1 : 0;
}

void leaf_eval(const Node &nd, const double *x, size_t n, uint8_t *m)
{
	double c = nd.a, d = nd.b;
	switch (nd.op) {
	case Op::Lt: leaf_loop(x, n, m, [c](double v) { return v < c; }); break;
	case Op::Le: leaf_loop(x, n, m, [c](double v) { return v <= c; }); break;
	case Op::Gt: leaf_loop(x, n, m, [c](double v) { return v > c; }); break;
	case Op::Ge: leaf_loop(x, n, m, [c](double v) { return v >= c; }); break;
	case Op::Eq: leaf_loop(x, n, m, [c](double v) { return v == c; }); break;
	case Op::Ne: leaf_loop(x, n, m, [c](double v) { return !(v == c); }); break;
	case Op::Between:
		leaf_loop(x, n, m, [c, d](double v) { return v >= c && v <= d; });
		break;
	default: break;
	}
}

void eval_node(const Predicate &p, int i, const double *const *cols, size_t n, uint8_t *m)
{
	const Node &nd = p.nodes[i];
	switch (nd.op) {
	case Op::And:
	case Op::Or: {
		eval_node(p, nd.left, cols, n, m);
		std::unique_ptr<uint8_t[]> r(new uint8_t[n]);
		eval_node(p, nd.right, cols, n, r.get());
		if (nd.op == Op::And)
			for (size_t k = 0; k < n; k++)
				m[k] &= r[k];
		else
			for (size_t k = 0; k < n; k++)
				m[k] |= r[k];
		break;
	}
	case Op::Not:
		eval_node(p, nd.left, cols, n, m);
		for (size_t k = 0; k < n; k++)
			m[k] ^= 1;
		break;
	default: leaf_eval(nd, cols[nd.var], n, m); break;
	}
}

}  // namespace

bool may_match(const Predicate &p, const Summary *s)
{
	return summary_eval(p, p.root, s).t;
}

void evaluate(const Predicate &p, const double *const *cols, size_t n, uint8_t *mask)
{
	eval_node(p, p.root, cols, n, mask);
}

}  // namespace scipis::block
