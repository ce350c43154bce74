#include "common/file_io.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace memplace {
namespace {

namespace fs = std::filesystem;

class FileIo : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("memplace_file_io_" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(FileIo, WritesThenReadsBack) {
    auto path = dir_ / "a.txt";
    ASSERT_TRUE(writeFileAtomic(path, "hello"));
    auto text = readFile(path);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "hello");
}

TEST_F(FileIo, RefusesToOverwriteUnlessAsked) {
    auto path = dir_ / "a.txt";
    ASSERT_TRUE(writeFileAtomic(path, "first"));
    auto again = writeFileAtomic(path, "second");
    ASSERT_FALSE(again);
    EXPECT_NE(again.message().find("already exists"), std::string::npos);
    EXPECT_EQ(*readFile(path), "first");
    ASSERT_TRUE(writeFileAtomic(path, "second", Overwrite::Yes));
    EXPECT_EQ(*readFile(path), "second");
}

TEST_F(FileIo, LeavesNoTemporaryFilesBehind) {
    ASSERT_TRUE(writeFileAtomic(dir_ / "a.txt", "x"));
    EXPECT_FALSE(writeFileAtomic(dir_ / "a.txt", "y"));
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) {
        ++files;
    }
    EXPECT_EQ(files, 1u);
}

TEST_F(FileIo, MissingFileAndDirectoryAreErrors) {
    auto missing = readFile(dir_ / "nope.msl");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.message().find("nope.msl"), std::string::npos);
    EXPECT_FALSE(readFile(dir_));
}

} // namespace
} // namespace memplace
