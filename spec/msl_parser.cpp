// Hand-written lexer and recursive-descent parser for MSL (grammar in docs/msl.md).
#include "spec/msl_syntax.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>

namespace memplace::spec::msl {

void Reporter::error(const SourceLocation& loc, std::string message) {
    if (++errors_ > kMaxErrors) {
        return;
    }
    diags_.error(loc, std::move(message), quote(loc.line, loc.column));
}

void Reporter::warning(const SourceLocation& loc, std::string message) {
    diags_.warning(loc, std::move(message), quote(loc.line, loc.column));
}

void Reporter::finish(std::string_view fileName) {
    if (errors_ > kMaxErrors) {
        diags_.error({std::string(fileName), 0, 0},
                     fmt::format("... and {} more errors", errors_ - kMaxErrors));
    }
}

std::string Reporter::quote(uint32_t line, uint32_t column) const {
    // The caret is placed by column from the line's start, so a long line keeps its beginning:
    // up to a little past the column, or nothing when the column is far in.
    constexpr size_t kMaxQuoted = 200;
    std::string_view text = lineOf(text_, line);
    if (text.size() <= kMaxQuoted) {
        return std::string(text);
    }
    if (column > kMaxQuoted - 40) {
        return {};
    }
    return std::string(text.substr(0, kMaxQuoted)) + " ...";
}

std::string Value::describe() const {
    switch (kind) {
    case Kind::Unknown:
        return "'?'";
    case Kind::Omitted:
        return "'om'";
    case Kind::NotApplicable:
        return "'na'";
    case Kind::Number:
        return unit.empty() ? "a number" : fmt::format("a number in {}", unit);
    case Kind::Identifier:
        return fmt::format("the name '{}'", text);
    case Kind::String:
        return "a string";
    case Kind::Tuple:
        return "a tuple";
    case Kind::Condition:
        return "a serialization condition";
    }
    return "a value";
}

namespace {

enum class Tok {
    End,
    Ident,
    Number,
    String,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Assign,
    Semi,
    Comma,
    Question,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    EqEq,
    NotEq,
    Less,
    LessEq,
    Greater,
    GreaterEq,
    AndAnd,
    OrOr,
    Bang,
    Invalid,
};

struct Token {
    Tok kind = Tok::End;
    std::string text;
    SourceLocation location;
    SourceLocation end; ///< just past the last character
};

std::string_view tokenName(Tok t) {
    switch (t) {
    case Tok::End:
        return "end of file";
    case Tok::Ident:
        return "a name";
    case Tok::Number:
        return "a number";
    case Tok::String:
        return "a string";
    case Tok::LBrace:
        return "'{'";
    case Tok::RBrace:
        return "'}'";
    case Tok::LParen:
        return "'('";
    case Tok::RParen:
        return "')'";
    case Tok::Assign:
        return "'='";
    case Tok::Semi:
        return "';'";
    case Tok::Comma:
        return "','";
    case Tok::Question:
        return "'?'";
    default:
        return "an operator";
    }
}

class Lexer {
public:
    Lexer(std::string_view text, std::string_view file, Reporter& reporter)
        : text_(text), file_(file), reporter_(reporter) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        while (true) {
            Token t = next();
            t.end = here();
            tokens.push_back(t);
            if (t.kind == Tok::End) {
                return tokens;
            }
        }
    }

private:
    char peek(size_t ahead = 0) const {
        return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
    }
    void advance() {
        if (text_[pos_] == '\n') {
            ++line_;
            col_ = 1;
        } else {
            ++col_;
        }
        ++pos_;
    }
    SourceLocation here() const { return {std::string(file_), line_, col_}; }

    void skipSpaceAndComments() {
        while (pos_ < text_.size()) {
            char c = peek();
            if (c == '#' || (c == '/' && peek(1) == '/')) {
                while (pos_ < text_.size() && peek() != '\n') {
                    advance();
                }
            } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
                advance();
            } else {
                return;
            }
        }
    }

