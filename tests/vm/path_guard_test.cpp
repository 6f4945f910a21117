// Protected trees and files ([[protect]] path, PID files) on the real
// kernel: every kind of change a member makes inside a protected tree is
// refused and leaves the tree as it was, the same change from outside a
// session works, and names in `except` stay writable. PathGuard.* assert
// refusals and are part of the control run, which takes the file hooks
// off (the kill hook alone would leave these green).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.h"

using namespace lgtest;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = test_root() + "/lgpath";
const std::string kTree = kRoot + "/home/.hermes";
const std::string kOutside = kRoot + "/outside";

// Every name below `dir` with its type, mode, owner, size, mtime and
// content: equal before and after means nothing changed.
std::string snapshot(const std::string& dir) {
    std::ostringstream out;
    std::error_code ec;
    std::vector<std::string> names;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        names.push_back(it->path().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
        struct stat st {};
        if (::lstat(n.c_str(), &st) != 0) continue;
        out << n << " " << std::oct << st.st_mode << std::dec << " " << st.st_uid << ":" << st.st_gid << " "
            << st.st_size << " " << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec << " " << st.st_nlink;
        if (S_ISREG(st.st_mode)) out << " " << std::hash<std::string>()(read_file(n).value_or(""));
        char v[64];
        ssize_t xl = ::lgetxattr(n.c_str(), "trusted.lg", v, sizeof v);
        if (xl >= 0) out << " xattr=" << std::string(v, static_cast<std::size_t>(xl));
        char acl[256];
        ssize_t al = ::lgetxattr(n.c_str(), "system.posix_acl_access", acl, sizeof acl);
        if (al >= 0) out << " acl=" << std::hash<std::string>()(std::string(acl, static_cast<std::size_t>(al)));
        out << "\n";
    }
    return out.str();
}

int err(long rc) { return rc == 0 ? 0 : errno; }

// An access ACL as setfacl stores it (user::rwx,user:1234:rw-,group::r--,
// mask::rw-,other::r--): on a 0644 file it also sets the owner's x bit and
// the group bits to the mask, without any chmod.
std::string access_acl() {
    auto entry = [](std::uint16_t tag, std::uint16_t perm, std::uint32_t id) {
        std::string e(8, '\0');
        std::memcpy(e.data(), &tag, 2);
        std::memcpy(e.data() + 2, &perm, 2);
        std::memcpy(e.data() + 4, &id, 4);
        return e;
    };
    std::uint32_t version = 2;
    std::string acl(reinterpret_cast<const char*>(&version), 4);
    acl += entry(0x01, 7, 0xffffffff) + entry(0x02, 6, 1234) + entry(0x04, 4, 0xffffffff) +
           entry(0x10, 6, 0xffffffff) + entry(0x20, 4, 0xffffffff);
    return acl;
}
int err_fd(int fd) {
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
}

