// Finding what ships with the binary, from where the binary is.
#include "base/install_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <system_error>

#include "base/error.h"
#include "base/fd.h"
#include "gen/plugin_files.h"

namespace liveguard {
namespace {

constexpr const char* kPluginFile = "liveguard_pytest.py";

bool holds_plugin(const std::filesystem::path& dir) {
    std::error_code ec;
    return std::filesystem::is_regular_file(dir / kPluginFile, ec);
}

// A name that changes with the plugin's content: a copy written by
// another build is never taken for this one's.
std::string embedded_tag() {
    std::size_t h = 0;
    for (const auto& f : embedded::kPluginFiles)
        h = h * 1000003u ^ std::hash<std::string_view>{}(f.text) ^ std::hash<std::string_view>{}(f.path);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016zx", h);
    return std::string(buf, 12);
}

// Where the copy goes: root's under /run/liveguard; another user's in
// its runtime directory, else in /tmp under a name of its uid, which must
// then be its own directory, not a link or someone else's.
std::filesystem::path embedded_home() {
    std::string name = "python-" + embedded_tag();
    if (::geteuid() == 0) return std::filesystem::path("/run/liveguard") / name;
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    struct stat st {};
    if (xdg && *xdg == '/' && ::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid())
        return std::filesystem::path(xdg) / ("liveguard-" + name);
    return std::filesystem::path("/tmp") / ("liveguard-" + std::to_string(::geteuid()) + "-" + name);
}

// Root's copy is read by sessions that run as another user (run --user):
// modes are set whatever the umask. A directory is trusted only while it
// is this user's own and no one else may write in it: a copy planted in
// /tmp by another user would run in this user's pytest.
constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;

void check_own_dir(const std::filesystem::path& dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) throw_errno("cannot inspect " + dir.string(), errno);
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022))
        throw Error(dir.string() + " is not a directory of this user's own that only it may write",
                    "remove it, or set LIVEGUARD_PLUGIN_DIR to the directory that holds " + std::string(kPluginFile));
}

void make_own_dir(const std::filesystem::path& dir) {
    mode_t mode = ::geteuid() == 0 ? kDirMode : 0700;
    bool made = ::mkdir(dir.c_str(), mode) == 0;
    if (!made && errno != EEXIST) throw_errno("cannot create " + dir.string(), errno);
    if (made && ::chmod(dir.c_str(), mode) != 0) throw_errno("cannot set the mode of " + dir.string(), errno);
    check_own_dir(dir);
}

// Written last: a copy cut short (a full disk, a kill) lacks it and is
// written again.
constexpr const char* kComplete = ".complete";

}  // namespace

void write_embedded_plugin(const std::string& dir) {
    std::filesystem::path top(dir);
    if (::geteuid() == 0 && top.parent_path() == "/run/liveguard") ::mkdir("/run/liveguard", 0755);
    make_own_dir(top);
    for (const auto& f : embedded::kPluginFiles) {
        std::filesystem::path to = top / f.path;
        for (std::filesystem::path d = top; const auto& part : std::filesystem::path(f.path).parent_path()) {
            d /= part;
            make_own_dir(d);
        }
        std::string tmp = to.string() + ".tmp." + std::to_string(::getpid());
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, kFileMode));
        if (!fd || ::fchmod(fd.get(), kFileMode) != 0) throw_errno("cannot write " + tmp, errno);
        std::string_view rest = f.text;
        while (!rest.empty()) {
            ssize_t n = ::write(fd.get(), rest.data(), rest.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                int err = n < 0 ? errno : EIO;
                ::unlink(tmp.c_str());
                throw_errno("cannot write " + tmp, err);
            }
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        if (::rename(tmp.c_str(), to.c_str()) != 0) {
            int err = errno;
            ::unlink(tmp.c_str());
            throw_errno("cannot put the pytest plugin at " + to.string(), err);
        }
    }
    std::string complete = (top / kComplete).string();
    UniqueFd done(::open(complete.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, kFileMode));
    if (!done || ::fchmod(done.get(), kFileMode) != 0) throw_errno("cannot write " + complete, errno);
}

std::string plugin_dir() {
    if (const char* env = std::getenv("LIVEGUARD_PLUGIN_DIR"); env && *env) return env;
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot find the pytest plugin: /proc/self/exe: " + ec.message(),
                        "set LIVEGUARD_PLUGIN_DIR to the directory that holds " + std::string(kPluginFile));
    std::filesystem::path dir = exe.parent_path();
    std::filesystem::path build = dir / "python";
    if (holds_plugin(build)) return build.string();
    std::filesystem::path installed = (dir / ".." / "lib" / "liveguard-bpf" / "python").lexically_normal();
    if (holds_plugin(installed)) return installed.string();
    // Neither: the binary was copied alone (the static build). Its own
    // copy, written out once per build.
    std::filesystem::path home = embedded_home();
    if (std::filesystem::exists(std::filesystem::symlink_status(home, ec))) check_own_dir(home);
    if (!std::filesystem::is_regular_file(home / kComplete, ec)) {
        try {
            write_embedded_plugin(home.string());
        } catch (const Error& e) {
            throw Error(std::string("the pytest plugin ") + kPluginFile + " is in neither " + build.string() +
                            " nor " + installed.string() + ", and the binary's own copy could not be written: " +
                            e.what(),
                        "reinstall liveguard-bpf (or `make` in its tree), or set LIVEGUARD_PLUGIN_DIR to the "
                        "directory that holds " + std::string(kPluginFile));
        }
    }
    return home.string();
}

}  // namespace liveguard
