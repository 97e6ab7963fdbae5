// A recursive-descent parser; errors say where and what was expected.
//
//   expr    := and { OR and }
//   and     := unary { AND unary }
//   unary   := NOT unary | '(' expr ')' | compare
//   compare := var op const | const op var | var [NOT] BETWEEN const AND const
//   const   := [+|-] (number | INF | INFINITY | NAN)
//   var     := identifier | "quoted identifier"
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <strings.h>

#include "block_error.h"
#include "predicate.h"

namespace scipis::block {

namespace {

enum class Tok { End, Ident, Quoted, Number, Op, LParen, RParen, Plus, Minus };

struct Token {
	Tok kind;
	size_t pos;			   // 0-based
	std::string text;	   // identifier, operator or number text
};

class Parser {
public:
	Parser(std::string_view s, const std::vector<std::string> &vars) : s_(s), vars_(vars)
	{
		p_.uses.assign(vars.size(), false);
	}

	Predicate run()
	{
		if (s_.size() > (1u << 20))
			fail(SCIPIS_E_INVALID, "predicate is too long (%zu bytes)", s_.size());
		next();
		if (cur_.kind == Tok::End)
			fail(SCIPIS_E_INVALID, "predicate is empty");
		p_.root = expr(0);
		if (cur_.kind != Tok::End)
			error("expected AND, OR or the end of the predicate");
		return std::move(p_);
	}

private:
	[[noreturn]] void error(const char *expected)
	{
		std::string found = cur_.kind == Tok::End ? "the end" : "\"" + cur_.text + "\"";
		if (found.size() > 40)
			found = found.substr(0, 37) + "...";
		fail(SCIPIS_E_INVALID, "syntax error in predicate at position %zu: %s, found %s",
			 cur_.pos + 1, expected, found.c_str());
	}

	bool keyword(const char *kw) const
	{
		return cur_.kind == Tok::Ident && strcasecmp(cur_.text.c_str(), kw) == 0;
	}

	static bool ident_start(char c)
	{
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
	}
	static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
	static bool digit(char c) { return c >= '0' && c <= '9'; }

