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

/// Tags an index with its site: `a[memplace::at<3>(i)]`.
template <int Site, class I>
MEMPLACE_HD constexpr SiteIndex<Site> at(I i) {
    return SiteIndex<Site>{static_cast<long long>(i)};
}

} // namespace memplace
