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
#include <map>
#include <optional>
#include <set>

#include "base/error.h"
#include "base/fd.h"
#include "base/privileges.h"
#include "kernel/attach_errors.h"
#include "kernel/btrfs_layout.h"
#include "kernel/exec_words.h"
#include "kernel/counters.h"
#include "kernel/fmod_ret.h"
#include "kernel/guarded_inodes.h"
#include "kernel/hook_args.h"
#include "kernel/kernel_btf.h"
#include "kernel/libbpf_log.h"
#include "kernel/lsm_list.h"
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
        return "the kernel refused liveguard's programs; run `liveguard-bpf doctor` to see why "
               "(root, a kernel that permits BPF programs on trampolines: LSM or fmod_ret)";
    if (err == kKernelEnotsupp) return attach_error_reason(err) + "; run `liveguard-bpf doctor`";
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

// The machine's namespace of a kind ("mnt", "net"): the one pid 1 runs in
// (the loader itself may run in a service's private one). Members may not
// mount in the machine's mount namespace, nor write the machine's network
// sysctls. In a container whose pid 1 is out of reach, the loader's own
// stands in.
std::uint32_t host_namespace(const std::string& kind) {
    struct stat st {};
    if (::stat(("/proc/1/ns/" + kind).c_str(), &st) == 0) return static_cast<std::uint32_t>(st.st_ino);
    int first = errno;
    if (::stat(("/proc/self/ns/" + kind).c_str(), &st) == 0) return static_cast<std::uint32_t>(st.st_ino);
    throw_errno("cannot read the machine's " + kind + " namespace (/proc/1/ns/" + kind + ")", first,
                "liveguard-bpf load needs /proc mounted");
}

// The program selection and settings of `attach`, before load. Returns
// the hooks left unenforced, each with why: the kernel gives no place to
// attach to, or not the arguments the program reads.
std::vector<std::string> prepare(struct liveguard_bpf* skel, Attach attach) {
    Mode mode = mode_of(attach);
    std::set<std::string> present;
    std::map<std::string, std::string> unresolved;
    if (attach != Attach::AuditOnly) {
        // Judged by the function of the chosen form: a kernel built without
        // CONFIG_BPF_LSM has security_inode_set_acl but no bpf_lsm_ one.
        std::vector<std::string> wanted = newer_hook_functions(skel->obj, attach);
        for (const auto& f : traced_functions(skel->obj)) wanted.push_back(f);
        present = kernel_functions_among(wanted);
        unresolved = unresolved_hooks(skel->obj, attach);
    }
    // A kernel older than the hook is no gap: an older hook sees the act.
    auto absent_newer = [&](std::string_view hook) {
        return hook_newer_than_its_cover(hook) && !present.count(hook_function(hook, attach));
    };
    std::vector<std::string> uncovered;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        // A hook's twin runs in the fmod_ret form only (bpf/lib/twins.h).
        bool runs = program_runs_in(prog, mode) && (attach == Attach::FmodRet || !is_twin(prog));
        std::string hook(lsm_hook_of(prog));
        std::string fentry(traced_function_of(prog));
        if (runs && !hook.empty() && absent_newer(hook)) {
            runs = false;
        } else if (runs && !fentry.empty() && !present.count(fentry)) {
            // A kernel function the program attaches to directly (not a
            // hook) may be missing or inlined in some build: left out.
            runs = false;
            uncovered.push_back(fentry + ": not a traceable function of this kernel");
        } else if (runs && unresolved.count(hook)) {
            // Left out rather than failing the whole load.
            runs = false;
            uncovered.push_back(hook + ": " + unresolved[hook]);
        }
        bpf_program__set_autoload(prog, runs);
    }
    skel->rodata->lg_audit_only = mode == Mode::AuditOnly;
    skel->rodata->lg_fmod_ret_form = attach == Attach::FmodRet;
    skel->rodata->lg_host_mnt_ns = host_namespace("mnt");
    skel->rodata->lg_host_net_ns = host_namespace("net");
    skel->rodata->lg_host_uts_ns = host_namespace("uts");
    if (auto btrfs = btrfs_layout()) {
        skel->rodata->lg_btrfs_known = true;
        skel->rodata->lg_btrfs_inode_vfs_inode = btrfs->inode_vfs_inode;
        skel->rodata->lg_btrfs_inode_root = btrfs->inode_root;
        skel->rodata->lg_btrfs_root_anon_dev = btrfs->root_anon_dev;
    }
    if (attach == Attach::FmodRet) {
        auto plan = plan_fmod_ret(skel->obj);
        apply_fmod_ret(skel->obj, plan);
        for (const auto& t : plan)
            if (!t.problem.empty() && !absent_newer(t.hook) && !unresolved.count(t.hook))
                uncovered.push_back(t.hook + ": " + t.problem);
    }
    return uncovered;
}