    Token next() {
        skipSpaceAndComments();
        Token t;
        t.location = here();
        if (pos_ >= text_.size()) {
            t.kind = Tok::End;
            return t;
        }
        char c = peek();
        size_t start = pos_;
        if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
            while (std::isalnum(static_cast<unsigned char>(peek())) != 0 || peek() == '_' ||
                   peek() == '.') {
                advance();
            }
            t.kind = Tok::Ident;
            t.text = std::string(text_.substr(start, pos_ - start));
            return t;
        }
        if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
            (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))) != 0)) {
            skipNumber(c);
            t.kind = Tok::Number;
            t.text = std::string(text_.substr(start, pos_ - start));
            return t;
        }
        if (c == '"') {
            return lexString(std::move(t), start);
        }
        t.kind = lexOperator(c);
        t.text = std::string(text_.substr(start, pos_ - start));
        if (t.kind == Tok::Invalid) {
            bool printable = std::isprint(static_cast<unsigned char>(c)) != 0;
            reporter_.error(t.location, printable ? fmt::format("unexpected character '{}'", t.text)
                                                  : fmt::format("unexpected byte 0x{:02x}",
                                                                static_cast<unsigned char>(c)));
        }
        return t;
    }

    /// Moves past a number starting with `c`: hexadecimal (0x...), or decimal with an exponent.
    void skipNumber(char c) {
        if (c == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
            advance();
            advance();
            while (std::isxdigit(static_cast<unsigned char>(peek())) != 0) {
                advance();
            }
            return;
        }
        while (std::isdigit(static_cast<unsigned char>(peek())) != 0 || peek() == '.') {
            advance();
        }
        if ((peek() == 'e' || peek() == 'E') &&
            (std::isdigit(static_cast<unsigned char>(peek(1))) != 0 ||
             ((peek(1) == '-' || peek(1) == '+') &&
              std::isdigit(static_cast<unsigned char>(peek(2))) != 0))) {
            advance();
            advance();
            while (std::isdigit(static_cast<unsigned char>(peek())) != 0) {
                advance();
            }
        }
    }

    /// A string starting at `start` (its text without the quotes), Invalid when unterminated.
    Token lexString(Token t, size_t start) {
        advance();
        while (pos_ < text_.size() && peek() != '"' && peek() != '\n') {
            advance();
        }
        if (peek() != '"') {
            reporter_.error(t.location, "unterminated string");
            t.kind = Tok::Invalid;
            return t;
        }
        t.text = std::string(text_.substr(start + 1, pos_ - start - 1));
        advance();
        t.kind = Tok::String;
        return t;
    }

    /// Moves past the punctuation or operator starting with `c` (two characters for `==`,
    /// `!=`, `<=`, `>=`, `&&`, `||`) and returns its kind; Invalid for any other character.
    Tok lexOperator(char c) {
        if (auto single = singleCharToken(c)) {
            advance();
            return *single;
        }
        auto two = [&](char second, Tok yes, Tok no) {
            advance();
            if (peek() == second) {
                advance();
                return yes;
            }
            return no;
        };
        switch (c) {
        case '=':
            return two('=', Tok::EqEq, Tok::Assign);
        case '!':
            return two('=', Tok::NotEq, Tok::Bang);
        case '<':
            return two('=', Tok::LessEq, Tok::Less);
        case '>':
            return two('=', Tok::GreaterEq, Tok::Greater);
        case '&':
            return two('&', Tok::AndAnd, Tok::Invalid);
        case '|':
            return two('|', Tok::OrOr, Tok::Invalid);
        default:
            advance();
            return Tok::Invalid;
        }
    }

    static std::optional<Tok> singleCharToken(char c) {
        switch (c) {
        case '{':
            return Tok::LBrace;
        case '}':
            return Tok::RBrace;
        case '(':
            return Tok::LParen;
        case ')':
            return Tok::RParen;
        case ';':
            return Tok::Semi;
        case ',':
            return Tok::Comma;
        case '?':
            return Tok::Question;
        case '+':
            return Tok::Plus;
        case '-':
            return Tok::Minus;
        case '*':
            return Tok::Star;
        case '/':
            return Tok::Slash;
        case '%':
            return Tok::Percent;
        default:
            return std::nullopt;
        }
    }

    std::string_view text_;
    std::string_view file_;
    Reporter& reporter_;
    size_t pos_ = 0;
    uint32_t line_ = 1;
    uint32_t col_ = 1;
};

/// Thrown inside the parser to unwind to the nearest recovery point; never escapes parse().
struct SyntaxError {};

class Parser {
public:
    Parser(std::vector<Token> tokens, Reporter& reporter)
        : tokens_(std::move(tokens)), reporter_(reporter) {}

