#include "cli/doctor.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "base/cgroup.h"
#include "base/json.h"
#include "base/proc.h"
#include "kernel/libbpf_log.h"
#include "kernel/loader.h"
#include "kernel/pins.h"

namespace liveguard {
namespace {

constexpr const char* kSecurityfs = "/sys/kernel/security";

bool fs_is(const char* path, long magic) {
    struct statfs sfs {};
    return ::statfs(path, &sfs) == 0 && static_cast<long>(sfs.f_type) == magic;
}

bool has_effective_cap(int cap) {
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &hdr, data) != 0) return false;
    return data[cap / 32].effective & (1u << (cap % 32));
}

// The LSM list; mounts securityfs privately when the host has not.
std::optional<std::string> read_lsm_list(bool& mounted_here) {
    mounted_here = false;
    if (fs_is(kSecurityfs, SECURITYFS_MAGIC)) {
        auto s = read_small_file(std::string(kSecurityfs) + "/lsm", 4096);
        return s;
    }
    char tmpl[] = "/tmp/liveguard-securityfs.XXXXXX";
    if (!::mkdtemp(tmpl)) return std::nullopt;
    std::optional<std::string> s;
    if (::mount("securityfs", tmpl, "securityfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                nullptr) == 0) {
        mounted_here = true;
        s = read_small_file(std::string(tmpl) + "/lsm", 4096);
        ::umount2(tmpl, MNT_DETACH);
    }
    ::rmdir(tmpl);
    return s;
}

const char* state_word(CheckState s) {
    switch (s) {
        case CheckState::Ok: return "ok";
        case CheckState::Warn: return "warn";
        case CheckState::Fail: return "FAIL";
        case CheckState::Skipped: return "skip";
    }
    return "?";
}

}  // namespace

std::pair<int, int> parse_kernel_version(const std::string& release) {
    int major = 0, minor = 0;
    if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
    return {major, minor};
}

bool lsm_list_has_bpf(const std::string& list) {
    std::size_t pos = 0;
    while (pos <= list.size()) {
        auto end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        std::string item = list.substr(pos, end - pos);
        while (!item.empty() && (item.back() == '\n' || item.back() == ' ')) item.pop_back();
        if (item == "bpf") return true;
        pos = end + 1;
    }
    return false;
}

bool DoctorReport::enforcement_possible() const {
    for (const auto& c : checks)
        if (c.state == CheckState::Fail) return false;
    return true;
}

