// The pytest plugin built into the binary, as plugin_dir writes it out
// for a binary that has it nowhere on disk.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/install_paths.h"
#include "temp_dir.h"

namespace liveguard {
namespace {

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(EmbeddedPlugin, WritesEveryFileOfDistPythonAsItIs) {
    TempDir tmp;
    std::string dir = tmp.path + "/plugin";
    write_embedded_plugin(dir);
    std::filesystem::path src = std::filesystem::path(LIVEGUARD_SOURCE_DIR) / "dist" / "python";
    int files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(src)) {
        if (!e.is_regular_file() || e.path().string().find("__pycache__") != std::string::npos) continue;
        auto rel = std::filesystem::relative(e.path(), src);
        EXPECT_EQ(slurp(std::filesystem::path(dir) / rel), slurp(e.path())) << rel;
        ++files;
    }
    EXPECT_GE(files, 3);
    // Written again over itself: the same files, no leftovers.
    write_embedded_plugin(dir);
    int written = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename() != ".complete") ++written;
    EXPECT_EQ(written, files);
    // The mark of a whole copy, written last.
    EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(dir) / ".complete"));
}

TEST(EmbeddedPlugin, ModesHoldWhateverTheUmask) {
    TempDir tmp;
    mode_t old = ::umask(077);
    write_embedded_plugin(tmp.path + "/plugin");
    ::umask(old);
    struct stat st {};
    ASSERT_EQ(::stat((tmp.path + "/plugin/liveguard_pytest.py").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    ASSERT_EQ(::stat((tmp.path + "/plugin").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, ::geteuid() == 0 ? 0755u : 0700u);
}

TEST(EmbeddedPlugin, RefusesADirectoryOthersMayWriteIn) {
    TempDir tmp;
    std::string dir = tmp.path + "/planted";
    std::filesystem::create_directory(dir);
    ::chmod(dir.c_str(), 0777);
    EXPECT_THROW(write_embedded_plugin(dir), Error);
    EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(EmbeddedPlugin, RefusesADirectoryThatIsALink) {
    TempDir tmp;
    std::filesystem::create_directory(tmp.path + "/real");
    std::filesystem::create_directory_symlink(tmp.path + "/real", tmp.path + "/link");
    EXPECT_THROW(write_embedded_plugin(tmp.path + "/link"), Error);
    EXPECT_TRUE(std::filesystem::is_empty(tmp.path + "/real"));
}

}  // namespace
}  // namespace liveguard
