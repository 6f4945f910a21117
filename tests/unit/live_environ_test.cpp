// An environment variable a running process set after it started, which
// /proc/<pid>/environ does not show: read from children of this test (a
// parent may read its children's memory) and from a Python process, which
// keeps its own copy of environ; and what an event names from it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/stat.h>
#include <utility>

#include "base/clock.h"
#include "base/live_environ.h"
#include "base/proc.h"
#include "events/event_details.h"
#include "liveguard/abi.h"
#include "temp_dir.h"

using namespace liveguard;

namespace {

constexpr const char* kVar = "PYTEST_CURRENT_TEST";
constexpr const char* kTest = "tests/test_x.py::test_y (call)";

// A forked child that runs `setup`, then waits until it is destroyed.
class Child {
public:
    explicit Child(const std::function<void()>& setup) {
        int ready[2], hold[2];
        if (::pipe2(ready, O_CLOEXEC) != 0 || ::pipe2(hold, O_CLOEXEC) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(ready[0]);
            ::close(hold[1]);
            setup();
            char c = 1;
            if (::write(ready[1], &c, 1) != 1) ::_exit(1);
            (void)!::read(hold[0], &c, 1);
            ::_exit(0);
        }
        ::close(ready[1]);
        ::close(hold[0]);
        hold_ = hold[1];
        char c;
        ok_ = pid_ > 0 && ::read(ready[0], &c, 1) == 1;
        ::close(ready[0]);
    }
    ~Child() {
        if (hold_ >= 0) ::close(hold_);
        if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }
    bool ok() const { return ok_; }

private:
    pid_t pid_ = -1;
    int hold_ = -1;
    bool ok_ = false;
};

std::string exec_environ(pid_t pid) {
    return read_small_file("/proc/" + std::to_string(pid) + "/environ").value_or("");
}

// A Python process that sets PYTEST_CURRENT_TEST as pytest does, then
// waits for its stdin to close.
class Python {
public:
    explicit Python(const std::string& python) {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::unsetenv(kVar);
            ::execl(python.c_str(), python.c_str(), "-c",
                    "import os,sys; os.environ[\"PYTEST_CURRENT_TEST\"]=\"t::u (call)\"; "
                    "sys.stdout.write(\"ready\\n\"); sys.stdout.flush(); sys.stdin.read()",
                    static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        stdin_ = in[1];
        char buf[64];
        ssize_t n;
        while (said_.find('\n') == std::string::npos && (n = ::read(out[0], buf, sizeof buf)) > 0)
            said_.append(buf, static_cast<std::size_t>(n));
        ::close(out[0]);
    }
    // Closes its stdin and waits: its exit status.
    int finish() {
        if (stdin_ >= 0) ::close(std::exchange(stdin_, -1));
        int status = -1;
        if (pid_ > 0) ::waitpid(std::exchange(pid_, -1), &status, 0);
        return status;
    }
    ~Python() { finish(); }
    pid_t pid() const { return pid_; }
    const std::string& said() const { return said_; }

private:
    pid_t pid_ = -1;
    int stdin_ = -1;
    std::string said_;
};

constexpr const char* kPython = "/usr/bin/python3";

}  // namespace

TEST(LiveEnviron, AVariableSetAfterTheStart) {
    Child child([] { ::setenv(kVar, kTest, 1); });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), kVar), kTest);
    // What the process started with does not have it.
    if (!::getenv(kVar)) {
        EXPECT_EQ(pytest_test_from_environ(exec_environ(child.pid())), "");
    }
    // Neither a prefix of the name nor a longer one is the variable.
    EXPECT_EQ(read_live_environ(child.pid(), "PYTEST_CURRENT"), std::nullopt);
    EXPECT_EQ(read_live_environ(child.pid(), "PYTEST_CURRENT_TEST_"), std::nullopt);
    EXPECT_EQ(read_live_environ(child.pid(), ""), std::nullopt);
    EXPECT_EQ(read_live_environ(child.pid(), "PYTEST_CURRENT_TEST=tests"), std::nullopt);
}

TEST(LiveEnviron, ChangedAgainIsTheNewValue) {
    Child child([] {
        ::setenv(kVar, "tests/test_x.py::test_y (setup)", 1);
        ::setenv(kVar, kTest, 1);
    });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), kVar), kTest);
}

