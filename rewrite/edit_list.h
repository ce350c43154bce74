// Text edits over one buffer (internal to the rewriter): insertions and replacements by byte
// offset, applied in one pass. Nested constructs insert at the same offset (the opening of
// `memplace::at<3>(` and of `memplace::value(` at one place, several closing parentheses at
// another); the rank orders them so that an outer construct opens before and closes after an
// inner one.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace memplace::rewrite::detail {

class EditList {
public:
    /// Inserts `text` at `offset`. At one offset, insertions come out in increasing rank (then
    /// in the order they were made), before the text of a replacement that starts there.
    /// Openings use rank -(length of the construct they open), closings +(its length).
    void insert(std::size_t offset, std::string text, long rank = 0);
    /// Replaces [begin, end) with `text`.
    void replace(std::size_t begin, std::size_t end, std::string text);
    void append(const EditList& other);
    bool empty() const { return edits_.empty(); }

    /// The buffer with every edit applied. Overlapping replacements (or an insertion strictly
    /// inside a replaced range) are an internal error: `error` receives a description and the
    /// result is empty.
    std::string apply(const std::string& buffer, std::string* error) const;
    /// [begin, end) of the buffer with the edits inside it applied: replacements within the
    /// range, insertions at offsets in [begin, end). An edit that straddles a boundary is an
    /// error (`error` set, the result empty).
    std::string applyRange(const std::string& buffer, std::size_t begin, std::size_t end,
                           std::string* error) const;

private:
    struct Edit {
        std::size_t begin = 0;
        std::size_t end = 0; ///< == begin for an insertion
        std::string text;
        long rank = 0;
        std::size_t seq = 0;
    };
    std::vector<Edit> edits_;
};

} // namespace memplace::rewrite::detail