	void next()
	{
		while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' ||
								  s_[i_] == '\r'))
			i_++;
		cur_.pos = i_;
		cur_.text.clear();
		if (i_ >= s_.size()) {
			cur_.kind = Tok::End;
			return;
		}
		char c = s_[i_];
		if (ident_start(c)) {
			size_t j = i_;
			while (j < s_.size() && ident_char(s_[j]))
				j++;
			cur_.kind = Tok::Ident;
			cur_.text = std::string(s_.substr(i_, j - i_));
			i_ = j;
		} else if (c == '"') {
			size_t j = i_ + 1;
			for (;;) {
				if (j >= s_.size())
					fail(SCIPIS_E_INVALID,
						 "syntax error in predicate at position %zu: unterminated quoted name",
						 i_ + 1);
				if (s_[j] == '"') {
					if (j + 1 < s_.size() && s_[j + 1] == '"') {
						cur_.text += '"';
						j += 2;
						continue;
					}
					break;
				}
				cur_.text += s_[j++];
			}
			cur_.kind = Tok::Quoted;
			i_ = j + 1;
		} else if (digit(c) || (c == '.' && i_ + 1 < s_.size() && digit(s_[i_ + 1]))) {
			size_t j = i_;
			while (j < s_.size() && digit(s_[j]))
				j++;
			if (j < s_.size() && s_[j] == '.') {
				j++;
				while (j < s_.size() && digit(s_[j]))
					j++;
			}
			if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
				size_t k = j + 1;
				if (k < s_.size() && (s_[k] == '+' || s_[k] == '-'))
					k++;
				if (k < s_.size() && digit(s_[k])) {
					while (k < s_.size() && digit(s_[k]))
						k++;
					j = k;
				}
			}
			cur_.kind = Tok::Number;
			cur_.text = std::string(s_.substr(i_, j - i_));
			i_ = j;
			if (i_ < s_.size() && ident_char(s_[i_])) {
				while (i_ < s_.size() && ident_char(s_[i_]))
					cur_.text += s_[i_++];
				error("expected a number");
			}
		} else if (c == '(' || c == ')') {
			cur_.kind = c == '(' ? Tok::LParen : Tok::RParen;
			cur_.text = std::string(1, c);
			i_++;
		} else if (c == '+' || c == '-') {
			cur_.kind = c == '+' ? Tok::Plus : Tok::Minus;
			cur_.text = std::string(1, c);
			i_++;
		} else if (c == '<' || c == '>' || c == '=' || c == '!') {
			size_t j = i_ + 1;
			if (j < s_.size() && (s_[j] == '=' || (c == '<' && s_[j] == '>')))
				j++;
			cur_.kind = Tok::Op;
			cur_.text = std::string(s_.substr(i_, j - i_));
			i_ = j;
			if (cur_.text == "!")
				error("expected an operator");
		} else {
			cur_.kind = Tok::Op;
			cur_.text = std::string(1, c);
			error("unexpected character");
		}
	}

	int add(Node n)
	{
		if (p_.nodes.size() >= 100000)
			fail(SCIPIS_E_INVALID, "predicate has too many terms");
		p_.nodes.push_back(n);
		return (int)p_.nodes.size() - 1;
	}

	int expr(int depth)
	{
		if (depth > 200)
			fail(SCIPIS_E_INVALID, "predicate is nested too deeply");
		int l = conj(depth);
		while (keyword("or")) {
			next();
			int r = conj(depth);
			l = add(Node{Op::Or, -1, 0, 0, l, r});
		}
		return l;
	}

	int conj(int depth)
	{
		int l = unary(depth);
		while (keyword("and")) {
			next();
			int r = unary(depth);
			l = add(Node{Op::And, -1, 0, 0, l, r});
		}
		return l;
	}

	int unary(int depth)
	{
		if (depth > 200)
			fail(SCIPIS_E_INVALID, "predicate is nested too deeply");
		if (keyword("not")) {
			next();
			int c = unary(depth + 1);
			return add(Node{Op::Not, -1, 0, 0, c, -1});
		}
		if (cur_.kind == Tok::LParen) {
			next();
			int e = expr(depth + 1);
			if (cur_.kind != Tok::RParen)
				error("expected \")\"");
			next();
			return e;
		}
		return compare();
	}

	static bool reserved(const std::string &w)
	{
		static const char *const kw[] = {"and", "or", "not", "between", "nan", "inf", "infinity"};
		for (const char *k : kw)
			if (strcasecmp(w.c_str(), k) == 0)
				return true;
		return false;
	}

	bool at_variable() const
	{
		return cur_.kind == Tok::Quoted || (cur_.kind == Tok::Ident && !reserved(cur_.text));
	}

	bool at_constant() const
	{
		return cur_.kind == Tok::Number || cur_.kind == Tok::Plus || cur_.kind == Tok::Minus ||
			   keyword("nan") || keyword("inf") || keyword("infinity");
	}

	int variable()
	{
		for (size_t v = 0; v < vars_.size(); v++)
			if (vars_[v] == cur_.text) {
				p_.uses[v] = true;
				next();
				return (int)v;
			}
		std::string names;
		for (size_t v = 0; v < vars_.size() && v < 20; v++)
			names += (v ? ", " : "") + vars_[v];
		fail(SCIPIS_E_INVALID, "unknown variable \"%s\" in predicate at position %zu (the index has: %s)",
			 cur_.text.c_str(), cur_.pos + 1, names.c_str());
	}

	double constant()
	{
		bool neg = false;
		if (cur_.kind == Tok::Plus || cur_.kind == Tok::Minus) {
			neg = cur_.kind == Tok::Minus;
			next();
		}
		double v;
		if (keyword("nan"))
			v = std::nan("");
		else if (keyword("inf") || keyword("infinity"))
			v = INFINITY;
		else if (cur_.kind == Tok::Number) {
			errno = 0;
			char *end;
			v = strtod(cur_.text.c_str(), &end);
			if (*end != '\0')
				error("expected a number");
			if (errno == ERANGE && std::isinf(v))
				fail(SCIPIS_E_INVALID, "number \"%s\" at position %zu is out of range for double precision",
					 cur_.text.c_str(), cur_.pos + 1);
		} else
			error("expected a number");
		next();
		return neg ? -v : v;
	}

	bool comparison_op(Op *op)
	{
		if (cur_.kind != Tok::Op)
			return false;
		const std::string &t = cur_.text;
		if (t == "<") *op = Op::Lt;
		else if (t == "<=") *op = Op::Le;
		else if (t == ">") *op = Op::Gt;
		else if (t == ">=") *op = Op::Ge;
		else if (t == "=" || t == "==") *op = Op::Eq;
		else if (t == "<>" || t == "!=") *op = Op::Ne;
		else return false;
		return true;
	}

	static Op flip(Op op)
	{
		switch (op) {
		case Op::Lt: return Op::Gt;
		case Op::Le: return Op::Ge;
		case Op::Gt: return Op::Lt;
		case Op::Ge: return Op::Le;
		default: return op;
		}
	}

	int compare()
	{
		if (at_variable()) {
			int v = variable();
			bool negate = false;
			if (keyword("not")) {
				negate = true;
				next();
				if (!keyword("between"))
					error("expected BETWEEN after NOT");
			}
			if (keyword("between")) {
				next();
				double lo = constant();
				if (!keyword("and"))
					error("expected AND in BETWEEN");
				next();
				double hi = constant();
				int n = add(Node{Op::Between, v, lo, hi, -1, -1});
				return negate ? add(Node{Op::Not, -1, 0, 0, n, -1}) : n;
			}
			Op op;
			if (!comparison_op(&op))
				error("expected a comparison operator (<, <=, >, >=, =, <>) or BETWEEN");
			next();
			if (at_variable())
				error("expected a constant (comparing two variables is not supported)");
			double c = constant();
			return add(Node{op, v, c, 0, -1, -1});
		}
		if (at_constant()) {
			double c = constant();
			Op op;
			if (!comparison_op(&op))
				error("expected a comparison operator (<, <=, >, >=, =, <>)");
			next();
			if (!at_variable())
				error("expected a variable (comparing two constants is not supported)");
			int v = variable();
			return add(Node{flip(op), v, c, 0, -1, -1});
		}
		error("expected a variable, a constant, NOT or \"(\"");
	}

	std::string_view s_;
	const std::vector<std::string> &vars_;
	size_t i_ = 0;
	Token cur_{Tok::End, 0, {}};
	Predicate p_;
};

}  // namespace

Predicate parse_predicate(std::string_view text, const std::vector<std::string> &vars)
{
	return Parser(text, vars).run();
}

}  // namespace scipis::block
