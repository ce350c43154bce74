#include "common/file_io.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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

TEST_F(FileIo, WritesThroughASymlinkAndKeepsTheLink) {
    const auto target = dir_ / "target.json";
    const auto link = dir_ / "report.json";
    ASSERT_TRUE(writeFileAtomic(target, "old"));
    fs::create_symlink(target, link);
    auto refused = writeFileAtomic(link, "new");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.message().find("already exists"), std::string::npos);
    ASSERT_TRUE(writeFileAtomic(link, "new", Overwrite::Yes)) << "symlink";
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(*readFile(target), "new");
}

TEST_F(FileIo, ALinkToAFileNotMadeYetMakesIt) {
    const auto link = dir_ / "report.json";
    fs::create_symlink("real.json", link); // relative: to the link's folder
    ASSERT_TRUE(writeFileAtomic(link, "x", Overwrite::Yes));
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
    EXPECT_EQ(*readFile(dir_ / "real.json"), "x");
    // Into a folder that is not there: an error naming it, the link untouched.
    const auto nowhere = dir_ / "nowhere.json";
    fs::create_symlink(dir_ / "missing" / "x.json", nowhere);
    auto w = writeFileAtomic(nowhere, "x", Overwrite::Yes);
    ASSERT_FALSE(w);
    EXPECT_NE(w.message().find("missing"), std::string::npos) << w.message();
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(nowhere)));
    // A loop: an error, not a hang.
    fs::create_symlink(dir_ / "b", dir_ / "a");
    fs::create_symlink(dir_ / "a", dir_ / "b");
    EXPECT_FALSE(writeFileAtomic(dir_ / "a", "x", Overwrite::Yes));
}

TEST_F(FileIo, WritesThroughAFifoToItsReader) {
    const auto fifo = dir_ / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // The read end is open before the write (so the writer finds a reader); a thread reads it
    // while the writer blocks on a full pipe (1 MB is more than a pipe holds).
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(fd, 0);
    std::string got;
    std::thread reader([&] {
        char buf[65536];
        for (;;) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 5000) <= 0) {
                break; // nothing for 5 s: the write did not come through the FIFO
            }
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) {
                got.append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EAGAIN) {
                break; // end of file: the writer closed
            }
        }
    });
    const std::string content(1 << 20, 'x');
    auto w = writeFileAtomic(fifo, content);
    reader.join();
    ::close(fd);
    ASSERT_TRUE(w) << w.message();
    EXPECT_EQ(got.size(), content.size());
    struct stat st{};
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
}

TEST_F(FileIo, AFifoNobodyReadsIsAnErrorNotAHang) {
    const auto fifo = dir_ / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto w = writeFileAtomic(fifo, "x", Overwrite::Yes);
    ASSERT_FALSE(w);
    EXPECT_NE(w.message().find("nobody reads"), std::string::npos) << w.message();
    EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

/// A character device to write to: a null device of the test's own where this process may make
/// one (root), so that a write that replaces what it writes to (the bug this guards against)
/// replaces that one, never the system's /dev/null; else a symbolic link to /dev/null (such a
/// write replaces the link).
fs::path nullDevice(const fs::path& dir) {
    const fs::path own = dir / "null";
    if (::mknod(own.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) {
        return own;
    }
    fs::create_symlink("/dev/null", dir / "null");
    return dir / "null";
}

TEST_F(FileIo, ACharacterDeviceStaysADevice) {
    const fs::path null = nullDevice(dir_);
    ASSERT_TRUE(writeFileAtomic(null, "discarded", Overwrite::Yes));
    ASSERT_TRUE(writeFileAtomic(null, "discarded", Overwrite::No));
    EXPECT_TRUE(fs::is_character_file(null)) << "the device was replaced by a regular file";
    // Through a link too (as /dev/stdout is one).
    fs::create_symlink(null, dir_ / "out");
    ASSERT_TRUE(writeFileAtomic(dir_ / "out", "discarded", Overwrite::Yes));
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "out")));
    EXPECT_TRUE(fs::is_character_file(null));
}

TEST_F(FileIo, StdoutRedirectedToAFileIsAppendedTo) {
    // /dev/stdout -> /proc/self/fd/1 -> the file the shell redirected it to: a rename would swap
    // the file away from under the program, a truncation would lose what it printed.
    const auto out = dir_ / "out.txt";
    ASSERT_TRUE(writeFileAtomic(out, "the program's output\n"));
    const int fd = ::open(out.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    const auto link = dir_ / "stdout";
    fs::create_symlink("/proc/self/fd/" + std::to_string(fd), link);
    ASSERT_TRUE(writeFileAtomic(link, "the report\n", Overwrite::Yes));
    ::close(fd);
    EXPECT_EQ(*readFile(out), "the program's output\nthe report\n");
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
}

TEST_F(FileIo, ADirectoryIsRefusedWithItsReason) {
    fs::create_directories(dir_ / "sub");
    auto w = writeFileAtomic(dir_ / "sub", "x", Overwrite::Yes);
    ASSERT_FALSE(w);
    EXPECT_NE(w.message().find("is a directory"), std::string::npos) << w.message();
    EXPECT_EQ(w.message().find("Success"), std::string::npos) << w.message();
    EXPECT_TRUE(fs::is_directory(dir_ / "sub"));
    EXPECT_FALSE(appendToFile(dir_ / "sub", "x"));
}

/// Runs `body` as an unprivileged user (in a child process when this one is root, for whom
/// permissions do not apply); true when it returned true.
bool asUnprivileged(const std::function<bool()>& body) {
    if (::geteuid() != 0) {
        return body();
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        const bool ok = ::setgid(65534) == 0 && ::setuid(65534) == 0 && body();
        ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(FileIo, ARegularFileInAReadOnlyFolderIsWrittenThrough) {
    const auto folder = dir_ / "ro";
    fs::create_directories(folder);
    ASSERT_TRUE(writeFileAtomic(folder / "report.json", "old"));
    fs::permissions(folder / "report.json", fs::perms::all);
    fs::permissions(dir_, fs::perms::all);
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read |
                                fs::perms::others_exec);
    EXPECT_TRUE(asUnprivileged([&] {
        auto w = writeFileAtomic(folder / "report.json", "new", Overwrite::Yes);
        if (!w) {
            std::fprintf(stderr, "%s\n", w.message().c_str());
        }
        // A new file cannot be made there: an error that names the path and the reason.
        auto n = writeFileAtomic(folder / "other.json", "x");
        return w && !n && n.message().find("other.json") != std::string::npos &&
               n.message().find("ermission denied") != std::string::npos;
    }));
    EXPECT_EQ(*readFile(folder / "report.json"), "new");
    fs::permissions(folder, fs::perms::owner_all);
}

TEST_F(FileIo, AppendsAndCreates) {
    ASSERT_TRUE(appendToFile(dir_ / "log", "a\n"));
    ASSERT_TRUE(appendToFile(dir_ / "log", "b\n"));
    EXPECT_EQ(*readFile(dir_ / "log"), "a\nb\n");
    const fs::path null = nullDevice(dir_);
    ASSERT_TRUE(appendToFile(null, "x"));
    EXPECT_TRUE(fs::is_character_file(null));
}

} // namespace
} // namespace memplace
