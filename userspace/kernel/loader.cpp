#include "kernel/loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/fd.h"
#include "base/privileges.h"
#include "kernel/exec_words.h"
#include "kernel/guarded_inodes.h"
#include "kernel/libbpf_log.h"
#include "kernel/pins.h"
#include "kernel/protected_cgroups.h"
#include "kernel/skeleton.h"

namespace liveguard {
namespace {

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// Serialises load/unload: two `load`s at once must not both attach.
UniqueFd lock_pin_dir() {
    if (::mkdir(pins::kDir, 0700) != 0 && errno != EEXIST)
        throw_errno(std::string("cannot create ") + pins::kDir, errno,
                    "check that bpffs at /sys/fs/bpf is writable");
    UniqueFd fd(::open(pins::kDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) throw_errno(std::string("cannot open ") + pins::kDir, errno);
    if (::flock(fd.get(), LOCK_EX) != 0) throw_errno("cannot lock the pin directory", errno);
    return fd;
}

std::string load_failure_hint(int err) {
    if (err == EPERM || err == EACCES)
        return "the kernel refused the BPF LSM program; run `liveguard-bpf doctor` to see why "
               "(root, `bpf` in the LSM list, a kernel that permits BPF LSM programs)";
    if (err == EINVAL || err == ENOTSUP || err == EOPNOTSUPP)
        return "this kernel lacks a feature liveguard needs; run `liveguard-bpf doctor`";
    return "run `liveguard-bpf doctor`, or `liveguard-bpf -v load` for libbpf's log";
}

bool all_pinned(const std::vector<std::string>& progs) {
    for (const auto& prog : progs)
        if (!exists(pins::link(prog.c_str()))) return false;
    return true;
}

// Every entry of the pin directory this tool names (links and maps), of
// this version or another: what an interrupted load leaves, and what
// unload removes.
std::vector<std::string> pinned_entries(bool links_only) {
    std::vector<std::string> out;
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(pins::kDir), ::closedir);
    if (!dir) return out;
    while (struct dirent* e = ::readdir(dir.get())) {
        std::string_view name = e->d_name;
        bool link = name.substr(0, 5) == "link_";
        if (link || (!links_only && name.substr(0, 3) == "lg_"))
            out.push_back(std::string(pins::kDir) + "/" + e->d_name);
    }
    // Links first, so enforcement stops before the maps it reads go away.
    std::stable_partition(out.begin(), out.end(),
                          [](const std::string& p) { return p.find("/link_") != std::string::npos; });
    return out;
}

// The kernel refused the programs themselves (as opposed to a missing
// bpffs, say): what a fallback to audit-only can work around.
struct KernelRefused : Error {
    KernelRefused(const std::string& what, const std::string& hint, int e) : Error(what, hint), err(e) {}
    int err = 0;
};

// Opens and loads the skeleton with the programs of `mode` and its
// settings in place; throws with libbpf's reason on failure.
Skeleton open_and_load(const LibbpfLogCapture& log, Mode mode) {
    Skeleton skel = open_skeleton();
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj)
        bpf_program__set_autoload(prog, program_runs_in(prog, mode));
    skel->rodata->lg_audit_only = mode == Mode::AuditOnly;
    struct bpf_map* map;
    bpf_object__for_each_map(map, skel->obj) {
        if (bpf_map__is_internal(map)) continue;  // rodata is no shared state
        const char* name = bpf_map__name(map);
        if (int err = bpf_map__set_pin_path(map, pins::map(name).c_str()))
            throw_errno(std::string("cannot set the pin path of ") + name, -err);
    }
    if (int err = liveguard_bpf__load(skel.get()); err != 0) {
        int e = -err;
        throw KernelRefused(errno_message("the kernel refused to load liveguard's BPF programs", e) +
                                "\n" + log.tail(),
                            load_failure_hint(e), e);
    }
    return skel;
}

// What the side doors guard before any policy: liveguard's own pins, the
// service-control binaries and the verbs that make them mutate.
void guard_defaults(struct liveguard_bpf* skel) {
    GuardedInodes inodes(bpf_map__fd(skel->maps.lg_guarded_inodes));
    auto dir = inode_key(pins::kDir);
    if (!dir) throw_errno(std::string("cannot stat ") + pins::kDir, errno);
    inodes.add(*dir, LG_INODE_PIN_DIR, 0);
    for (const auto& b : find_control_binaries())
        if (auto key = inode_key(b.path)) inodes.add(*key, b.kind, 0);
    rebuild_cgroup_filter(bpf_map__fd(skel->maps.lg_protected_cgroups),
                          bpf_map__fd(skel->maps.lg_cgroup_filter));
    ExecWords words(bpf_map__fd(skel->maps.lg_exec_words));
    for (const auto& v : mutating_systemctl_verbs()) words.add(v, LG_WORD_MUTATING_VERB);
    for (const auto& v : global_systemctl_verbs()) words.add(v, LG_WORD_GLOBAL_VERB);
}

void remove_pins(const std::vector<std::string>& paths) {
    for (const auto& p : paths) ::unlink(p.c_str());
}

// The argv copies of audit-only mode attach to syscall tracepoints, which
// libbpf finds in tracefs; systemd mounts it on demand, a bare system may
// not have.
void ensure_tracefs() {
    if (::access("/sys/kernel/tracing/events", F_OK) == 0 ||
        ::access("/sys/kernel/debug/tracing/events", F_OK) == 0)
        return;
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
        throw_errno("tracefs is not mounted at /sys/kernel/tracing and mounting it failed", errno,
                    "mount it: mount -t tracefs nodev /sys/kernel/tracing");
}

// Loads, attaches and pins the programs of `mode`; returns how many.
std::size_t load_mode(Mode mode, std::vector<std::string>& created) {
    LibbpfLogCapture log(false);
    Skeleton skel = open_and_load(log, mode);
    // Before attaching: the hooks must know their own pins from the first
    // moment they can refuse anything.
    guard_defaults(skel.get());
    std::vector<Link> links;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        if (!bpf_program__autoload(prog)) continue;
        Link link(bpf_program__attach(prog));
        if (!link) {
            int e = errno;
            throw KernelRefused(errno_message(std::string("cannot attach ") + bpf_program__name(prog), e) +
                                    "\n" + log.tail(),
                                load_failure_hint(e), e);
        }
        std::string path = pins::link(bpf_program__name(prog));
        links.push_back(std::move(link));
        if (int err = bpf_link__pin(links.back().get(), path.c_str()))
            throw_errno("cannot pin " + path, -err);
        created.push_back(path);
    }
    return links.size();
}

}  // namespace