// `sh -c cmd` as a member (or not); its exit status, output in `log`.
int sh_in(Session* s, const std::string& cmd, const std::string& log) {
    auto body = [&] {
        std::string full = "exec >>'" + log + "' 2>&1; " + cmd;
        execl("/bin/sh", "sh", "-c", full.c_str(), (char*)nullptr);
        return 127;
    };
    if (s) return s->as_member([&] {
        pid_t c = ::fork();
        if (c == 0) ::_exit(body());
        int st = 0;
        ::waitpid(c, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    });
    return run_cmd({"/bin/sh", "-c", "exec >>'" + log + "' 2>&1; " + cmd}).status;
}

class PathFixture : public ::testing::Test {
protected:
    void SetUp() override {
        lg({"unload"});
        ::unlink("/run/liveguard/watcher.log");
        ::umount2((kRoot + "/bind").c_str(), MNT_DETACH);
        fs::remove_all(kRoot);
        fs::create_directories(kTree + "/sessions");
        fs::create_directories(kTree + "/empty");
        fs::create_directories(kOutside);
        write_text(kTree + "/config.yaml", "model: live\n");
        write_text(kTree + "/sessions/db.sqlite", "live sessions\n");
        write_text(kOutside + "/incoming", "from outside\n");
        ASSERT_EQ(::setxattr((kTree + "/sessions/db.sqlite").c_str(), "trusted.lg", "v", 1, 0), 0)
            << std::strerror(errno);
        std::string acl = access_acl();
        ASSERT_EQ(::setxattr((kTree + "/sessions/db.sqlite").c_str(), "system.posix_acl_access", acl.data(),
                             acl.size(), 0), 0)
            << std::strerror(errno);
    }
    void TearDown() override {
        lg({"unload"});
        ::umount2((kRoot + "/bind").c_str(), MNT_DETACH);
        // What a control run let through must not outlive the test.
        int fd = ::open((kTree + "/config.yaml").c_str(), O_RDONLY);
        if (fd >= 0) {
            int none = 0;
            ::ioctl(fd, FS_IOC_SETFLAGS, &none);
            ::close(fd);
        }
    }

    void load(const std::string& extra = "") {
        write_text(kRoot + "/policy.toml",
                   "[[protect]]\npath = \"" + kRoot + "/home/.hermes\"\n"
                   "except = [\"__pycache__\", \"*.pyc\", \".pytest_cache\"]\n" + extra);
        auto r = lg({"load", "--config", kRoot + "/policy.toml"});
        ASSERT_EQ(r.status, 0) << r.out << r.err;
        // The watcher has guarded the tree once status lists it.
        ASSERT_TRUE(wait_until([] { return lg({"status", "--json"}).out.find("\"kind\":\"path\"") != std::string::npos; }))
            << lg({"status", "--json"}).out;
        if (sabotaged()) take_path_hooks_off();
    }

    std::string watcher_log() { return read_file("/run/liveguard/watcher.log").value_or(""); }
};

// Ends the watcher this test's `load` started, as a crash would; true once
// it is gone.
bool kill_watcher() {
    auto text = read_file("/run/liveguard/watcher.pid");
    pid_t watcher = text ? std::atoi(text->c_str()) : 0;
    if (watcher <= 0 || ::kill(watcher, SIGKILL) != 0) return false;
    return wait_until([&] {
        return ::kill(watcher, 0) != 0 ||
               read_file("/proc/" + std::to_string(watcher) + "/stat").value_or(") Z ").find(") Z ") != std::string::npos;
    });
}

class PathGuard : public PathFixture {};
class Path : public PathFixture {};

const std::string kConfig = kTree + "/config.yaml";

}  // namespace