TEST(LiveEnviron, ManyVariablesAndALongValue) {
    const std::string long_value(4096, 'v');
    Child child([&] {
        for (int i = 0; i < 3000; ++i) ::setenv(("LIVEGUARD_UNIT_" + std::to_string(i)).c_str(), "x", 1);
        ::setenv(kVar, long_value.c_str(), 1);
        ::setenv("LIVEGUARD_UNIT_TOO_LONG", std::string(4097, 'w').c_str(), 1);
        ::setenv("LIVEGUARD_UNIT_EMPTY", "", 1);
    });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), kVar), long_value);
    EXPECT_EQ(read_live_environ(child.pid(), "LIVEGUARD_UNIT_2999"), "x");
    EXPECT_EQ(read_live_environ(child.pid(), "LIVEGUARD_UNIT_EMPTY"), "");
    EXPECT_EQ(read_live_environ(child.pid(), "LIVEGUARD_UNIT_TOO_LONG"), std::nullopt) << "over the bound";
}

TEST(LiveEnviron, PastTheBoundOfEntriesIsNothing) {
    Child child([] {
        for (int i = 0; i < 4200; ++i) ::setenv(("LIVEGUARD_UNIT_" + std::to_string(i)).c_str(), "x", 1);
        ::setenv(kVar, kTest, 1);
    });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), "LIVEGUARD_UNIT_0").value_or("?"), "x");
    EXPECT_EQ(read_live_environ(child.pid(), kVar), std::nullopt);
}

TEST(LiveEnviron, UnsetIsNothing) {
    Child child([] {
        ::setenv(kVar, kTest, 1);
        ::unsetenv(kVar);
    });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), kVar), std::nullopt);
}

TEST(LiveEnviron, NeverSetIsNothing) {
    Child child([] {});
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), "LIVEGUARD_UNIT_NEVER_SET"), std::nullopt);
    if (const char* path = ::getenv("PATH")) {
        EXPECT_EQ(read_live_environ(child.pid(), "PATH"), path);
    }
}

TEST(LiveEnviron, ClearedEnvironmentIsNothing) {
    Child child([] { ::clearenv(); });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(read_live_environ(child.pid(), "PATH"), std::nullopt);
}

TEST(LiveEnviron, ThisProcess) {
    ::setenv("LIVEGUARD_UNIT_SELF", "here", 1);
    EXPECT_EQ(read_live_environ(::getpid(), "LIVEGUARD_UNIT_SELF"), "here");
    ::unsetenv("LIVEGUARD_UNIT_SELF");
    EXPECT_EQ(read_live_environ(::getpid(), "LIVEGUARD_UNIT_SELF"), std::nullopt);
}

TEST(LiveEnviron, NoSuchProcessIsNothing) {
    EXPECT_EQ(read_live_environ(INT_MAX, kVar), std::nullopt);
    EXPECT_EQ(read_live_environ(0, kVar), std::nullopt);
    EXPECT_EQ(read_live_environ(-1, kVar), std::nullopt);
    // One that has just exited and been reaped.
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
    EXPECT_EQ(read_live_environ(pid, "PATH"), std::nullopt);
}

TEST(LiveEnviron, AZombieIsNothing) {
    pid_t pid = ::fork();
    if (pid == 0) {
        ::setenv(kVar, kTest, 1);
        ::_exit(0);
    }
    ASSERT_GT(pid, 0);
    siginfo_t info{};
    // Exited, not reaped yet: no memory left to read.
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
    EXPECT_EQ(read_live_environ(pid, kVar), std::nullopt);
    ::waitpid(pid, nullptr, 0);
}


// Python keeps os.environ and calls putenv(); Debian's python3 is a
// non-PIE executable with its own copy of environ (a copy relocation),
// where libc's stays unused.
TEST(LiveEnviron, APythonProcess) {
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " not found";
    Python py(kPython);
    ASSERT_EQ(py.said(), "ready\n");
    EXPECT_EQ(read_live_environ(py.pid(), kVar), "t::u (call)");
    EXPECT_EQ(pytest_test_from_environ(exec_environ(py.pid())), "") << "not in what it was started with";
    EXPECT_EQ(py.finish(), 0);
}