std::optional<Mode> Guard::loaded_mode() {
    if (all_pinned(programs_of(Mode::Enforce))) return Mode::Enforce;
    if (all_pinned(programs_of(Mode::AuditOnly)) && !exists(pins::link("lg_task_kill"))) return Mode::AuditOnly;
    return std::nullopt;
}

bool Guard::is_loaded() { return loaded_mode().has_value(); }

LoadResult Guard::load(Mode mode, bool fallback) {
    require_root("load");
    pins::require_bpffs();
    ensure_tracefs();
    UniqueFd lock = lock_pin_dir();
    LoadResult result;
    if (auto m = loaded_mode()) {
        result.outcome = LoadOutcome::AlreadyLoaded;
        result.mode = *m;
        return result;
    }
    // Links pinned without all of their siblings mean an interrupted load;
    // they are replaced below. Maps pinned earlier are reused.
    std::vector<std::string> created;
    for (const auto& name : map_names())
        if (!exists(pins::map(name.c_str()))) created.push_back(pins::map(name.c_str()));
    remove_pins(pinned_entries(/*links_only=*/true));
    result.mode = mode;
    try {
        try {
            result.programs = load_mode(mode, created);
        } catch (const KernelRefused& k) {
            if (mode != Mode::Enforce || !fallback || (k.err != EPERM && k.err != EACCES &&
                                                       k.err != EINVAL && k.err != ENOTSUP &&
                                                       k.err != EOPNOTSUPP))
                throw;
            // Nothing of the enforcing attempt may stay attached.
            auto link = [](const std::string& p) { return p.find("/link_") != std::string::npos; };
            remove_pins(pinned_entries(/*links_only=*/true));
            created.erase(std::remove_if(created.begin(), created.end(), link), created.end());
            result.fallback_reason = k.what();
            result.mode = Mode::AuditOnly;
            result.programs = load_mode(Mode::AuditOnly, created);
        }
    } catch (...) {
        remove_pins(created);
        ::rmdir(pins::kDir);  // only succeeds when nothing else is pinned
        throw;
    }
    return result;
}

UnloadReport Guard::unload() {
    require_root("unload");
    pins::require_bpffs();
    UnloadReport report;
    if (!exists(pins::kDir)) return report;
    UniqueFd lock = lock_pin_dir();
    report.was_loaded = is_loaded();
    for (const auto& p : pinned_entries(/*links_only=*/false)) {
        if (::unlink(p.c_str()) == 0) report.removed.push_back(p);
        else if (errno != ENOENT) throw_errno("cannot remove " + p, errno);
    }
    if (::rmdir(pins::kDir) != 0 && errno != ENOENT)
        throw_errno(std::string("cannot remove ") + pins::kDir, errno,
                    "something else was pinned there; inspect it with ls");
    return report;
}

TrialResult Guard::trial() {
    TrialResult r;
    LibbpfLogCapture log(false);
    Skeleton skel(liveguard_bpf__open());
    if (!skel) {
        r.error = errno;
        return r;
    }
    if (int err = liveguard_bpf__load(skel.get()); err != 0) {
        r.error = -err;
        r.detail = log.tail(6);
        return r;
    }
    r.loaded = true;
    if (int err = liveguard_bpf__attach(skel.get()); err != 0) {
        r.error = -err;
        r.detail = log.tail(6);
        return r;
    }
    r.attached = true;
    return r;
}

}  // namespace liveguard