// The object opened for `attach`, its programs selected: for an enforcing
// form, relocated against the kernel's BTF with the hooks' arguments laid
// out as this kernel passes them (kernel/hook_args.h).
struct OpenedObject {
    std::optional<HookArgsBtf> args;  // outlives the skeleton's load
    Skeleton skel;
    std::vector<std::string> uncovered;
};

OpenedObject open_for(Attach attach) {
    OpenedObject o;
    if (attach != Attach::AuditOnly) o.args.emplace(open_skeleton()->obj, attach);
    o.skel = open_skeleton(o.args ? o.args->path() : std::string());
    o.uncovered = prepare(o.skel.get(), attach);
    return o;
}

// Opens and loads the skeleton for `attach`, its maps pinned; throws with
// libbpf's reason on failure.
OpenedObject open_and_load(const LibbpfLogCapture& log, Attach attach) {
    OpenedObject o = open_for(attach);
    struct bpf_map* map;
    bpf_object__for_each_map(map, o.skel->obj) {
        if (bpf_map__is_internal(map)) continue;  // rodata is no shared state
        const char* name = bpf_map__name(map);
        if (int err = bpf_map__set_pin_path(map, pins::map(name).c_str()))
            throw_errno(std::string("cannot set the pin path of ") + name, -err);
    }
    if (int err = liveguard_bpf__load(o.skel.get()); err != 0) {
        int e = -err;
        throw KernelRefused(errno_message(std::string("the kernel refused to load liveguard's ") +
                                              attach_name(attach) + " programs",
                                          e) +
                                "\n" + log.tail(),
                            load_failure_hint(e), e);
    }
    return o;
}

// The programs a load in `attach` form pins on this kernel.
std::vector<std::string> expected_programs(Attach attach) {
    Skeleton skel = open_skeleton();
    prepare(skel.get(), attach);
    std::vector<std::string> out;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj)
        if (bpf_program__autoload(prog)) out.emplace_back(bpf_program__name(prog));
    return out;
}