TEST_F(PathGuard, EveryKindOfChangeInsideTheTreeIsRefusedAndLeavesItUnchanged) {
    load();
    std::string before = snapshot(kTree);
    Session s;
    struct Case {
        const char* what;
        std::function<int()> act;
    };
    std::vector<Case> cases = {
        {"open for writing", [] { return err_fd(::open(kConfig.c_str(), O_WRONLY)); }},
        {"open with O_TRUNC", [] { return err_fd(::open(kConfig.c_str(), O_RDONLY | O_TRUNC)); }},
        {"open for append", [] { return err_fd(::open(kConfig.c_str(), O_WRONLY | O_APPEND)); }},
        {"truncate", [] { return err(::truncate(kConfig.c_str(), 0)); }},
        {"create", [] { return err_fd(::open((kTree + "/new").c_str(), O_CREAT | O_WRONLY, 0644)); }},
        {"create in a subdirectory",
         [] { return err_fd(::open((kTree + "/sessions/new.db").c_str(), O_CREAT | O_WRONLY, 0644)); }},
        {"unlink", [] { return err(::unlink(kConfig.c_str())); }},
        {"rename within", [] { return err(::rename(kConfig.c_str(), (kTree + "/moved").c_str())); }},
        {"rename out", [] { return err(::rename(kConfig.c_str(), (kOutside + "/stolen").c_str())); }},
        {"rename in", [] { return err(::rename((kOutside + "/incoming").c_str(), (kTree + "/planted").c_str())); }},
        {"rename over", [] { return err(::rename((kOutside + "/incoming").c_str(), kConfig.c_str())); }},
        {"hard link out", [] { return err(::link(kConfig.c_str(), (kOutside + "/alias").c_str())); }},
        {"hard link in", [] { return err(::link((kOutside + "/incoming").c_str(), (kTree + "/alias").c_str())); }},
        {"symlink", [] { return err(::symlink("/etc/passwd", (kTree + "/evil").c_str())); }},
        {"mkdir", [] { return err(::mkdir((kTree + "/newdir").c_str(), 0755)); }},
        {"rmdir", [] { return err(::rmdir((kTree + "/empty").c_str())); }},
        {"mknod (a FIFO)", [] { return err(::mkfifo((kTree + "/fifo").c_str(), 0644)); }},
        {"chmod", [] { return err(::chmod(kConfig.c_str(), 0600)); }},
        {"chown", [] { return err(::chown(kConfig.c_str(), 65534, 65534)); }},
        {"utimes", [] {
             struct timeval tv[2] = {{1, 0}, {1, 0}};
             return err(::utimes(kConfig.c_str(), tv));
         }},
        {"setxattr", [] { return err(::setxattr(kConfig.c_str(), "trusted.lg", "x", 1, 0)); }},
        {"removexattr", [] { return err(::removexattr((kTree + "/sessions/db.sqlite").c_str(), "trusted.lg")); }},
        {"set an access ACL (setfacl)", [] {
             std::string acl = access_acl();
             return err(::setxattr(kConfig.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0));
         }},
        {"remove an access ACL (setfacl -b)",
         [] { return err(::removexattr((kTree + "/sessions/db.sqlite").c_str(), "system.posix_acl_access")); }},
        {"chattr +a", [] {
             int fd = ::open(kConfig.c_str(), O_RDONLY);
             if (fd < 0) return errno;
             int flags = FS_APPEND_FL;
             int r = err(::ioctl(fd, FS_IOC_SETFLAGS, &flags));
             ::close(fd);
             return r;
         }},
        {"mount over a directory in it",
         [] { return err(::mount("tmpfs", (kTree + "/sessions").c_str(), "tmpfs", 0, nullptr)); }},
        {"rename the tree itself", [] { return err(::rename(kTree.c_str(), (kOutside + "/hermes").c_str())); }},
        {"unlink in a subdirectory", [] { return err(::unlink((kTree + "/sessions/db.sqlite").c_str())); }},
    };
    for (const auto& c : cases) EXPECT_EQ(s.as_member(c.act), EPERM) << c.what;
    EXPECT_EQ(snapshot(kTree), before);
    // One event per refusal: the mount by the mount door, every other one
    // by the path door.
    std::string sid = "\"session_cgroup_id\":" + std::to_string(s.id()) + ",";
    auto count = [&](const std::string& out, const std::string& hook) {
        std::istringstream in(out);
        std::string line;
        std::size_t n = 0;
        while (std::getline(in, line))
            n += line.find(sid) != std::string::npos && line.find("\"hook\":\"" + hook + "\"") != std::string::npos;
        return n;
    };
    std::string out;
    EXPECT_TRUE(wait_until([&] {
        out = lg({"events", "--no-follow", "--since", "10m", "--json"}).out;
        return count(out, "path") + count(out, "mount") >= cases.size();
    }))
        << out;
    EXPECT_EQ(count(out, "path"), cases.size() - 1) << out;
    EXPECT_EQ(count(out, "mount"), 1u) << out;
    // Reading, listing and stat keep working.
    EXPECT_EQ(s.as_member([] { return err_fd(::open(kConfig.c_str(), O_RDONLY)); }), 0);
    EXPECT_EQ(s.as_member([] {
                  struct stat st {};
                  return err(::stat(kConfig.c_str(), &st));
              }),
              0);
    EXPECT_EQ(s.as_member([] { return err_fd(::open(kTree.c_str(), O_RDONLY | O_DIRECTORY)); }), 0);
}

