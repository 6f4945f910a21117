// A member that tries to load BPF programs of its own cannot undo a
// refusal: the load itself is refused (the bpf_load door), and a program
// attached where the guard's runs, returning "allowed", would change
// nothing in either attach form anyway: fmod_ret and LSM programs can only
// add refusals, the first non-zero return ends the chain.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "harness.h"

using namespace lgtest;

namespace {

// `return 0;` as an fmod_ret program on `function` (or, with `lsm`, as a
// BPF LSM program on the hook), attached; the fds are left to the caller's
// exit. Returns 0 or the errno of the step that failed.
int attach_allow_all(const char* function, bool lsm) {
    struct btf* btf = btf__load_vmlinux_btf();
    if (!btf) return errno;
    int id = btf__find_by_name_kind(btf, function, BTF_KIND_FUNC);
    btf__free(btf);
    if (id < 0) return ENOENT;
    const struct bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},  // r0 = 0
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    enum bpf_attach_type type = lsm ? BPF_LSM_MAC : BPF_MODIFY_RETURN;
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
                .attach_btf_id = static_cast<__u32>(id));
    int prog = bpf_prog_load(lsm ? BPF_PROG_TYPE_LSM : BPF_PROG_TYPE_TRACING, "allow_all", "GPL", insns,
                             2, &opts);
    if (prog < 0) return errno;
    if (bpf_link_create(prog, 0, type, nullptr) < 0) return errno;
    return 0;
}

}  // namespace

TEST_F(Guard, AMembersOwnProgramsCannotUndoARefusal) {
    Target t;
    protect(t.pid());
    Session s;
    int rc = s.as_member([&] {
        // Both forms, whichever the guard uses: each is refused at load,
        // and the kill after them is refused too.
        int fmod = attach_allow_all("security_task_kill", false);
        int lsm = attach_allow_all("bpf_lsm_task_kill", true);
        if (fmod != EPERM) return 1000 + fmod;
        if (lsm != EPERM) return 2000 + lsm;
        return sys_kill(t.pid(), SIGTERM);
    });
    EXPECT_EQ(rc, EPERM) << "1000+errno: the fmod_ret program's load was not refused (0: it attached); "
                            "2000+errno: the LSM one's";
    EXPECT_TRUE(t.untouched());
}