DoctorReport run_doctor() {
    DoctorReport r;
    auto add = [&](std::string name, CheckState s, std::string detail, std::string fix = {}) {
        r.checks.push_back({std::move(name), s, std::move(detail), std::move(fix)});
        return s;
    };

    // 1. Privileges.
    bool root = ::geteuid() == 0;
    bool caps = has_effective_cap(CAP_SYS_ADMIN) ||
                (has_effective_cap(CAP_BPF) && has_effective_cap(CAP_PERFMON) &&
                 has_effective_cap(CAP_MAC_ADMIN));
    if (root && caps)
        add("privileges", CheckState::Ok, "running as root with CAP_SYS_ADMIN");
    else
        add("privileges", CheckState::Fail,
                     root ? "root, but without CAP_SYS_ADMIN (or CAP_BPF+CAP_PERFMON+CAP_MAC_ADMIN)"
                          : "not running as root",
                     "run it with sudo: sudo liveguard-bpf doctor");

    // 2. Kernel version: task storage keyed by pidfd needs 5.11.
    struct utsname u {};
    ::uname(&u);
    auto [maj, min] = parse_kernel_version(u.release);
    if (maj > 5 || (maj == 5 && min >= 11))
        add("kernel", CheckState::Ok, std::string("Linux ") + u.release);
    else
        add("kernel", CheckState::Fail,
                     std::string("Linux ") + u.release + " is older than 5.11",
                     "boot a kernel >= 5.11 with CONFIG_BPF_LSM=y");

    // 3. BTF, for CO-RE.
    if (::access("/sys/kernel/btf/vmlinux", R_OK) == 0)
        add("btf", CheckState::Ok, "/sys/kernel/btf/vmlinux present");
    else
        add("btf", CheckState::Fail, "/sys/kernel/btf/vmlinux missing",
                     "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");

    // 4-5. securityfs and the LSM list.
    bool mounted_here = false;
    auto lsm = root ? read_lsm_list(mounted_here) : std::nullopt;
    if (fs_is(kSecurityfs, SECURITYFS_MAGIC))
        add("securityfs", CheckState::Ok, std::string("mounted at ") + kSecurityfs);
    else
        add("securityfs", CheckState::Warn,
            std::string("not mounted at ") + kSecurityfs +
                (mounted_here ? " (read through a private mount)" : ""),
            std::string("mount -t securityfs securityfs ") + kSecurityfs);
    std::string lsm_text = lsm ? *lsm : "";
    while (!lsm_text.empty() && lsm_text.back() == '\n') lsm_text.pop_back();
    bool bpf_listed = lsm && lsm_list_has_bpf(*lsm);
    if (!lsm)
        add("bpf-lsm", CheckState::Fail, "cannot read the active LSM list",
                     std::string("mount securityfs (mount -t securityfs securityfs ") + kSecurityfs +
                         ") and run doctor as root");
    else if (bpf_listed)
        add("bpf-lsm", CheckState::Ok, "active LSMs: " + lsm_text);
    else
        add("bpf-lsm", CheckState::Fail, "`bpf` is not among the active LSMs: " + lsm_text,
                     "add it on the kernel command line: lsm=" + lsm_text +
                         ",bpf (then reboot)");

    // 6. bpffs.
    if (fs_is(pins::kBpffs, BPF_FS_MAGIC))
        add("bpffs", CheckState::Ok, std::string("mounted at ") + pins::kBpffs);
    else
        add("bpffs", CheckState::Fail, std::string("not mounted at ") + pins::kBpffs,
                     std::string("mount -t bpf bpf ") + pins::kBpffs);

    // 7. cgroup v2.
    try {
        std::string m = cgroup2_mount();
        add("cgroup2", CheckState::Ok,
            "mounted at " + m + (m != "/sys/fs/cgroup" ? " (hybrid hierarchy)" : ""));
    } catch (const std::exception& e) {
        add("cgroup2", CheckState::Fail, e.what(),
                     "mount -t cgroup2 none /sys/fs/cgroup");
    }

    // 8-9. The real thing: load and attach, pinning nothing.
    if (!root || !caps) {
        add("load", CheckState::Skipped, "needs root");
        add("attach", CheckState::Skipped, "needs root");
    } else {
        TrialResult t = Guard::trial();
        if (t.loaded) {
            add("load", CheckState::Ok, "the kernel accepted liveguard's LSM program");
        } else {
            std::string why = std::strerror(t.error);
            std::string detail, fix;
            if ((t.error == EPERM || t.error == EACCES) && bpf_listed) {
                detail = "BPF LSM listed, yet the kernel refused to load LSM programs (" + why +
                         "): this kernel does not permit BPF programs that need a trampoline";
                fix = "enforcement is impossible on this kernel; use a kernel that loads BPF LSM "
                      "programs (e.g. a distribution kernel with lsm=...,bpf; `make test` does so "
                      "in a VM)";
            } else {
                detail = "the kernel refused to load the LSM program (" + why + ")";
                fix = bpf_listed ? "run `liveguard-bpf -v doctor` for libbpf's log"
                                 : "enable the BPF LSM first (see bpf-lsm above)";
            }
            if (!t.detail.empty() && LibbpfLogCapture::verbose()) detail += "\n" + t.detail;
            add("load", CheckState::Fail, detail, fix);
        }
        if (!t.loaded)
            add("attach", CheckState::Skipped, "nothing loaded");
        else if (t.attached)
            add("attach", CheckState::Ok, "attached to lsm/task_kill (and detached again)");
        else
            add("attach", CheckState::Fail,
                         std::string("attach failed: ") + std::strerror(t.error),
                         "`bpf` must be an active LSM; see bpf-lsm above");
    }
    return r;
}

std::string format_doctor_text(const DoctorReport& r) {
    std::string out;
    for (const auto& c : r.checks) {
        char head[64];
        std::snprintf(head, sizeof head, "[%-4s] %-11s ", state_word(c.state), c.name.c_str());
        out += head + c.detail + "\n";
        if (!c.fix.empty() && (c.state == CheckState::Fail || c.state == CheckState::Warn))
            out += "                   fix: " + c.fix + "\n";
    }
    out += r.enforcement_possible() ? "enforcement: possible\n"
                                    : "enforcement: impossible on this machine (see FAIL above)\n";
    return out;
}

std::string format_doctor_json(const DoctorReport& r) {
    std::string checks = "[";
    for (std::size_t i = 0; i < r.checks.size(); ++i) {
        const auto& c = r.checks[i];
        if (i) checks += ",";
        const char* st = c.state == CheckState::Ok     ? "ok"
                         : c.state == CheckState::Warn ? "warn"
                         : c.state == CheckState::Fail ? "fail"
                                                       : "skipped";
        checks += json::ObjectWriter()
                      .str("name", c.name)
                      .str("state", st)
                      .str("detail", c.detail)
                      .str("fix", c.fix)
                      .done();
    }
    checks += "]";
    return json::ObjectWriter()
        .boolean("enforcement_possible", r.enforcement_possible())
        .raw("checks", checks)
        .done();
}

}  // namespace liveguard
