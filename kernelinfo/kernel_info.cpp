#include "kernelinfo/kernel_info.h"

#include <fmt/format.h>

namespace memplace::kernelinfo {

namespace {

template <typename Enum, size_t N>
std::optional<Enum> parseByName(std::string_view name, const std::array<Enum, N>& all,
                                std::string_view (*nameOf)(Enum)) {
    for (Enum e : all) {
        if (nameOf(e) == name) {
            return e;
        }
    }
    return std::nullopt;
}

} // namespace

std::string_view arrayKindName(ArrayKind k) {
    switch (k) {
    case ArrayKind::Parameter:
        return "parameter";
    case ArrayKind::DeviceGlobal:
        return "device";
    case ArrayKind::ConstantGlobal:
        return "constant";
    case ArrayKind::Shared:
        return "shared";
    case ArrayKind::TextureObject:
        return "texture_object";
    }
    return "parameter";
}

std::optional<ArrayKind> parseArrayKind(std::string_view name) {
    static constexpr std::array kAll = {ArrayKind::Parameter, ArrayKind::DeviceGlobal,
                                        ArrayKind::ConstantGlobal, ArrayKind::Shared,
                                        ArrayKind::TextureObject};
    return parseByName(name, kAll, arrayKindName);
}

Place homePlace(ArrayKind k) {
    switch (k) {
    case ArrayKind::Parameter:
    case ArrayKind::DeviceGlobal:
        return Place::Global;
    case ArrayKind::ConstantGlobal:
        return Place::Constant;
    case ArrayKind::Shared:
        return Place::Shared;
    case ArrayKind::TextureObject:
        return Place::Texture;
    }
    return Place::Global;
}

std::string_view indexKindName(IndexKind k) {
    switch (k) {
    case IndexKind::Affine:
        return "affine";
    case IndexKind::Indirect:
        return "indirect";
    case IndexKind::Unknown:
        return "unknown";
    }
    return "unknown";
}

std::optional<IndexKind> parseIndexKind(std::string_view name) {
    static constexpr std::array kAll = {IndexKind::Affine, IndexKind::Indirect, IndexKind::Unknown};
    return parseByName(name, kAll, indexKindName);
}

std::string_view siteFormName(SiteForm f) {
    switch (f) {
    case SiteForm::Subscript:
        return "subscript";
    case SiteForm::Deref:
        return "deref";
    case SiteForm::PointerOffset:
        return "pointer";
    case SiteForm::TextureFetch:
        return "fetch";
    }
    return "subscript";
}

std::optional<SiteForm> parseSiteForm(std::string_view name) {
    static constexpr std::array kAll = {SiteForm::Subscript, SiteForm::Deref,
                                        SiteForm::PointerOffset, SiteForm::TextureFetch};
    return parseByName(name, kAll, siteFormName);
}

std::string_view hazardKindName(HazardKind k) {
    switch (k) {
    case HazardKind::PointerArithmetic:
        return "pointer_arithmetic";
    case HazardKind::Stored:
        return "stored";
    case HazardKind::Escapes:
        return "escapes";
    case HazardKind::Aliasing:
        return "aliasing";
    case HazardKind::Reinterpreted:
        return "reinterpreted";
    case HazardKind::Macro:
        return "macro";
    case HazardKind::Unknown:
        return "unknown";
    }
    return "unknown";
}

std::optional<HazardKind> parseHazardKind(std::string_view name) {
    static constexpr std::array kAll = {HazardKind::PointerArithmetic,
                                        HazardKind::Stored,
                                        HazardKind::Escapes,
                                        HazardKind::Aliasing,
                                        HazardKind::Reinterpreted,
                                        HazardKind::Macro,
                                        HazardKind::Unknown};
    return parseByName(name, kAll, hazardKindName);
}

const ArrayInfo* KernelInfo::findArray(std::string_view n) const {
    for (const auto& a : arrays) {
        if (a.name == n) {
            return &a;
        }
    }
    return nullptr;
}

ArrayInfo* KernelInfo::findArray(std::string_view n) {
    for (auto& a : arrays) {
        if (a.name == n) {
            return &a;
        }
    }
    return nullptr;
}

std::string formatLocation(const SourceLocation& loc, std::string_view mainFile) {
    if (!loc.file.empty() && loc.file != mainFile) {
        return fmt::format("{}:{}:{}", loc.file, loc.line, loc.column);
    }
    return fmt::format("{}:{}", loc.line, loc.column);
}

} // namespace memplace::kernelinfo