    SyntaxTree run() {
        SyntaxTree tree;
        while (cur().kind != Tok::End) {
            if (auto e = entry()) {
                tree.entries.push_back(std::move(*e));
            }
        }
        return tree;
    }

private:
    const Token& cur() const { return tokens_[pos_]; }
    const Token& ahead(size_t n) const { return tokens_[std::min(pos_ + n, tokens_.size() - 1)]; }
    Token take() {
        Token t = tokens_[pos_];
        previousEnd_ = t.end;
        if (pos_ + 1 < tokens_.size()) {
            ++pos_;
        }
        return t;
    }
    bool accept(Tok k) {
        if (cur().kind == k) {
            take();
            return true;
        }
        return false;
    }
    [[noreturn]] void fail(const std::string& message) {
        // Invalid tokens were reported by the lexer already.
        if (cur().kind != Tok::Invalid) {
            reporter_.error(cur().location, message);
        }
        throw SyntaxError{};
    }
    Token expect(Tok k, std::string_view context) {
        if (cur().kind != k) {
            fail(fmt::format("expected {} {}, found {}", tokenName(k), context, found()));
        }
        return take();
    }
    std::string found() const {
        switch (cur().kind) {
        case Tok::End:
            return "end of file";
        case Tok::Ident:
        case Tok::Number:
            return fmt::format("'{}'", cur().text);
        case Tok::String:
            return fmt::format("\"{}\"", cur().text);
        default:
            return fmt::format("'{}'", cur().text);
        }
    }

    /// Skips to just after the `}` that closes the entry being parsed (or to a new entry).
    void recoverEntry(int depth) {
        while (cur().kind != Tok::End) {
            if (cur().kind == Tok::LBrace) {
                ++depth;
            } else if (cur().kind == Tok::RBrace) {
                take();
                if (--depth <= 0) {
                    return;
                }
                continue;
            } else if (depth <= 1 && cur().kind == Tok::Ident && isEntryKeyword(cur().text) &&
                       (ahead(1).kind == Tok::LBrace || ahead(2).kind == Tok::LBrace)) {
                return;
            }
            take();
        }
    }

    static bool isEntryKeyword(std::string_view s) {
        return s == "processor" || s == "memory" || s == "place";
    }

    std::optional<Entry> entry() {
        Entry e;
        e.location = cur().location;
        try {
            Token kw = cur();
            if (kw.kind != Tok::Ident || !isEntryKeyword(kw.text)) {
                fail(fmt::format("expected 'processor', 'memory' or 'place', found {}", found()));
            }
            take();
            e.kind = kw.text == "processor" ? Entry::Kind::Processor
                     : kw.text == "memory"  ? Entry::Kind::Memory
                                            : Entry::Kind::Place;
            if (cur().kind == Tok::Ident) {
                e.nameLocation = cur().location;
                e.name = take().text;
            } else if (e.kind != Entry::Kind::Processor) {
                fail(fmt::format("expected a name after '{}', found {}", kw.text, found()));
            }
            expect(Tok::LBrace, fmt::format("to open {} '{}'", kw.text, e.name));
        } catch (const SyntaxError&) {
            recoverEntry(0);
            return std::nullopt;
        }
        while (cur().kind != Tok::RBrace) {
            if (cur().kind == Tok::End) {
                reporter_.error(cur().location,
                                fmt::format("missing '}}' to close the entry opened at line {}",
                                            e.location.line));
                return e;
            }
            try {
                e.fields.push_back(field());
            } catch (const SyntaxError&) {
                recoverField();
            }
        }
        take(); // '}'
        return e;
    }

    /// After a bad field: skip to its ';' (or stop before the entry's '}').
    void recoverField() {
        int depth = 0;
        while (cur().kind != Tok::End) {
            if (cur().kind == Tok::LBrace || cur().kind == Tok::LParen) {
                ++depth;
            } else if (cur().kind == Tok::RParen) {
                --depth;
            } else if (cur().kind == Tok::RBrace) {
                if (depth <= 0) {
                    return;
                }
                --depth;
            } else if (cur().kind == Tok::Semi && depth <= 0) {
                take();
                return;
            }
            take();
        }
    }

    Field field() {
        Field f;
        f.location = cur().location;
        if (cur().kind != Tok::Ident) {
            fail(fmt::format("expected a field name, found {}", found()));
        }
        f.name = take().text;
        expect(Tok::Assign, fmt::format("after '{}'", f.name));
        f.value = value();
        if (accept(Tok::Semi)) {
            return f;
        }
        // A forgotten ';' before the next field or the closing '}' costs no other field.
        bool nextFieldStarts = cur().kind == Tok::Ident && ahead(1).kind == Tok::Assign;
        if (nextFieldStarts || cur().kind == Tok::RBrace) {
            reporter_.error(previousEnd_,
                            fmt::format("expected ';' after the value of '{}'", f.name));
            return f;
        }
        fail(fmt::format("expected ';' after the value of '{}', found {}", f.name, found()));
    }