TEST_F(PathGuard, ADirectoryReplacedAtTheSamePathIsProtectedAgain) {
    load();
    Session s;
    auto open_config = [] { return err_fd(::open(kConfig.c_str(), O_WRONLY)); };
    ASSERT_EQ(s.as_member(open_config), EPERM);
    // The developer, in no session, restores the directory from a backup:
    // a new inode at the same path, which the watcher picks up.
    ASSERT_EQ(::rename(kTree.c_str(), (kRoot + "/home/.hermes.old").c_str()), 0);
    fs::create_directories(kTree);
    write_text(kConfig, "model: restored\n");
    EXPECT_TRUE(wait_until([&] { return s.as_member(open_config) == EPERM; })) << watcher_log();
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kTree + "/new").c_str(), O_CREAT | O_WRONLY, 0644)); }), EPERM);
    EXPECT_EQ(read_file(kConfig).value_or(""), "model: restored\n");
}

TEST_F(PathGuard, ANameAnInnerTreeExceptsIsStillRefusedByTheTreeAroundIt) {
    load("[[protect]]\npath = \"" + kTree + "/sessions\"\nexcept = [\"*.db\"]\n");
    Session s;
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kTree + "/sessions/new.db").c_str(), O_CREAT | O_WRONLY, 0644)); }),
              EPERM);
    EXPECT_FALSE(fs::exists(kTree + "/sessions/new.db"));
}

TEST_F(PathGuard, AWriteThroughADescriptorOpenedBeforeTheSessionIsRefused) {
    load();
    std::string before = snapshot(kTree);
    int fd = ::open(kConfig.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    Session s;
    EXPECT_EQ(s.as_member([&] { return ::write(fd, "x", 1) == 1 ? 0 : errno; }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::ftruncate(fd, 0)); }), EPERM);
    ::close(fd);
    EXPECT_EQ(snapshot(kTree), before);
}

TEST_F(PathGuard, ASymlinkARelativePathABindMountAndAnEarlierHardLinkAreRefused) {
    ASSERT_EQ(::symlink(kTree.c_str(), (kRoot + "/link").c_str()), 0);
    ASSERT_EQ(::link(kConfig.c_str(), (kOutside + "/hardlink").c_str()), 0);
    fs::create_directories(kRoot + "/bind");
    ASSERT_EQ(::mount(kTree.c_str(), (kRoot + "/bind").c_str(), nullptr, MS_BIND, nullptr), 0)
        << std::strerror(errno);
    load();
    std::string before = snapshot(kTree);
    Session s;
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kRoot + "/link/config.yaml").c_str(), O_WRONLY)); }), EPERM);
    EXPECT_EQ(s.as_member([] {
                  if (::chdir((kTree + "/sessions").c_str()) != 0) return errno;
                  return err_fd(::open("../config.yaml", O_WRONLY));
              }),
              EPERM);
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kRoot + "/bind/config.yaml").c_str(), O_WRONLY)); }), EPERM);
    EXPECT_EQ(s.as_member([] { return err(::unlink((kRoot + "/bind/sessions/db.sqlite").c_str())); }), EPERM);
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kOutside + "/hardlink").c_str(), O_WRONLY)); }), EPERM);
    EXPECT_EQ(snapshot(kTree), before);
}