// How the pinned link of a program is attached: LSM or fmod_ret.
std::optional<Attach> attach_of_pinned(const char* prog) {
    UniqueFd fd(bpf_obj_get(pins::link(prog).c_str()));
    if (!fd) return std::nullopt;
    struct bpf_link_info info {};
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return std::nullopt;
    return info.tracing.attach_type == BPF_LSM_MAC ? Attach::Lsm : Attach::FmodRet;
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
    // Reused maps (a load after an interrupted one) may hold sessions
    // whose members were not marked: those the programs that ran then
    // failed to mark, and those forked while no program was attached.
    // Until the guard is unloaded, membership is also asked of the cgroup
    // and the parent.
    __u64 key = 0;
    if (bpf_map_get_next_key(bpf_map__fd(skel->maps.lg_sessions), nullptr, &key) == 0 ||
        read_counters(bpf_map__fd(skel->maps.lg_counters))[LG_COUNTER_MEMBER_MARK_FAILED] != 0)
        skel->bss->lg_unmarked_members = 1;
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

// Loads, attaches and pins the programs of `attach`; returns how many.
std::size_t load_attached(Attach attach, std::vector<std::string>& created,
                          std::vector<std::string>& uncovered) {
    LibbpfLogCapture log(false);
    OpenedObject opened = open_and_load(log, attach);
    uncovered = opened.uncovered;
    struct liveguard_bpf* skel = opened.skel.get();
    // Before attaching: the hooks must know their own pins from the first
    // moment they can refuse anything.
    guard_defaults(skel);
    std::vector<Link> links;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        if (!bpf_program__autoload(prog)) continue;
        Link link(bpf_program__attach(prog));
        if (!link) {
            int e = errno;
            throw KernelRefused(std::string("cannot attach ") + bpf_program__name(prog) + ": " + attach_error_name(e) +
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

// A program goes on running after its pin is unlinked until the kernel has
// released the link and taken it off its hook, which newer kernels defer
// (an RCU grace period, then a work item: over a second under emulation,
// and over ten on an emulated machine whose CPUs are all busy).
// A program is freed only once it is off its hook, so enforcement has
// stopped once every program of ours is gone, and `unload` says so only
// then.
void wait_programs_gone(const std::vector<__u32>& ids) {
    for (int round = 0; round < 3000; ++round) {
        bool any = false;
        for (__u32 id : ids) {
            int fd = bpf_prog_get_fd_by_id(id);
            if (fd >= 0) {
                ::close(fd);
                any = true;
            }
        }
        if (!any) return;
        ::usleep(10000);
    }
    throw Error("liveguard's programs still run 30 s after their pins were removed",
                "something else holds them; list them with bpftool prog");
}

bool refused_by_kernel(int err) {
    return err == EPERM || err == EACCES || err == EINVAL || err == ENOTSUP || err == EOPNOTSUPP ||
           err == kKernelEnotsupp;
}

}  // namespace

std::vector<AttachChoice> attach_order() {
    std::vector<AttachChoice> order;
    auto lsm = read_lsm_list();
    if (!lsm)
        order.push_back({Attach::Lsm, "the active LSM list cannot be read; assuming bpf is in it"});
    else if (lsm_list_has_bpf(lsm->text))
        order.push_back({Attach::Lsm, "bpf is an active LSM (" + lsm->text + ")"});
    // Where bpf is not listed, LSM programs would attach and never run.
    std::string why_not_lsm = lsm && !lsm_list_has_bpf(lsm->text)
                                  ? "bpf is not an active LSM (" + lsm->text + ")"
                                  : "the kernel refused the lsm form";
    order.push_back({Attach::FmodRet, why_not_lsm});
    order.push_back({Attach::AuditOnly, "the kernel refused both enforcing forms"});
    return order;
}

AttachChoice choose_attach() { return attach_order().front(); }

std::vector<std::string> uncovered_hooks(Attach attach) {
    Skeleton skel = open_skeleton();
    return prepare(skel.get(), attach);
}

std::optional<Attach> Guard::loaded_attach() {
    if (auto a = attach_of_pinned("lg_task_kill")) return all_pinned(expected_programs(*a)) ? a : std::nullopt;
    if (all_pinned(expected_programs(Attach::AuditOnly))) return Attach::AuditOnly;
    return std::nullopt;
}

bool Guard::is_loaded() { return loaded_attach().has_value(); }

LoadResult Guard::load(std::optional<Attach> forced) {
    require_root("load");
    pins::require_bpffs();
    ensure_tracefs();
    LoadResult result;
    if (forced == Attach::Lsm) {
        if (auto lsm = read_lsm_list(); lsm && !lsm_list_has_bpf(lsm->text))
            throw Error("--attach lsm: bpf is not an active LSM (" + lsm->text +
                            "), so LSM programs would attach and never run",
                        "use --attach fmod_ret (or no --attach), or add bpf to lsm= on the "
                        "kernel command line and reboot");
    }
    std::vector<AttachChoice> order =
        forced ? std::vector<AttachChoice>{{*forced, "asked for with --attach"}} : attach_order();
    UniqueFd lock = lock_pin_dir();
    if (auto a = loaded_attach()) {
        result.outcome = LoadOutcome::AlreadyLoaded;
        result.attach = *a;
        return result;
    }
    // Links pinned without all of their siblings mean an interrupted load;
    // they are replaced below. Maps pinned earlier are reused.
    std::vector<std::string> created;
    for (const auto& name : map_names())
        if (!exists(pins::map(name.c_str()))) created.push_back(pins::map(name.c_str()));
    remove_pins(pinned_entries(/*links_only=*/true));
    try {
        for (std::size_t i = 0; i < order.size(); ++i) {
            result.attach = order[i].attach;
            result.reason = order[i].reason;
            try {
                result.programs = load_attached(order[i].attach, created, result.uncovered);
                break;
            } catch (const KernelRefused& k) {
                if (i + 1 == order.size() || !refused_by_kernel(k.err)) throw;
                // Nothing of the refused attempt may stay attached.
                auto link = [](const std::string& p) { return p.find("/link_") != std::string::npos; };
                remove_pins(pinned_entries(/*links_only=*/true));
                created.erase(std::remove_if(created.begin(), created.end(), link), created.end());
                result.uncovered.clear();
                result.refused.push_back(std::string(attach_name(order[i].attach)) + ": " + k.what());
                if (order[i + 1].attach == Attach::AuditOnly) result.fallback_reason = k.what();
            }
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
    std::vector<__u32> prog_ids;
    for (const auto& p : pinned_entries(/*links_only=*/false)) {
        if (p.find("/link_") != std::string::npos) {
            UniqueFd fd(bpf_obj_get(p.c_str()));
            struct bpf_link_info info {};
            __u32 len = sizeof info;
            if (fd && bpf_obj_get_info_by_fd(fd.get(), &info, &len) == 0) prog_ids.push_back(info.prog_id);
        }
        if (::unlink(p.c_str()) == 0) report.removed.push_back(p);
        else if (errno != ENOENT) throw_errno("cannot remove " + p, errno);
    }
    if (::rmdir(pins::kDir) != 0 && errno != ENOENT)
        throw_errno(std::string("cannot remove ") + pins::kDir, errno,
                    "something else was pinned there; inspect it with ls");
    wait_programs_gone(prog_ids);
    return report;
}

TrialResult Guard::trial(Attach attach) {
    TrialResult r;
    LibbpfLogCapture log(false);
    std::optional<OpenedObject> o;
    try {
        o.emplace(open_for(attach));
    } catch (const Error& e) {
        r.error = EINVAL;
        r.detail = e.what();
        return r;
    }
    r.uncovered = o->uncovered;
    if (int err = liveguard_bpf__load(o->skel.get()); err != 0) {
        r.error = -err;
        r.detail = log.tail(6);
        return r;
    }
    r.loaded = true;
    if (int err = liveguard_bpf__attach(o->skel.get()); err != 0) {
        r.error = -err;
        r.detail = log.tail(6);
        return r;
    }
    r.attached = true;
    return r;
}

}  // namespace liveguard