    Value value() {
        DepthGuard guard(*this);
        Value v;
        v.location = cur().location;
        switch (cur().kind) {
        case Tok::Question:
            take();
            v.kind = Value::Kind::Unknown;
            return v;
        case Tok::String:
            v.kind = Value::Kind::String;
            v.text = take().text;
            return v;
        case Tok::Minus:
        case Tok::Number:
            return number();
        case Tok::LParen: {
            take();
            v.kind = Value::Kind::Tuple;
            v.items.push_back(value());
            while (accept(Tok::Comma)) {
                v.items.push_back(value());
            }
            expect(Tok::RParen, "to close the tuple");
            return v;
        }
        case Tok::Ident: {
            std::string word = cur().text;
            if ((word == "warp" || word == "block" || word == "grid") &&
                ahead(1).kind == Tok::LBrace) {
                return condition();
            }
            take();
            if (word == "om") {
                v.kind = Value::Kind::Omitted;
            } else if (word == "na") {
                v.kind = Value::Kind::NotApplicable;
            } else {
                v.kind = Value::Kind::Identifier;
                v.text = word;
            }
            return v;
        }
        default:
            fail(fmt::format("expected a value, found {}", found()));
        }
    }

    Value number() {
        Value v;
        v.location = cur().location;
        v.kind = Value::Kind::Number;
        bool negative = accept(Tok::Minus);
        Token t = expect(Tok::Number, "after '-'");
        std::string_view s = t.text;
        bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
        bool decimal = !hex && s.find_first_of(".eE") != std::string_view::npos;
        if (decimal) {
            double d = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
            if (ec != std::errc{} || p != s.data() + s.size()) {
                reporter_.error(t.location, fmt::format("malformed number '{}'", s));
                throw SyntaxError{};
            }
            v.number = negative ? -d : d;
        } else {
            int64_t i = 0;
            auto digits = hex ? s.substr(2) : s;
            auto [p, ec] =
                std::from_chars(digits.data(), digits.data() + digits.size(), i, hex ? 16 : 10);
            if (ec == std::errc::result_out_of_range) {
                reporter_.error(t.location, fmt::format("number '{}' is too large", s));
                throw SyntaxError{};
            }
            if (ec != std::errc{} || p != digits.data() + digits.size()) {
                reporter_.error(t.location, fmt::format("malformed number '{}'", s));
                throw SyntaxError{};
            }
            v.isInteger = true;
            v.integer = negative ? -i : i;
            v.number = static_cast<double>(v.integer);
        }
        if (cur().kind == Tok::Ident && isUnit(cur().text)) {
            v.unit = take().text;
        }
        return v;
    }

    static bool isUnit(std::string_view s) {
        for (std::string_view u :
             {"B", "KB", "MB", "GB", "KiB", "MiB", "GiB", "MHz", "GHz", "cycles"}) {
            if (s == u) {
                return true;
            }
        }
        return false;
    }

    // ---- serialization conditions ----

    Value condition() {
        Value v;
        v.location = cur().location;
        v.kind = Value::Kind::Condition;
        std::string scope = take().text;
        v.condition.scope = scope == "warp"    ? ConditionScope::Warp
                            : scope == "block" ? ConditionScope::Block
                                               : ConditionScope::Grid;
        expect(Tok::LBrace, "after the condition's scope");
        ConditionExpr& e = v.condition.expr;
        e.setRoot(orExpr(e));
        expect(Tok::RBrace, "to close the condition");
        // Printing, comparing and evaluating recurse over the tree, and `a + a + ... + a` is a
        // left-deep tree as deep as it is long: bound its size, hence its depth.
        if (e.size() > kMaxConditionNodes) {
            reporter_.error(v.location,
                            fmt::format("serialization condition of {} operators and operands: "
                                        "at most {}",
                                        e.size(), kMaxConditionNodes));
            throw SyntaxError{};
        }
        return v;
    }