TEST_F(PathGuard, EachRefusalIsAnEventNamingTheFile) {
    load();
    Session s;
    ASSERT_EQ(s.as_member([] { return err_fd(::open(kConfig.c_str(), O_WRONLY)); }), EPERM);
    ASSERT_EQ(s.as_member([] { return err(::mkdir((kTree + "/sessions/tmpdir").c_str(), 0755)); }), EPERM);
    // The watcher journals what the kernel reports; events reads the journal.
    std::string out;
    auto has = [&](const std::string& a, const std::string& b) {
        std::istringstream in(out);
        std::string line;
        while (std::getline(in, line))
            if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(wait_until([&] {
        out = lg({"events", "--no-follow", "--since", "10m", "--json"}).out;
        return has("\"hook\":\"path\"", "config.yaml") && has("\"hook\":\"path\"", "tmpdir");
    }))
        << out;
    // What was done, to which name, and which policy entry protects it.
    EXPECT_TRUE(has("opened config.yaml for writing in a protected tree", "path \\\"" + kTree)) << out;
    EXPECT_TRUE(has("made directory tmpdir in a protected tree", "path \\\"" + kTree)) << out;
}

TEST_F(PathGuard, AMemberMayNotWriteTheGatewaysPidFile) {
    Target gw;
    std::string pf = kRoot + "/gateway.pid";
    write_hermes_pid_file(pf, gw.pid());
    load("[[protect]]\npidfile = \"" + pf + "\"\n");
    ASSERT_TRUE(wait_until([&] { return listed_protected(gw.pid()); }));
    std::string before = read_file(pf).value_or("");
    Session s;
    EXPECT_EQ(s.as_member([&] { return err_fd(::open(pf.c_str(), O_WRONLY | O_TRUNC)); }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::unlink(pf.c_str())); }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::rename((kOutside + "/incoming").c_str(), pf.c_str())); }), EPERM);
    EXPECT_EQ(read_file(pf).value_or(""), before);
    EXPECT_TRUE(listed_protected(gw.pid()));
    EXPECT_TRUE(gw.untouched());
}

TEST_F(PathGuard, GitCannotChangeACheckoutWhoseGitDirectoryIsProtected) {
    std::string repo = kRoot + "/checkout", bare = kRoot + "/remote.git", log = kRoot + "/git.log";
    std::string git = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main -c safe.directory='*' ";
    ASSERT_EQ(sh_in(nullptr,
                    git + "init -q --bare " + bare + " && " + git + "clone -q " + bare + " " + repo + " && cd " +
                        repo + " && echo one >pyproject.toml && " + git + "add . && " + git +
                        "commit -qm one && " + git + "push -q origin main && cd /tmp && " + git + "clone -q " +
                        bare + " " + kRoot + "/other && cd " + kRoot + "/other && echo two >pyproject.toml && " +
                        git + "commit -qam two && " + git + "push -q origin main",
                    log),
              0)
        << read_file(log).value_or("");
    load("[[protect]]\npath = \"" + repo + "/.git\"\n");
    write_text(repo + "/pyproject.toml", "local edit\n");  // the developer's, outside any session
    auto state = [&] { return snapshot(repo); };
    std::string before = state();
    Session s;
    std::string in = "cd " + repo + " && ";
    EXPECT_NE(sh_in(&s, in + git + "commit -qam test", log), 0);
    EXPECT_NE(sh_in(&s, in + git + "pull -q --no-rebase origin main", log), 0);
    EXPECT_NE(sh_in(&s, in + git + "stash", log), 0);
    EXPECT_NE(sh_in(&s, in + git + "checkout -- pyproject.toml", log), 0);
    EXPECT_NE(sh_in(&s, in + git + "reset -q --hard", log), 0);
    EXPECT_EQ(state(), before) << read_file(log).value_or("");
    // Reading the repository still works.
    EXPECT_EQ(sh_in(&s, in + git + "status --short && " + git + "log --oneline && " + git + "diff --stat", log), 0)
        << read_file(log).value_or("");
}

TEST_F(Path, TheSameChangesFromOutsideASessionWork) {
    load();
    Session s;  // a session exists, but this process is no member
    EXPECT_EQ(err_fd(::open(kConfig.c_str(), O_WRONLY | O_APPEND)), 0);
    EXPECT_EQ(err(::chmod(kConfig.c_str(), 0600)), 0);
    EXPECT_EQ(err(::setxattr(kConfig.c_str(), "trusted.lg", "x", 1, 0)), 0);
    std::string acl = access_acl();
    EXPECT_EQ(err(::setxattr(kConfig.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0)), 0);
    EXPECT_EQ(err(::removexattr(kConfig.c_str(), "system.posix_acl_access")), 0);
    EXPECT_EQ(err(::truncate(kConfig.c_str(), 0)), 0);
    EXPECT_EQ(err(::mkdir((kTree + "/newdir").c_str(), 0755)), 0);
    EXPECT_EQ(err(::rename(kConfig.c_str(), (kTree + "/renamed").c_str())), 0);
    EXPECT_EQ(err(::unlink((kTree + "/renamed").c_str())), 0);
    EXPECT_EQ(err(::rmdir((kTree + "/empty").c_str())), 0);
}

