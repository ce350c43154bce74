// KernelInfo's JSON form: everything written is read back equal; malformed JSON is reported
// with the path of the offending value.
#include "kernelinfo/feasibility.h"
#include "kernelinfo/kernel_info_json.h"

#include <gtest/gtest.h>

namespace memplace::kernelinfo {
namespace {

FileInfo sample() {
    FileInfo f;
    f.file = "k.cu";
    f.siteCount = 3;
    KernelInfo k;
    k.name = "scale";
    k.instantiation = "scale<float, 128>";
    k.templateArgs = {"float", "128"};
    k.location = {"", 3, 17};
    k.params = {{"n", "int", false}, {"in", "const float *", true}, {"out", "float *", true}};
    k.blockDim = std::array<int64_t, 3>{128, 1, 1};

    ArrayInfo in;
    in.name = "in";
    in.paramIndex = 1;
    in.elementType = "float";
    in.elementSize = 4;
    in.isConst = true;
    in.declaration = {"", 3, 40};
    in.mode = AccessMode::Read;
    in.extent = {4096, "cudaMalloc at 20:5"};
    in.dimensionality = 2;
    in.rowLength = Poly::symbol("n");
    ArrayInfo out = in;
    out.name = "out";
    out.paramIndex = 2;
    out.isConst = false;
    out.mode = AccessMode::ReadWrite;
    out.extent = {std::nullopt, "no cudaMalloc of 'p' in this file"};
    out.dimensionality = 1;
    out.rowLength.reset();
    ArrayInfo tile;
    tile.name = "tile";
    tile.kind = ArrayKind::Shared;
    tile.elementType = "float";
    tile.elementSize = 4;
    tile.dims = {16, 17};
    tile.dimensionality = 2;
    tile.rowLength = Poly::constant(17);
    tile.extent = {1088, "static"};
    k.arrays = {in, out, tile};

    Site s0;
    s0.id = 0;
    s0.array = "in";
    s0.location = {"", 5, 20};
    s0.access = AccessMode::Read;
    s0.function = "scale";
    s0.index.kind = IndexKind::Affine;
    s0.index.text = "i";
    s0.index.terms = {{"threadIdx.x", Poly::constant(1)},
                      {"blockIdx.x", Poly::symbol("blockDim.x")},
                      {"k", Poly::constant(16) * Poly::symbol("n")}};
    s0.index.offset = Poly::constant(-1);
    s0.loops = {0};
    Site s1;
    s1.id = 1;
    s1.array = "out";
    s1.location = {"helpers.cuh", 9, 5};
    s1.access = AccessMode::Atomic;
    s1.form = SiteForm::PointerOffset;
    s1.intrinsic = "atomicAdd";
    s1.member = ".x";
    s1.function = "helper";
    s1.callPath = {{"helper", {"", 6, 9}}};
    s1.contexts = 2;
    s1.otherArrays = {"in"};
    s1.index.kind = IndexKind::Indirect;
    s1.index.text = "col[j]";
    s1.index.via = {"col"};
    s1.index.viaSites = {0};
    Site s2;
    s2.id = 2;
    s2.array = "tile";
    s2.location = {"", 7, 5};
    s2.access = AccessMode::Write;
    s2.function = "scale";
    s2.index.kind = IndexKind::Unknown;
    s2.index.text = "[ty][tx]";
    s2.index.reason = "a remainder ('%')";
    s2.subscripts = {s2.index, s0.index};
    k.sites = {s0, s1, s2};

    LoopInfo l;
    l.id = 0;
    l.kind = "for";
    l.location = {"", 4, 5};
    l.var = "k";
    l.init = Poly::constant(0);
    l.step = Poly::constant(1);
    l.bound = "TILE";
    l.tripCount = 16;
    LoopInfo w;
    w.id = 1;
    w.kind = "while";
    w.location = {"", 8, 5};
    w.reason = "a while loop";
    w.parent = 0;
    w.callPath = {{"helper", {"", 6, 9}}};
    k.loops = {l, w};

    Hazard h;
    h.kind = HazardKind::Aliasing;
    h.array = "in";
    h.other = "out";
    h.location = {"", 30, 5};
    h.message = "'in' and 'out' point into the same allocation 'd'";
    k.hazards = {h};

    LaunchSite ls;
    ls.location = {"", 30, 5};
    ls.function = "main";
    ls.kernel = "scale<float, 128>";
    ls.grid = {"(n + 127) / 128", {8, 1, 1}};
    ls.block = {"128", {128, 1, 1}};
    ls.sharedBytes = {"", {0}};
    ls.stream = {"s", {}};
    ls.arguments = {"n", "d", "d"};
    k.launches = {ls};
    k.untracked = {"12:7: g.col[i]: pointer read from a structure member"};
    computeFeasibility(k);
    f.kernels = {k};

    AllocationSite a;
    a.variable = "d";
    a.call = "cudaMalloc";
    a.location = {"", 20, 5};
    a.function = "main";
    a.bytesText = "n * sizeof(float)";
    a.bytes = 4096;
    f.allocations = {a};
    f.warnings = {"k.cu:9:3: warning: something"};
    return f;
}

TEST(KernelInfoJson, RoundTrips) {
    FileInfo f = sample();
    std::string text = formatJson(toJson(f));
    auto back = fileInfoFromJson(nlohmann::json::parse(text));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(*back, f);
    EXPECT_EQ(formatJson(toJson(*back)), text);
}

TEST(KernelInfoJson, HasTheIssueShape) {
    auto j = nlohmann::json::parse(formatJson(toJson(sample())));
    const auto& k = j["kernels"][0];
    EXPECT_EQ(j["file"], "k.cu");
    EXPECT_EQ(k["name"], "scale");
    const auto& a = k["arrays"][0];
    EXPECT_EQ(a["name"], "in");
    EXPECT_EQ(a["element_type"], "float");
    EXPECT_EQ(a["element_size"], 4);
    EXPECT_EQ(a["mode"], "read");
    EXPECT_TRUE(a["feasible"].is_array());
    EXPECT_TRUE(a["excluded"].is_object());
    EXPECT_EQ(a["row_length"], "n");
    const auto& s = k["sites"][0];
    EXPECT_EQ(s["id"], 0);
    EXPECT_EQ(s["array"], "in");
    EXPECT_EQ(s["line"], 5);
    EXPECT_EQ(s["column"], 20);
    EXPECT_EQ(s["access"], "read");
    EXPECT_EQ(s["index"]["kind"], "affine");
    EXPECT_EQ(s["index"]["terms"][1]["coeff"], "blockDim.x");
    EXPECT_EQ(s["index"]["terms"][0]["coeff"], 1);
    EXPECT_EQ(k["sites"][1]["file"], "helpers.cuh");
    EXPECT_FALSE(k["sites"][0].contains("file"));
    EXPECT_TRUE(k["launches"].is_array());
    EXPECT_EQ(k["launches"][0]["grid"]["value"], nlohmann::json::array({8, 1, 1}));
    EXPECT_EQ(k["launches"][0]["shared_bytes"]["value"], 0);
}

TEST(KernelInfoJson, FormatKeepsShortValuesOnOneLine) {
    std::string text = formatJson(toJson(sample()));
    EXPECT_NE(text.find(R"("feasible": ["global", )"), std::string::npos) << text;
    EXPECT_NE(text.find(R"({"var": "threadIdx.x", "coeff": 1})"), std::string::npos);
}

TEST(KernelInfoJson, ErrorsNameThePath) {
    auto j = nlohmann::json::parse(formatJson(toJson(sample())));
    j["kernels"][0]["sites"][1]["access"] = "sometimes";
    auto r = fileInfoFromJson(j);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("$.kernels[0].sites[1].access"), std::string::npos) << r.message();

    j = nlohmann::json::parse(formatJson(toJson(sample())));
    j["kernels"][0]["arrays"][0].erase("mode");
    r = fileInfoFromJson(j);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("missing key \"mode\""), std::string::npos) << r.message();

    j = nlohmann::json::parse(formatJson(toJson(sample())));
    j["kernels"][0]["loops"][0]["init"] = "2 ** n";
    EXPECT_FALSE(fileInfoFromJson(j).ok());
    EXPECT_FALSE(fileInfoFromJson(nlohmann::json::array()).ok());
}

} // namespace
} // namespace memplace::kernelinfo
