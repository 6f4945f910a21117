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
#include "kernel/attach_errors.h"
#include "kernel/kernel_floor.h"
#include "kernel/libbpf_log.h"
#include "kernel/loader.h"
#include "kernel/lsm_list.h"
#include "kernel/pins.h"

namespace liveguard {
namespace {

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

    // 2. Kernel version: the newest helper, map type or program kind the
    // programs use, read from the embedded object (kernel/kernel_floor.h).
    // Below it `load` fails in every form, audit-only included.
    struct utsname u {};
    ::uname(&u);
    std::string kernel = std::string("Linux ") + u.release;
    try {
        const KernelFloor& floor = kernel_floor();
        std::string need = floor.version.str();
        KernelVersion running = parse_kernel_version(u.release);
        if (running == KernelVersion{})
            add("kernel", CheckState::Warn,
                "cannot read a version from the kernel release \"" + std::string(u.release) +
                    "\"; the programs need " + need + " (" + floor.what + ")");
        else if (running < floor.version)
            add("kernel", CheckState::Fail,
                kernel + " is older than " + need + ", which the programs need for " + floor.what,
                "boot Linux >= " + need + " (the lsm form also needs CONFIG_BPF_LSM=y and bpf in lsm=; "
                "the fmod_ret form needs neither)");
        else if (!floor.warning().empty())
            add("kernel", CheckState::Warn,
                kernel + " (the programs need " + need + ": " + floor.what + "); " + floor.warning());
        else
            add("kernel", CheckState::Ok, kernel + " (the programs need " + need + ": " + floor.what + ")");
    } catch (const std::exception& e) {
        add("kernel", CheckState::Warn, kernel + "; the programs' kernel floor cannot be read: " + e.what());
    }

    // 3. BTF, for CO-RE.
    if (::access("/sys/kernel/btf/vmlinux", R_OK) == 0)
        add("btf", CheckState::Ok, "/sys/kernel/btf/vmlinux present");
    else
        add("btf", CheckState::Fail, "/sys/kernel/btf/vmlinux missing",
                     "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");

    // 4-5. securityfs and the LSM list.
    auto lsm = root ? read_lsm_list() : std::nullopt;
    if (fs_is(kSecurityfs, SECURITYFS_MAGIC))
        add("securityfs", CheckState::Ok, std::string("mounted at ") + kSecurityfs);
    else
        add("securityfs", CheckState::Warn,
            std::string("not mounted at ") + kSecurityfs +
                (lsm && lsm->mounted_here ? " (read through a private mount)" : ""),
            std::string("mount -t securityfs securityfs ") + kSecurityfs);
    bool bpf_listed = lsm && lsm_list_has_bpf(lsm->text);
    // Without `bpf` listed the programs attach as fmod_ret instead: the
    // lsm form is better (a refusal lets the other LSMs run), not needed.
    if (!lsm)
        add("bpf-lsm", CheckState::Fail, "cannot read the active LSM list",
                     std::string("mount securityfs (mount -t securityfs securityfs ") + kSecurityfs +
                         ") and run doctor as root");
    else if (bpf_listed)
        add("bpf-lsm", CheckState::Ok, "active LSMs: " + lsm->text);
    else
        add("bpf-lsm", CheckState::Warn,
            "`bpf` is not among the active LSMs (" + lsm->text +
                "): the programs attach as fmod_ret on the security_* functions instead",
            "optional: lsm=" + lsm->text + ",bpf on the kernel command line (then reboot) for the "
                                             "lsm form");

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

    // 8-10. The real thing: each form `load` would try, in its order,
    // loaded and attached without pinning, until the kernel takes one.
    if (!root || !caps) {
        add("load", CheckState::Skipped, "needs root");
        add("attach", CheckState::Skipped, "needs root");
        return r;
    }
    std::string refused;  // the forms tried before, with why
    for (const AttachChoice& choice : attach_order()) {
        Attach attach = choice.attach;
        if (attach == Attach::AuditOnly) break;
        TrialResult t = Guard::trial(attach);
        std::string form = attach_name(attach);
        if (!t.loaded || !t.attached) {
            std::string why = attach_error_name(t.error);
            std::string detail = std::string(t.loaded ? "attaching" : "loading") + " the " + form +
                                 " programs failed (" + why + ")";
            if (std::string reason = attach_error_reason(t.error); !reason.empty()) detail += ": " + reason;
            if (!t.detail.empty() && LibbpfLogCapture::verbose()) detail += "\n" + t.detail;
            add(form, CheckState::Warn, detail, "run `liveguard-bpf -v doctor` for libbpf's log");
            refused += (refused.empty() ? "" : "; ") + form + " refused (" + why + ")";
            continue;
        }
        r.form = form;
        add("load", CheckState::Ok, "the kernel accepted and attached liveguard's " + form +
                                        " programs (and they were detached again)");
        std::string gaps;
        for (const auto& u : t.uncovered) gaps += (gaps.empty() ? "" : "; ") + u;
        std::string why = refused.empty() ? choice.reason : refused;
        if (!gaps.empty())
            add("form", CheckState::Warn, "`load` will choose " + form + " (" + why + "); not enforced: " + gaps,
                attach == Attach::FmodRet ? "lsm=...,bpf on the kernel command line gives the lsm form"
                                          : "");
        else if (attach == Attach::Lsm)
            add("form", CheckState::Ok, "`load` will choose lsm (" + why + "): enforcement complete");
        else
            add("form", CheckState::Ok,
                "`load` will choose fmod_ret (" + why +
                    "): enforcement complete; it differs from lsm in that a refusal returns before the "
                    "LSMs after it in security_* run (they could only have refused too)");
        return r;
    }
    r.form = attach_name(Attach::AuditOnly);
    add("load", CheckState::Fail,
        "the kernel refused every enforcing form (" + refused + "): `load` will choose audit-only",
        "enforcement needs a kernel that runs BPF LSM or fmod_ret programs (a distribution kernel; "
        "`make test` proves them in a VM)");
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
        .str("form", r.form)
        .raw("checks", checks)
        .done();
}

}  // namespace liveguard
