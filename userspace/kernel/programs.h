#pragma once
// Which of the object's programs run in which mode. Derived from the
// programs themselves, so a new hook needs no list kept in step with it:
// programs on a BPF trampoline (lsm/, fentry/) enforce; programs named
// lg_audit_* report in audit-only mode, for kernels that refuse the
// trampolines; the rest (tp_btf bookkeeping at fork and cgroup moves)
// serve both.
#include <string>
#include <string_view>
#include <vector>

struct bpf_object;   // libbpf
struct bpf_program;

namespace liveguard {

// Enforce: the LSM programs refuse. AuditOnly: tracepoints only report
// what would have been refused (kernels that will not run BPF LSM programs).
enum class Mode { Enforce, AuditOnly };

const char* mode_name(Mode m);

// How the enforcing programs reach the kernel's hooks: as BPF LSM programs
// where `bpf` is an active LSM, as fmod_ret programs on the security_*
// functions where it is built but not listed; audit-only where the kernel
// runs neither (no trampolines).
enum class Attach { Lsm, FmodRet, AuditOnly };

const char* attach_name(Attach a);  // "lsm", "fmod_ret", "audit-only"
Mode mode_of(Attach a);

bool program_runs_in(const struct bpf_program* prog, Mode mode);

// Hooks newer than some kernels this runs on, where an older hook sees the
// same act there: before 6.2 a POSIX ACL was set through inode_setxattr,
// and inode_set_acl did not exist; a kernel without file_ioctl_compat
// (before 6.8, or 6.1 and 6.6 before their 2024 updates) sends a 32-bit
// process's ioctl to file_ioctl. A kernel without one is no gap.
bool hook_newer_than_its_cover(std::string_view hook);
// The second program of a hook, which only the fmod_ret form attaches:
// there the kernel skips a program already running on the CPU, preempted
// tasks included (bpf/lib/twins.h).
bool is_twin(const struct bpf_program* prog);
// The hook of an lsm/ program ("task_kill"); empty for any other program.
std::string_view lsm_hook_of(const struct bpf_program* prog);
// The kernel function a fentry or fmod_ret program attaches to directly
// (its section's "fentry/<name>", "fmod_ret/<name>"), or empty; and every
// such function of the object.
std::string_view traced_function_of(const struct bpf_program* prog);
std::vector<std::string> traced_functions(struct bpf_object* obj);
// The functions the object's programs on such newer hooks attach to in
// `attach` form (bpf_lsm_* or security_*).
std::vector<std::string> newer_hook_functions(struct bpf_object* obj, Attach attach);

// Where the programs of `mode` attach: their section names
// ("lsm/task_kill", ...), in the object's order.
std::vector<std::string> attach_points_of(Mode mode);

// The names of every map the object defines (data sections excluded).
std::vector<std::string> map_names();

}  // namespace liveguard
