// Access-site indices: `a[memplace::at<7>(i)]` tells the accessor which access site (the
// frontend's KernelInfo.sites[].id) performs the access. Only the tracing accessor uses the id;
// every other accessor reads `.i` and the id costs nothing.
#pragma once

#include "memplace/config.h"

namespace memplace {

/// An element index tagged with the access site that uses it.
template <int Site>
struct SiteIndex {
    static constexpr int site = Site;
    long long i; ///< element index (not bytes), relative to the array's first element
};

/// Tags an index with its site: `a[memplace::at<3>(i)]`. Several terms are the offset of a
/// pointer sum (`*(a + r * w + c)` is `a[memplace::at<3>(r * w, c)]`): each is converted to
/// the index type on its own before they are added, as the pointer arithmetic does, so that a
/// sum the terms' own type cannot hold (or a negative int plus an unsigned) stays exact.
template <int Site, class... I>
MEMPLACE_HD constexpr SiteIndex<Site> at(I... terms) {
    return SiteIndex<Site>{(0LL + ... + static_cast<long long>(terms))};
}

/// A subtracted term of a pointer sum: `*(a + n - i)` is `a[memplace::at<3>(n,
/// memplace::minus(i))]` (negated after the conversion: `-i` of an unsigned `i` would wrap).
template <class I>
MEMPLACE_HD constexpr long long minus(I i) {
    return -static_cast<long long>(i);
}

} // namespace memplace