// What the kernel side does at a refusal, done here through /proc: from
// the process's mm->start_code (its stat's 26th field) and the distance
// the file gives, to environ, to the variable pytest set.
TEST(LiveEnviron, EnvironIsWhereTheKernelSideLooksFromStartCode) {
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " not found";
    auto at = environ_in_executable(std::filesystem::canonical(kPython).string());
    ASSERT_TRUE(at) << "Debian's python3 defines environ itself";
    struct stat st {};
    ASSERT_EQ(::stat(kPython, &st), 0);
    EXPECT_EQ(at->ino, st.st_ino);
    EXPECT_EQ(at->size, static_cast<std::uint64_t>(st.st_size));
    Python py(kPython);
    ASSERT_EQ(py.said(), "ready\n");
    std::ifstream stat_file("/proc/" + std::to_string(py.pid()) + "/stat");
    std::string line((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string f;
    std::uint64_t start_code = 0;
    for (int i = 3; i <= 26 && fields >> f; ++i)
        if (i == 26) start_code = std::stoull(f);
    ASSERT_NE(start_code, 0u);
    int mem = ::open(("/proc/" + std::to_string(py.pid()) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(mem, 0);
    std::uint64_t env = 0, var = 0;
    std::string found;
    ASSERT_EQ(::pread(mem, &env, sizeof env, static_cast<off_t>(start_code + at->from_start_code)),
              static_cast<ssize_t>(sizeof env));
    for (int i = 0; i < LG_ENV_SCAN && found.empty(); ++i) {
        if (::pread(mem, &var, sizeof var, static_cast<off_t>(env + i * 8)) != 8 || var == 0) break;
        char text[64] = {};
        if (::pread(mem, text, sizeof text - 1, static_cast<off_t>(var)) > 0 &&
            std::string_view(text).starts_with("PYTEST_CURRENT_TEST="))
            found = text + std::strlen("PYTEST_CURRENT_TEST=");
    }
    ::close(mem);
    EXPECT_EQ(found, "t::u (call)");
}

// A program that does not define environ (libc's is the one it uses) has
// no place the kernel side can find.
TEST(LiveEnviron, AnExecutableWithoutItsOwnEnvironIsNotListed) {
    EXPECT_FALSE(environ_in_executable("/bin/true")) << "coreutils' true names no environ";
    EXPECT_FALSE(environ_in_executable("/nonexistent/python3"));
}

// The symbols are those of the file the process maps, not of whatever is
// at its path since. Root reads the mapping itself (map_files); another
// reader goes by the path, finds the file deleted, and reads nothing.
TEST(LiveEnviron, AnExecutableReplacedOnDiskIsReadAsMapped) {
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " not found";
    TempDir dir;
    std::string copy = dir.path + "/python3";
    std::filesystem::copy_file(kPython, copy);
    Python py(copy);
    ASSERT_EQ(py.said(), "ready\n");
    std::filesystem::copy_file("/proc/self/exe", copy + ".new");
    std::filesystem::rename(copy + ".new", copy);
    if (::geteuid() == 0) {
        EXPECT_EQ(read_live_environ(py.pid(), kVar), "t::u (call)");
    } else {
        EXPECT_EQ(read_live_environ(py.pid(), kVar), std::nullopt);
    }
    EXPECT_EQ(py.finish(), 0);
}

// An event names the test running in the culprit now, when neither a
// plugin log nor the culprit's start names one; only a consumer running
// as root reads another process's memory, and only a Python's (pytest
// is one): a flood from any other culprit costs the consumer nothing.
lg_event event_of(pid_t pid) {
    lg_event e{};
    e.boot_ns = boottime_now_ns();
    // No session's logs.
    e.session_cgroup_id = UINT64_MAX - 7;
    e.pid = e.tid = static_cast<std::uint32_t>(pid);
    e.target_source = LG_SOURCE_UNKNOWN;
    auto st = read_proc_stat(pid);
    if (st) std::strncpy(e.comm, st->comm.c_str(), sizeof e.comm - 1);
    return e;
}

TEST(LiveEnviron, AnEventNamesTheTestRunningInTheCulprit) {
    if (::geteuid() != 0) GTEST_SKIP() << "events are read by root";
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " not found";
    Python py(kPython);
    ASSERT_EQ(py.said(), "ready\n");
    lg_event e = event_of(py.pid());
    EXPECT_EQ(gather_details(e).test, "t::u (call)");

    // An event from before the process with that pid started was
    // another's: nothing is read from this one.
    e.boot_ns = 1;
    EXPECT_EQ(gather_details(e).test, "");
    EXPECT_EQ(py.finish(), 0);
}

TEST(LiveEnviron, AnEventOfAProgramThatIsNoPythonReadsNoMemory) {
    if (::geteuid() != 0) GTEST_SKIP() << "events are read by root";
    Child child([] { ::setenv(kVar, kTest, 1); });
    ASSERT_TRUE(child.ok());
    EXPECT_EQ(gather_details(event_of(child.pid())).test, "");
}

// The watcher reads its own libc's table ahead at least; a read after it
// still finds the value.
TEST(LiveEnviron, WarmingReadsThisProcesssLibcAhead) {
    EXPECT_GE(warm_environ_symbols(), 1u);
    ::setenv("LG_WARM_PROBE", "after", 1);
    EXPECT_EQ(read_live_environ(::getpid(), "LG_WARM_PROBE").value_or(""), "after");
    ::unsetenv("LG_WARM_PROBE");
}