TEST_F(Path, NamesInExceptStayWritableForMembers) {
    load();
    Session s;
    EXPECT_EQ(s.as_member([] {
                  if (::mkdir((kTree + "/__pycache__").c_str(), 0755) != 0) return errno;
                  return err_fd(::open((kTree + "/__pycache__/config.cpython-311.pyc").c_str(), O_CREAT | O_WRONLY,
                                       0644));
              }),
              0);
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kTree + "/stray.pyc").c_str(), O_CREAT | O_WRONLY, 0644)); }), 0);
    EXPECT_EQ(s.as_member([] {
                  if (::mkdir((kTree + "/.pytest_cache").c_str(), 0755) != 0) return errno;
                  if (::mkdir((kTree + "/.pytest_cache/v").c_str(), 0755) != 0) return errno;
                  return err_fd(::open((kTree + "/.pytest_cache/v/lastfailed").c_str(), O_CREAT | O_WRONLY, 0644));
              }),
              0);
    // A suffix lets a file through whatever its length, but a directory
    // named like one opens nothing below it.
    EXPECT_EQ(s.as_member([] {
                  return err_fd(::open((kTree + "/a_rather_long_module_name.cpython-311.pyc").c_str(),
                                       O_CREAT | O_WRONLY, 0644));
              }),
              0);
    EXPECT_EQ(s.as_member([] {
                  if (::mkdir((kTree + "/evil.pyc").c_str(), 0755) != 0) return errno;
                  return err_fd(::open((kTree + "/evil.pyc/SKILL.md").c_str(), O_CREAT | O_WRONLY, 0644));
              }),
              EPERM);
    // A name that only looks like one is still protected.
    EXPECT_EQ(s.as_member([] { return err_fd(::open((kTree + "/pyc").c_str(), O_CREAT | O_WRONLY, 0644)); }), EPERM);
}

TEST_F(Path, AProcessATestStartedAndNamedInAPidFileIsNotProtected) {
    std::string pf = kOutside + "/gateway.pid";
    load("[[protect]]\npidfile = \"" + kOutside + "/gateway*.pid\"\n");
    Session s;
    // The test's own gateway writes the PID file the policy watches.
    int rc = s.as_member([&] {
        pid_t child = ::fork();
        if (child == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;) ::pause();
        }
        write_hermes_pid_file(pf, child);
        // The watcher saw the file, and the member is no protected process.
        bool warned = wait_until([] {
            return read_file("/run/liveguard/watcher.log").value_or("").find("session member; not protected") !=
                   std::string::npos;
        });
        int r = warned ? (::kill(child, SIGTERM) == 0 ? 0 : errno) : 200;
        ::waitpid(child, nullptr, 0);
        // Nor is its PID file: the test's own tooling removes it.
        if (r == 0 && ::unlink(pf.c_str()) != 0) r = errno;
        return r;
    });
    EXPECT_EQ(rc, 0) << watcher_log();
}

