#include "kernel/loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "base/error.h"
#include "base/privileges.h"
#include "base/fd.h"
#include "kernel/exec_words.h"
#include "kernel/guarded_inodes.h"
#include "kernel/libbpf_log.h"
#include "kernel/pins.h"
#include "kernel/protected_cgroups.h"
#include "liveguard.skel.h"

namespace liveguard {
namespace {

struct SkeletonDeleter {
    void operator()(struct liveguard_bpf* s) const { liveguard_bpf__destroy(s); }
};
using Skeleton = std::unique_ptr<struct liveguard_bpf, SkeletonDeleter>;

struct LinkDeleter {
    void operator()(struct bpf_link* l) const { bpf_link__destroy(l); }
};
using Link = std::unique_ptr<struct bpf_link, LinkDeleter>;

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

template <std::size_t N>
bool all_pinned(const char* const (&progs)[N]) {
    for (const char* prog : progs)
        if (!exists(pins::link(prog))) return false;
    return true;
}

bool in_set(const char* name, Mode mode) {
    if (mode == Mode::AuditOnly) {
        for (const char* p : pins::kAuditPrograms)
            if (std::strcmp(p, name) == 0) return true;
        return false;
    }
    for (const char* p : pins::kPrograms)
        if (std::strcmp(p, name) == 0) return true;
    return false;
}

void remove_all_links() {
    for (const char* prog : pins::kPrograms) ::unlink(pins::link(prog).c_str());
    for (const char* prog : pins::kAuditPrograms) ::unlink(pins::link(prog).c_str());
}

// The kernel refused the programs themselves (as opposed to a missing
// bpffs, say): what a fallback to audit-only can work around.
struct KernelRefused : Error {
    KernelRefused(const std::string& what, const std::string& hint, int e) : Error(what, hint), err(e) {}
    int err = 0;
};

// Opens and loads the skeleton; throws with libbpf's reason on failure.
Skeleton open_and_load(const LibbpfLogCapture& log, bool pin_maps, Mode mode) {
    Skeleton skel(liveguard_bpf__open());
    if (!skel) throw_errno("cannot open the BPF object", errno);
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj)
        bpf_program__set_autoload(prog, in_set(bpf_program__name(prog), mode));
    if (pin_maps) {
        struct bpf_map* map;
        bpf_object__for_each_map(map, skel->obj) {
            const char* name = bpf_map__name(map);
            if (name[0] == '.') continue;  // rodata/bss are not shared state
            if (int err = bpf_map__set_pin_path(map, pins::map(name).c_str()))
                throw_errno(std::string("cannot set the pin path of ") + name, -err);
        }
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
void guard_defaults(struct liveguard_bpf* skel, Mode mode) {
    std::uint32_t idx = LG_SETTING_AUDIT_ONLY;
    lg_settings audit{mode == Mode::AuditOnly ? 1u : 0u, 0};
    if (bpf_map_update_elem(bpf_map__fd(skel->maps.lg_settings), &idx, &audit, BPF_ANY) != 0)
        throw_errno("cannot record the mode", errno);
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

}  // namespace

// The argv copies attach to syscall tracepoints, which libbpf finds in
// tracefs; systemd mounts it on demand, a bare system may not have.
void ensure_tracefs() {
    if (::access("/sys/kernel/tracing/events", F_OK) == 0 ||
        ::access("/sys/kernel/debug/tracing/events", F_OK) == 0)
        return;
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
        throw_errno("tracefs is not mounted at /sys/kernel/tracing and mounting it failed", errno,
                    "mount it: mount -t tracefs nodev /sys/kernel/tracing");
}

const char* mode_name(Mode m) { return m == Mode::Enforce ? "enforce" : "audit-only"; }

std::optional<Mode> Guard::loaded_mode() {
    if (all_pinned(pins::kPrograms)) return Mode::Enforce;
    if (all_pinned(pins::kAuditPrograms) && !exists(pins::link("lg_task_kill"))) return Mode::AuditOnly;
    return std::nullopt;
}

bool Guard::is_loaded() { return loaded_mode().has_value(); }

namespace {

void load_mode(Mode mode, std::vector<std::string>& created) {
    LibbpfLogCapture log(false);
    Skeleton skel = open_and_load(log, true, mode);
    // Before attaching: the hooks must know their own pins from the first
    // moment they can refuse anything.
    guard_defaults(skel.get(), mode);
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
}

}  // namespace

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
    for (const char* name : pins::kMaps)
        if (!exists(pins::map(name))) created.push_back(pins::map(name));
    remove_all_links();
    result.mode = mode;
    try {
        try {
            load_mode(mode, created);
        } catch (const KernelRefused& k) {
            if (mode != Mode::Enforce || !fallback || (k.err != EPERM && k.err != EACCES &&
                                                       k.err != EINVAL && k.err != ENOTSUP &&
                                                       k.err != EOPNOTSUPP))
                throw;
            // Nothing of the enforcing attempt may stay attached.
            for (auto it = created.begin(); it != created.end();) {
                if (it->find("/link_") != std::string::npos) {
                    ::unlink(it->c_str());
                    it = created.erase(it);
                } else {
                    ++it;
                }
            }
            result.fallback_reason = k.what();
            result.mode = Mode::AuditOnly;
            load_mode(Mode::AuditOnly, created);
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
    // Links first, so enforcement stops before the maps it reads go away.
    std::vector<std::string> links;
    for (const char* prog : pins::kPrograms) links.push_back(pins::link(prog));
    for (const char* prog : pins::kAuditPrograms) links.push_back(pins::link(prog));
    for (const auto& p : links) {
        if (std::find(report.removed.begin(), report.removed.end(), p) != report.removed.end()) continue;
        if (::unlink(p.c_str()) == 0) report.removed.push_back(p);
        else if (errno != ENOENT) throw_errno("cannot remove " + p, errno);
    }
    for (const char* name : pins::kMaps) {
        std::string p = pins::map(name);
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
