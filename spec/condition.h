// Serialization conditions: MSL's way to say when two accesses of one warp (block, grid) cannot
// be served by one transaction, and the evaluator that turns a condition and the lanes of one
// access into a number of transactions.
//
// The number of transactions is the number of groups a first-fit grouping makes: lanes are
// taken in order, each joins the first group none of whose members it conflicts with (the
// condition is true for the pair), or opens a new group. For the conditions GPUs need, this is
// the familiar count: distinct sectors for coalescing, the largest number of distinct words in
// one bank for bank conflicts, distinct addresses for broadcast. Those have fast paths; the
// general path evaluates the expression on every pair and is the reference they are tested
// against.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace memplace::spec {

enum class ConditionScope { Warp, Block, Grid };
std::string_view conditionScopeName(ConditionScope s);

enum class ConditionVar {
    Index1,
    Index2,
    Address1,
    Address2,
    Word1,
    Word2,
    Banks,
    BlockSize,
    WordSize,
};
std::string_view conditionVarName(ConditionVar v);

enum class ConditionOp {
    // binary
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    // unary
    Not,
    Neg,
};
std::string_view conditionOpSpelling(ConditionOp op);

/// An expression tree stored as a flat vector of nodes; children are indices into it. The walks
/// below recurse: the MSL parser bounds a condition to 256 nodes, hence its depth.
class ConditionExpr {
public:
    enum class Kind : uint8_t { Number, Variable, Unary, Binary };
    struct Node {
        Kind kind = Kind::Number;
        ConditionOp op = ConditionOp::Add;
        ConditionVar var = ConditionVar::Index1;
        int64_t value = 0;
        int32_t lhs = -1;
        int32_t rhs = -1;
        bool operator==(const Node&) const = default;
    };

    int32_t number(int64_t v);
    int32_t variable(ConditionVar v);
    int32_t unary(ConditionOp op, int32_t operand);
    int32_t binary(ConditionOp op, int32_t lhs, int32_t rhs);
    void setRoot(int32_t root) { root_ = root; }

    int32_t root() const { return root_; }
    const Node& node(int32_t i) const { return nodes_[static_cast<size_t>(i)]; }
    bool empty() const { return root_ < 0; }
    size_t size() const { return nodes_.size(); }

    /// MSL text with the parentheses precedence needs.
    std::string toString() const;
    /// Structural equality of the trees (node numbering may differ).
    bool sameAs(const ConditionExpr& other) const;

private:
    std::vector<Node> nodes_;
    int32_t root_ = -1;
};

struct SerialCondition {
    ConditionScope scope = ConditionScope::Warp;
    ConditionExpr expr;

    /// e.g. "warp{ address1 / 32 != address2 / 32 }"
    std::string toString() const;
    bool operator==(const SerialCondition& other) const {
        return scope == other.scope && expr.sameAs(other.expr);
    }
};

/// One lane's (or thread's) part of an access: the element index and the byte address.
struct LaneAccess {
    int64_t index = 0;
    int64_t address = 0;
};

/// The memory parameters a condition may name.
struct ConditionParams {
    int64_t banks = 32;
    int64_t blockSize = 32;
    int64_t wordSize = 4;
};

/// Evaluates `expr` for the pair (a, b). Integer arithmetic on 64 bits; comparisons and logic
/// give 0 or 1; division or remainder by zero gives 0 (documented in docs/msl.md).
int64_t evaluate(const ConditionExpr& expr, const LaneAccess& a, const LaneAccess& b,
                 const ConditionParams& params);

/// Counts transactions for one access under one condition. Compiled once per memory.
class TransactionCounter {
public:
    enum class Strategy : uint8_t {
        Never,        ///< the condition is constant false: one transaction
        Always,       ///< constant true: one transaction per lane
        Distinct,     ///< `k1 / d != k2 / d`: distinct keys (coalescing, broadcast)
        BankConflict, ///< `w1 != w2 && w1 % b == w2 % b`: most distinct words in one bank
        General,      ///< first-fit over pairs
    };

    TransactionCounter() = default;
    /// `condition` null: the memory never serializes (one transaction per access).
    TransactionCounter(const SerialCondition* condition, ConditionParams params);

    /// Transactions needed by the lanes of one access (0 for no lanes). Uses the fast path.
    uint32_t count(std::span<const LaneAccess> lanes) const;
    /// The reference: first-fit grouping evaluating the expression on pairs.
    uint32_t countGeneral(std::span<const LaneAccess> lanes) const;

    Strategy strategy() const { return strategy_; }
    ConditionScope scope() const { return scope_; }
    /// For Distinct and BankConflict: the lane variable the condition compares (its "1" form).
    ConditionVar keyVariable() const { return keyVar_; }
    /// For Distinct: the constant the key is divided by (1 when none).
    int64_t keyDivisor() const { return divisor_; }
    /// For BankConflict: the bank count the key is reduced modulo.
    int64_t bankModulus() const { return bankModulus_; }
    const ConditionParams& params() const { return params_; }

private:
    int64_t key(const LaneAccess& a) const;

    ConditionExpr expr_; ///< a copy: the counter outlives the Spec it came from
    ConditionParams params_;
    ConditionScope scope_ = ConditionScope::Warp;
    Strategy strategy_ = Strategy::Never;
    ConditionVar keyVar_ = ConditionVar::Address1; ///< for Distinct and BankConflict
    int64_t divisor_ = 1;                          ///< for Distinct
    int64_t bankModulus_ = 32;                     ///< for BankConflict
};

} // namespace memplace::spec
