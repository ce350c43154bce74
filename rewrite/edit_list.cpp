#include "rewrite/edit_list.h"

#include <fmt/format.h>

#include <algorithm>

namespace memplace::rewrite::detail {

void EditList::insert(std::size_t offset, std::string text, long rank) {
    edits_.push_back({offset, offset, std::move(text), rank, edits_.size()});
}

void EditList::replace(std::size_t begin, std::size_t end, std::string text) {
    edits_.push_back({begin, end, std::move(text), 0, edits_.size()});
}

void EditList::append(const EditList& other) {
    for (const Edit& e : other.edits_) {
        Edit c = e;
        c.seq = edits_.size();
        edits_.push_back(std::move(c));
    }
}

std::string EditList::apply(const std::string& buffer, std::string* error) const {
    std::vector<const Edit*> inserts;
    std::vector<const Edit*> replaces;
    for (const Edit& e : edits_) {
        (e.begin == e.end ? inserts : replaces).push_back(&e);
    }
    std::sort(inserts.begin(), inserts.end(), [](const Edit* a, const Edit* b) {
        return a->begin != b->begin ? a->begin < b->begin
                                    : (a->rank != b->rank ? a->rank < b->rank : a->seq < b->seq);
    });
    std::sort(replaces.begin(), replaces.end(),
              [](const Edit* a, const Edit* b) { return a->begin < b->begin; });
    for (std::size_t i = 0; i < replaces.size(); ++i) {
        const Edit* r = replaces[i];
        if (r->end > buffer.size() || r->begin > r->end) {
            *error = fmt::format("replacement [{}, {}) outside the buffer", r->begin, r->end);
            return {};
        }
        if (i + 1 < replaces.size() && replaces[i + 1]->begin < r->end) {
            *error = fmt::format("replacements [{}, {}) and [{}, {}) overlap", r->begin, r->end,
                                 replaces[i + 1]->begin, replaces[i + 1]->end);
            return {};
        }
    }
    for (const Edit* ins : inserts) {
        if (ins->begin > buffer.size()) {
            *error = fmt::format("insertion at {} outside the buffer", ins->begin);
            return {};
        }
        for (const Edit* r : replaces) {
            if (ins->begin > r->begin && ins->begin < r->end) {
                *error = fmt::format("insertion at {} inside the replacement [{}, {})", ins->begin,
                                     r->begin, r->end);
                return {};
            }
        }
    }
    std::string out;
    out.reserve(buffer.size() + buffer.size() / 4);
    std::size_t pos = 0;
    std::size_t ii = 0;
    std::size_t ri = 0;
    while (pos <= buffer.size()) {
        while (ii < inserts.size() && inserts[ii]->begin == pos) {
            out += inserts[ii]->text;
            ++ii;
        }
        if (ri < replaces.size() && replaces[ri]->begin == pos) {
            out += replaces[ri]->text;
            pos = replaces[ri]->end;
            ++ri;
            continue; // insertions at the replacement's end come next
        }
        if (pos == buffer.size()) {
            break;
        }
        std::size_t next = buffer.size();
        if (ii < inserts.size()) {
            next = std::min(next, inserts[ii]->begin);
        }
        if (ri < replaces.size()) {
            next = std::min(next, replaces[ri]->begin);
        }
        if (next == pos) {
            next = pos + 1; // cannot happen: both loops above consumed edits at pos
        }
        out.append(buffer, pos, next - pos);
        pos = next;
    }
    return out;
}

std::string EditList::applyRange(const std::string& buffer, std::size_t begin, std::size_t end,
                                 std::string* error) const {
    if (begin > end || end > buffer.size()) {
        *error = fmt::format("range [{}, {}) outside the buffer", begin, end);
        return {};
    }
    EditList sub;
    for (const Edit& e : edits_) {
        const bool insertion = e.begin == e.end;
        if (insertion ? (e.begin >= begin && e.begin < end) : (e.begin >= begin && e.end <= end)) {
            Edit c = e;
            c.begin -= begin;
            c.end -= begin;
            sub.edits_.push_back(std::move(c));
        } else if (!insertion && e.begin < end && e.end > begin) {
            *error = fmt::format("the replacement [{}, {}) straddles [{}, {})", e.begin, e.end,
                                 begin, end);
            return {};
        }
    }
    return sub.apply(buffer.substr(begin, end - begin), error);
}

} // namespace memplace::rewrite::detail