TEST_F(Path, ATreeDroppedWhileTheWatcherWasDownIsFreedByTheNextOne) {
    load();
    Session s;
    ASSERT_EQ(s.as_member([] { return err_fd(::open(kConfig.c_str(), O_WRONLY)); }), EPERM);
    // The watcher this test's `load` started dies; the policy changes
    // while none runs; a new load starts the next watcher over the same
    // kernel state.
    ASSERT_TRUE(kill_watcher());
    write_text(kRoot + "/policy.toml", "[[protect]]\npath = \"" + kOutside + "\"\n");
    auto r = lg({"load", "--config", kRoot + "/policy.toml"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    ASSERT_TRUE(wait_until([] { return lg({"status", "--json"}).out.find(kOutside) != std::string::npos; }));
    ASSERT_TRUE(wait_until([&] {
        return s.as_member([] { return err_fd(::open((kOutside + "/new").c_str(), O_CREAT | O_WRONLY, 0644)); }) ==
               EPERM;
    }));
    EXPECT_EQ(s.as_member([] { return err_fd(::open(kConfig.c_str(), O_WRONLY)); }), 0)
        << "the tree the policy no longer names is still protected";
}

TEST_F(PathGuard, APidFileStaysGuardedThroughAWatcherRestartAfterItsProcessIsGone) {
    // The service: this test's own child.
    pid_t svc = ::fork();
    if (svc == 0) {
        ::pause();
        ::_exit(0);
    }
    std::string pf = kRoot + "/gateway.pid";
    write_hermes_pid_file(pf, svc);
    load("[[protect]]\npidfile = \"" + pf + "\"\n");
    ASSERT_TRUE(wait_until([&] { return listed_protected(svc); }));
    // The watcher dies, and the service exits while none runs: the next
    // watcher finds a PID file naming no process. The last one would have
    // kept guarding it while it has its name (its service's tooling still
    // reads it); so must the next.
    ASSERT_TRUE(kill_watcher());
    ::kill(svc, SIGKILL);
    ::waitpid(svc, nullptr, 0);
    std::string before = read_file(pf).value_or("");
    auto r = lg({"load", "--config", kRoot + "/policy.toml"});  // returns once its first pass is done
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    if (sabotaged()) take_path_hooks_off();
    Session s;
    EXPECT_EQ(s.as_member([&] { return err_fd(::open(pf.c_str(), O_WRONLY | O_TRUNC)); }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::unlink(pf.c_str())); }), EPERM);
    EXPECT_EQ(read_file(pf).value_or(""), before);
}

// s6-svscan runs whatever its scan directory's entries name at its next
// rescan: an entry that is a symlink to the service directory is guarded
// as itself, so a member can neither rename nor remove it, nor put
// another link in its place.
TEST_F(PathGuard, AnS6ScanEntryThatIsASymlinkCannotBeRenamedRemovedOrReplaced) {
    const std::string services = kRoot + "/services", scan = kRoot + "/scan";
    const std::string entry = scan + "/gateway-default", other = scan + "/other";
    fs::create_directories(services + "/gateway");
    fs::create_directories(services + "/other");
    fs::create_directories(scan);
    write_text(services + "/gateway/run", "#!/bin/sh\nexec sleep 3600\n");
    ASSERT_EQ(::symlink((services + "/gateway").c_str(), entry.c_str()), 0) << std::strerror(errno);
    ASSERT_EQ(::symlink((services + "/other").c_str(), other.c_str()), 0) << std::strerror(errno);
    load("[[protect]]\ns6 = \"" + scan + "/gateway-*\"\n");
    ASSERT_TRUE(wait_until([&] { return lg({"status"}).out.find("matched: " + entry + "\n") != std::string::npos; }))
        << lg({"status"}).out;
    Session s;
    EXPECT_EQ(s.as_member([&] { return err(::rename(entry.c_str(), (scan + "/gateway-moved").c_str())); }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::unlink(entry.c_str())); }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::rename(other.c_str(), entry.c_str())); }), EPERM);
    EXPECT_EQ(s.as_member([&] { return err(::rename((services + "/gateway").c_str(), (services + "/moved").c_str())); }),
              EPERM);
    EXPECT_EQ(fs::read_symlink(entry), fs::path(services + "/gateway"));
    // An entry of no protected service stays the member's to change.
    EXPECT_EQ(s.as_member([&] { return err(::rename(other.c_str(), (scan + "/other-moved").c_str())); }), 0);
}
