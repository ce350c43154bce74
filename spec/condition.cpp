#include "spec/condition.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

namespace memplace::spec {

std::string_view conditionScopeName(ConditionScope s) {
    switch (s) {
    case ConditionScope::Warp:
        return "warp";
    case ConditionScope::Block:
        return "block";
    case ConditionScope::Grid:
        return "grid";
    }
    return "warp";
}

std::string_view conditionVarName(ConditionVar v) {
    switch (v) {
    case ConditionVar::Index1:
        return "index1";
    case ConditionVar::Index2:
        return "index2";
    case ConditionVar::Address1:
        return "address1";
    case ConditionVar::Address2:
        return "address2";
    case ConditionVar::Word1:
        return "word1";
    case ConditionVar::Word2:
        return "word2";
    case ConditionVar::Banks:
        return "banks";
    case ConditionVar::BlockSize:
        return "blockSize";
    case ConditionVar::WordSize:
        return "wordSize";
    }
    return "?";
}

std::string_view conditionOpSpelling(ConditionOp op) {
    switch (op) {
    case ConditionOp::Add:
        return "+";
    case ConditionOp::Sub:
    case ConditionOp::Neg:
        return "-";
    case ConditionOp::Mul:
        return "*";
    case ConditionOp::Div:
        return "/";
    case ConditionOp::Mod:
        return "%";
    case ConditionOp::Eq:
        return "==";
    case ConditionOp::Ne:
        return "!=";
    case ConditionOp::Lt:
        return "<";
    case ConditionOp::Le:
        return "<=";
    case ConditionOp::Gt:
        return ">";
    case ConditionOp::Ge:
        return ">=";
    case ConditionOp::And:
        return "&&";
    case ConditionOp::Or:
        return "||";
    case ConditionOp::Not:
        return "!";
    }
    return "?";
}

// ---- building and printing -------------------------------------------------------------

int32_t ConditionExpr::number(int64_t v) {
    nodes_.push_back({Kind::Number, ConditionOp::Add, ConditionVar::Index1, v, -1, -1});
    return static_cast<int32_t>(nodes_.size() - 1);
}

int32_t ConditionExpr::variable(ConditionVar v) {
    nodes_.push_back({Kind::Variable, ConditionOp::Add, v, 0, -1, -1});
    return static_cast<int32_t>(nodes_.size() - 1);
}

int32_t ConditionExpr::unary(ConditionOp op, int32_t operand) {
    nodes_.push_back({Kind::Unary, op, ConditionVar::Index1, 0, operand, -1});
    return static_cast<int32_t>(nodes_.size() - 1);
}

int32_t ConditionExpr::binary(ConditionOp op, int32_t lhs, int32_t rhs) {
    nodes_.push_back({Kind::Binary, op, ConditionVar::Index1, 0, lhs, rhs});
    return static_cast<int32_t>(nodes_.size() - 1);
}

namespace {

/// Binding strength, higher binds tighter; matches the grammar in docs/msl.md.
int precedence(ConditionOp op) {
    switch (op) {
    case ConditionOp::Or:
        return 1;
    case ConditionOp::And:
        return 2;
    case ConditionOp::Eq:
    case ConditionOp::Ne:
        return 3;
    case ConditionOp::Lt:
    case ConditionOp::Le:
    case ConditionOp::Gt:
    case ConditionOp::Ge:
        return 4;
    case ConditionOp::Add:
    case ConditionOp::Sub:
        return 5;
    case ConditionOp::Mul:
    case ConditionOp::Div:
    case ConditionOp::Mod:
        return 6;
    case ConditionOp::Not:
    case ConditionOp::Neg:
        return 7;
    }
    return 0;
}

void print(const ConditionExpr& e, int32_t i, std::string& out) {
    const auto& n = e.node(i);
    switch (n.kind) {
    case ConditionExpr::Kind::Number:
        out += std::to_string(n.value);
        return;
    case ConditionExpr::Kind::Variable:
        out += conditionVarName(n.var);
        return;
    case ConditionExpr::Kind::Unary: {
        out += conditionOpSpelling(n.op);
        const auto& child = e.node(n.lhs);
        bool paren = child.kind == ConditionExpr::Kind::Binary ||
                     (child.kind == ConditionExpr::Kind::Number && child.value < 0);
        if (paren) {
            out += '(';
        }
        print(e, n.lhs, out);
        if (paren) {
            out += ')';
        }
        return;
    }
    case ConditionExpr::Kind::Binary: {
        int p = precedence(n.op);
        auto side = [&](int32_t child, bool right) {
            const auto& c = e.node(child);
            // All binary operators are left-associative: a right child of equal precedence
            // needs parentheses, a left one does not.
            bool paren = c.kind == ConditionExpr::Kind::Binary &&
                         (precedence(c.op) < p || (right && precedence(c.op) == p));
            if (paren) {
                out += '(';
            }
            print(e, child, out);
            if (paren) {
                out += ')';
            }
        };
        side(n.lhs, false);
        out += fmt::format(" {} ", conditionOpSpelling(n.op));
        side(n.rhs, true);
        return;
    }
    }
}

bool sameTree(const ConditionExpr& a, int32_t i, const ConditionExpr& b, int32_t j) {
    if (i < 0 || j < 0) {
        return i == j;
    }
    const auto& x = a.node(i);
    const auto& y = b.node(j);
    if (x.kind != y.kind) {
        return false;
    }
    switch (x.kind) {
    case ConditionExpr::Kind::Number:
        return x.value == y.value;
    case ConditionExpr::Kind::Variable:
        return x.var == y.var;
    case ConditionExpr::Kind::Unary:
        return x.op == y.op && sameTree(a, x.lhs, b, y.lhs);
    case ConditionExpr::Kind::Binary:
        return x.op == y.op && sameTree(a, x.lhs, b, y.lhs) && sameTree(a, x.rhs, b, y.rhs);
    }
    return false;
}

} // namespace

std::string ConditionExpr::toString() const {
    std::string out;
    if (root_ >= 0) {
        print(*this, root_, out);
    }
    return out;
}

bool ConditionExpr::sameAs(const ConditionExpr& other) const {
    return sameTree(*this, root_, other, other.root_);
}

std::string SerialCondition::toString() const {
    return fmt::format("{}{{ {} }}", conditionScopeName(scope), expr.toString());
}

// ---- evaluation ------------------------------------------------------------------------

namespace {

int64_t wordOf(const LaneAccess& a, const ConditionParams& p) {
    return p.wordSize == 0 ? 0 : a.address / p.wordSize;
}

int64_t variableValue(ConditionVar v, const LaneAccess& a, const LaneAccess& b,
                      const ConditionParams& p) {
    switch (v) {
    case ConditionVar::Index1:
        return a.index;
    case ConditionVar::Index2:
        return b.index;
    case ConditionVar::Address1:
        return a.address;
    case ConditionVar::Address2:
        return b.address;
    case ConditionVar::Word1:
        return wordOf(a, p);
    case ConditionVar::Word2:
        return wordOf(b, p);
    case ConditionVar::Banks:
        return p.banks;
    case ConditionVar::BlockSize:
        return p.blockSize;
    case ConditionVar::WordSize:
        return p.wordSize;
    }
    return 0;
}

// Wrapping arithmetic: the checker rejects nothing at run time, so overflow must be defined.
int64_t wrapAdd(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
int64_t wrapSub(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
int64_t wrapMul(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}
int64_t safeDiv(int64_t x, int64_t y) {
    if (y == 0 || (y == -1 && x == INT64_MIN)) {
        return y == 0 ? 0 : x;
    }
    return x / y;
}
int64_t safeMod(int64_t x, int64_t y) {
    if (y == 0 || y == -1) {
        return 0;
    }
    return x % y;
}

int64_t eval(const ConditionExpr& e, int32_t i, const LaneAccess& a, const LaneAccess& b,
             const ConditionParams& p) {
    const auto& n = e.node(i);
    switch (n.kind) {
    case ConditionExpr::Kind::Number:
        return n.value;
    case ConditionExpr::Kind::Variable:
        return variableValue(n.var, a, b, p);
    case ConditionExpr::Kind::Unary: {
        int64_t v = eval(e, n.lhs, a, b, p);
        return n.op == ConditionOp::Not ? static_cast<int64_t>(v == 0) : wrapSub(0, v);
    }
    case ConditionExpr::Kind::Binary:
        break;
    }
    // && and || short-circuit, as in C.
    if (n.op == ConditionOp::And) {
        return static_cast<int64_t>(eval(e, n.lhs, a, b, p) != 0 && eval(e, n.rhs, a, b, p) != 0);
    }
    if (n.op == ConditionOp::Or) {
        return static_cast<int64_t>(eval(e, n.lhs, a, b, p) != 0 || eval(e, n.rhs, a, b, p) != 0);
    }
    int64_t x = eval(e, n.lhs, a, b, p);
    int64_t y = eval(e, n.rhs, a, b, p);
    switch (n.op) {
    case ConditionOp::Add:
        return wrapAdd(x, y);
    case ConditionOp::Sub:
        return wrapSub(x, y);
    case ConditionOp::Mul:
        return wrapMul(x, y);
    case ConditionOp::Div:
        return safeDiv(x, y);
    case ConditionOp::Mod:
        return safeMod(x, y);
    case ConditionOp::Eq:
        return static_cast<int64_t>(x == y);
    case ConditionOp::Ne:
        return static_cast<int64_t>(x != y);
    case ConditionOp::Lt:
        return static_cast<int64_t>(x < y);
    case ConditionOp::Le:
        return static_cast<int64_t>(x <= y);
    case ConditionOp::Gt:
        return static_cast<int64_t>(x > y);
    case ConditionOp::Ge:
        return static_cast<int64_t>(x >= y);
    default:
        return 0;
    }
}

} // namespace

int64_t evaluate(const ConditionExpr& expr, const LaneAccess& a, const LaneAccess& b,
                 const ConditionParams& params) {
    return expr.empty() ? 0 : eval(expr, expr.root(), a, b, params);
}

// ---- recognising the common conditions -------------------------------------------------

namespace {

bool isFirst(ConditionVar v) {
    return v == ConditionVar::Index1 || v == ConditionVar::Address1 || v == ConditionVar::Word1;
}

ConditionVar partner(ConditionVar v) {
    switch (v) {
    case ConditionVar::Index1:
        return ConditionVar::Index2;
    case ConditionVar::Address1:
        return ConditionVar::Address2;
    case ConditionVar::Word1:
        return ConditionVar::Word2;
    case ConditionVar::Index2:
        return ConditionVar::Index1;
    case ConditionVar::Address2:
        return ConditionVar::Address1;
    case ConditionVar::Word2:
        return ConditionVar::Word1;
    default:
        return v;
    }
}

/// The value of a subtree that names no per-lane variable, or nullopt.
std::optional<int64_t> constantValue(const ConditionExpr& e, int32_t i, const ConditionParams& p) {
    const auto& n = e.node(i);
    switch (n.kind) {
    case ConditionExpr::Kind::Number:
        return n.value;
    case ConditionExpr::Kind::Variable:
        if (n.var == ConditionVar::Banks || n.var == ConditionVar::BlockSize ||
            n.var == ConditionVar::WordSize) {
            return variableValue(n.var, {}, {}, p);
        }
        return std::nullopt;
    case ConditionExpr::Kind::Unary:
        if (!constantValue(e, n.lhs, p)) {
            return std::nullopt;
        }
        return eval(e, i, {}, {}, p);
    case ConditionExpr::Kind::Binary:
        if (!constantValue(e, n.lhs, p) || !constantValue(e, n.rhs, p)) {
            return std::nullopt;
        }
        return eval(e, i, {}, {}, p);
    }
    return std::nullopt;
}

/// `v` or `v / d` with d a positive constant: the per-lane key of a Distinct condition.
struct Key {
    ConditionVar var;
    int64_t divisor;
};

std::optional<Key> matchKey(const ConditionExpr& e, int32_t i, const ConditionParams& p) {
    const auto& n = e.node(i);
    if (n.kind == ConditionExpr::Kind::Variable && !constantValue(e, i, p)) {
        return Key{n.var, 1};
    }
    if (n.kind == ConditionExpr::Kind::Binary && n.op == ConditionOp::Div) {
        const auto& l = e.node(n.lhs);
        auto d = constantValue(e, n.rhs, p);
        if (l.kind == ConditionExpr::Kind::Variable && !constantValue(e, n.lhs, p) && d && *d > 0) {
            return Key{l.var, *d};
        }
    }
    return std::nullopt;
}

/// `k1 != k2` where k2 is k1 with lane 2's variable (either order).
std::optional<Key> matchDistinct(const ConditionExpr& e, int32_t i, const ConditionParams& p) {
    const auto& n = e.node(i);
    if (n.kind != ConditionExpr::Kind::Binary || n.op != ConditionOp::Ne) {
        return std::nullopt;
    }
    auto l = matchKey(e, n.lhs, p);
    auto r = matchKey(e, n.rhs, p);
    if (!l || !r || l->divisor != r->divisor || partner(l->var) != r->var) {
        return std::nullopt;
    }
    return isFirst(l->var) ? *l : Key{r->var, r->divisor};
}

/// `w1 % b == w2 % b` (either order): same bank. Returns w1's variable and b.
std::optional<Key> matchSameBank(const ConditionExpr& e, int32_t i, const ConditionParams& p) {
    const auto& n = e.node(i);
    if (n.kind != ConditionExpr::Kind::Binary || n.op != ConditionOp::Eq) {
        return std::nullopt;
    }
    auto modOf = [&](int32_t j) -> std::optional<Key> {
        const auto& m = e.node(j);
        if (m.kind != ConditionExpr::Kind::Binary || m.op != ConditionOp::Mod) {
            return std::nullopt;
        }
        const auto& v = e.node(m.lhs);
        auto b = constantValue(e, m.rhs, p);
        if (v.kind != ConditionExpr::Kind::Variable || constantValue(e, m.lhs, p) || !b ||
            *b <= 0) {
            return std::nullopt;
        }
        return Key{v.var, *b};
    };
    auto l = modOf(n.lhs);
    auto r = modOf(n.rhs);
    if (!l || !r || l->divisor != r->divisor || partner(l->var) != r->var) {
        return std::nullopt;
    }
    return isFirst(l->var) ? *l : Key{r->var, r->divisor};
}

} // namespace

TransactionCounter::TransactionCounter(const SerialCondition* condition, ConditionParams params)
    : params_(params) {
    if (condition == nullptr || condition->expr.empty()) {
        strategy_ = Strategy::Never;
        return;
    }
    expr_ = condition->expr;
    scope_ = condition->scope;
    int32_t root = expr_.root();
    if (auto c = constantValue(expr_, root, params_)) {
        strategy_ = *c != 0 ? Strategy::Always : Strategy::Never;
        return;
    }
    if (auto k = matchDistinct(expr_, root, params_)) {
        strategy_ = Strategy::Distinct;
        keyVar_ = k->var;
        divisor_ = k->divisor;
        return;
    }
    const auto& n = expr_.node(root);
    if (n.kind == ConditionExpr::Kind::Binary && n.op == ConditionOp::And) {
        for (auto [a, b] : {std::pair{n.lhs, n.rhs}, std::pair{n.rhs, n.lhs}}) {
            auto differ = matchDistinct(expr_, a, params_);
            auto bank = matchSameBank(expr_, b, params_);
            if (differ && bank && differ->divisor == 1 && differ->var == bank->var) {
                strategy_ = Strategy::BankConflict;
                keyVar_ = bank->var;
                bankModulus_ = bank->divisor;
                return;
            }
        }
    }
    strategy_ = Strategy::General;
}

int64_t TransactionCounter::key(const LaneAccess& a) const {
    return variableValue(keyVar_, a, a, params_);
}

uint32_t TransactionCounter::count(std::span<const LaneAccess> lanes) const {
    if (lanes.empty()) {
        return 0;
    }
    switch (strategy_) {
    case Strategy::Never:
        return 1;
    case Strategy::Always:
        return static_cast<uint32_t>(lanes.size());
    case Strategy::Distinct: {
        // Small sets (a warp) are the common case: sort a stack copy of the keys.
        std::array<int64_t, 64> small{};
        std::vector<int64_t> large;
        std::span<int64_t> keys;
        if (lanes.size() <= small.size()) {
            keys = std::span<int64_t>(small.data(), lanes.size());
        } else {
            large.resize(lanes.size());
            keys = large;
        }
        for (size_t i = 0; i < lanes.size(); ++i) {
            keys[i] = safeDiv(key(lanes[i]), divisor_);
        }
        std::sort(keys.begin(), keys.end());
        return static_cast<uint32_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
    }
    case Strategy::BankConflict: {
        // Distinct words, then the largest count of them sharing one bank.
        std::vector<int64_t> words(lanes.size());
        for (size_t i = 0; i < lanes.size(); ++i) {
            words[i] = key(lanes[i]);
        }
        std::sort(words.begin(), words.end());
        words.erase(std::unique(words.begin(), words.end()), words.end());
        for (auto& w : words) {
            w = safeMod(w, bankModulus_);
        }
        std::sort(words.begin(), words.end());
        uint32_t best = 0;
        for (size_t i = 0; i < words.size();) {
            size_t j = i;
            while (j < words.size() && words[j] == words[i]) {
                ++j;
            }
            best = std::max(best, static_cast<uint32_t>(j - i));
            i = j;
        }
        return best;
    }
    case Strategy::General:
        return countGeneral(lanes);
    }
    return countGeneral(lanes);
}

uint32_t TransactionCounter::countGeneral(std::span<const LaneAccess> lanes) const {
    if (lanes.empty()) {
        return 0;
    }
    if (expr_.empty()) {
        return 1;
    }
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < lanes.size(); ++i) {
        bool placed = false;
        for (auto& g : groups) {
            bool conflict = std::any_of(g.begin(), g.end(), [&](size_t j) {
                return evaluate(expr_, lanes[i], lanes[j], params_) != 0 ||
                       evaluate(expr_, lanes[j], lanes[i], params_) != 0;
            });
            if (!conflict) {
                g.push_back(i);
                placed = true;
                break;
            }
        }
        if (!placed) {
            groups.push_back({i});
        }
    }
    return static_cast<uint32_t>(groups.size());
}

} // namespace memplace::spec