    int32_t orExpr(ConditionExpr& e) {
        int32_t l = andExpr(e);
        while (accept(Tok::OrOr)) {
            l = e.binary(ConditionOp::Or, l, andExpr(e));
        }
        return l;
    }
    int32_t andExpr(ConditionExpr& e) {
        int32_t l = equality(e);
        while (accept(Tok::AndAnd)) {
            l = e.binary(ConditionOp::And, l, equality(e));
        }
        return l;
    }
    int32_t equality(ConditionExpr& e) {
        int32_t l = relational(e);
        while (true) {
            if (accept(Tok::EqEq)) {
                l = e.binary(ConditionOp::Eq, l, relational(e));
            } else if (accept(Tok::NotEq)) {
                l = e.binary(ConditionOp::Ne, l, relational(e));
            } else {
                return l;
            }
        }
    }
    int32_t relational(ConditionExpr& e) {
        int32_t l = additive(e);
        while (true) {
            ConditionOp op{};
            switch (cur().kind) {
            case Tok::Less:
                op = ConditionOp::Lt;
                break;
            case Tok::LessEq:
                op = ConditionOp::Le;
                break;
            case Tok::Greater:
                op = ConditionOp::Gt;
                break;
            case Tok::GreaterEq:
                op = ConditionOp::Ge;
                break;
            default:
                return l;
            }
            take();
            l = e.binary(op, l, additive(e));
        }
    }
    int32_t additive(ConditionExpr& e) {
        int32_t l = multiplicative(e);
        while (true) {
            if (accept(Tok::Plus)) {
                l = e.binary(ConditionOp::Add, l, multiplicative(e));
            } else if (accept(Tok::Minus)) {
                l = e.binary(ConditionOp::Sub, l, multiplicative(e));
            } else {
                return l;
            }
        }
    }
    int32_t multiplicative(ConditionExpr& e) {
        int32_t l = unaryExpr(e);
        while (true) {
            ConditionOp op{};
            if (cur().kind == Tok::Star) {
                op = ConditionOp::Mul;
            } else if (cur().kind == Tok::Slash) {
                op = ConditionOp::Div;
            } else if (cur().kind == Tok::Percent) {
                op = ConditionOp::Mod;
            } else {
                return l;
            }
            Token opTok = take();
            int32_t r = unaryExpr(e);
            const auto& rn = e.node(r);
            if (op != ConditionOp::Mul && rn.kind == ConditionExpr::Kind::Number && rn.value == 0) {
                reporter_.error(opTok.location, "division by zero in a serialization condition");
            }
            l = e.binary(op, l, r);
        }
    }
    int32_t unaryExpr(ConditionExpr& e) {
        DepthGuard guard(*this);
        if (accept(Tok::Bang)) {
            return e.unary(ConditionOp::Not, unaryExpr(e));
        }
        if (accept(Tok::Minus)) {
            return e.unary(ConditionOp::Neg, unaryExpr(e));
        }
        return primary(e);
    }
    int32_t primary(ConditionExpr& e) {
        if (accept(Tok::LParen)) {
            int32_t inner = orExpr(e);
            expect(Tok::RParen, "to close '('");
            return inner;
        }
        if (cur().kind == Tok::Number) {
            Token t = take();
            int64_t value = 0;
            auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
            if (ec != std::errc{} || p != t.text.data() + t.text.size()) {
                reporter_.error(
                    t.location,
                    fmt::format("expected an integer in a condition, found '{}'", t.text));
                throw SyntaxError{};
            }
            return e.number(value);
        }
        if (cur().kind == Tok::Ident) {
            Token t = take();
            for (ConditionVar v :
                 {ConditionVar::Index1, ConditionVar::Index2, ConditionVar::Address1,
                  ConditionVar::Address2, ConditionVar::Word1, ConditionVar::Word2,
                  ConditionVar::Banks, ConditionVar::BlockSize, ConditionVar::WordSize}) {
                if (conditionVarName(v) == t.text) {
                    return e.variable(v);
                }
            }
            reporter_.error(t.location,
                            fmt::format("unknown name '{}' in a serialization condition (known: "
                                        "index1, index2, address1, address2, word1, word2, "
                                        "banks, blockSize, wordSize)",
                                        t.text));
            throw SyntaxError{};
        }
        fail(fmt::format("expected an operand, found {}", found()));
    }

    /// Nesting guard: deep parentheses must give an error, not a stack overflow.
    class DepthGuard {
    public:
        explicit DepthGuard(Parser& p) : p_(p) {
            if (++p_.depth_ > kMaxDepth) {
                --p_.depth_; // the destructor of a guard that throws does not run
                p_.fail(fmt::format("nesting deeper than {} levels", kMaxDepth));
            }
        }
        ~DepthGuard() { --p_.depth_; }
        DepthGuard(const DepthGuard&) = delete;
        DepthGuard& operator=(const DepthGuard&) = delete;

    private:
        Parser& p_;
    };
    static constexpr int kMaxDepth = 100;
    static constexpr size_t kMaxConditionNodes = 256;

    std::vector<Token> tokens_;
    size_t pos_ = 0;
    Reporter& reporter_;
    SourceLocation previousEnd_;
    int depth_ = 0;
};

} // namespace

SyntaxTree parse(std::string_view text, std::string_view fileName, Reporter& reporter) {
    Lexer lexer(text, fileName, reporter);
    Parser parser(lexer.run(), reporter);
    return parser.run();
}

} // namespace memplace::spec::msl
