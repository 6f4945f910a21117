// The programs' argument table (bpf/lib/hook.h, kernel/hook_args.h): every
// LSM program reads its arguments by name, and this machine's kernel BTF
// gives them. The same check runs in the VM on every kernel of the matrix
// (tests/vm/lifecycle_test.cpp).
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <string>

#include "kernel/hook_args.h"
#include "kernel/kernel_btf.h"
#include "kernel/programs.h"
#include "kernel/skeleton.h"

namespace {

using namespace liveguard;

TEST(HookArgs, EveryLsmProgramDeclaresTheArgumentsItReads) {
    Skeleton skel = open_skeleton();
    std::set<std::string> declared;
    for (const auto& a : declared_hook_args(skel->obj)) {
        declared.insert(a.hook);
        EXPECT_FALSE(a.names.empty() && !a.reads_ret) << a.hook << " reads nothing";
    }
    std::size_t lsm = 0;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        std::string hook(lsm_hook_of(prog));
        if (hook.empty()) continue;
        // A hook's twin shares its program's struct (bpf/lib/twins.h).
        if (!is_twin(prog)) ++lsm;
        EXPECT_TRUE(declared.count(hook)) << bpf_program__name(prog) << " (lsm/" << hook
                                          << ") reads its arguments by position: declare it with LG_HOOK";
    }
    EXPECT_EQ(declared.size(), lsm) << "one lg_args struct per LSM program";
}

// Every hook has its twin for the fmod_ret form, and nothing else is one.
TEST(HookArgs, EveryHookHasATwin) {
    Skeleton skel = open_skeleton();
    std::set<std::string> firsts, twins;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        std::string name = bpf_program__name(prog);
        if (lsm_hook_of(prog).empty()) {
            EXPECT_FALSE(is_twin(prog)) << name;
            continue;
        }
        (is_twin(prog) ? twins : firsts).insert(is_twin(prog) ? name.substr(0, name.size() - 5) : name);
    }
    EXPECT_FALSE(firsts.empty());
    EXPECT_EQ(firsts, twins);
}

TEST(HookArgs, TheFunctionOfEachForm) {
    EXPECT_EQ(hook_function("task_kill", Attach::Lsm), "bpf_lsm_task_kill");
    EXPECT_EQ(hook_function("task_kill", Attach::FmodRet), "security_task_kill");
    EXPECT_EQ(hook_function("bprm_check_security", Attach::FmodRet), "security_bprm_check");
    EXPECT_EQ(hook_function("file_free_security", Attach::FmodRet), "security_file_free");
}

TEST(HookArgs, EveryHookResolvesOnThisMachinesKernel) {
    if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "this kernel has no BTF";
    Skeleton skel = open_skeleton();
    auto newer = kernel_functions_among(newer_hook_functions(skel->obj, liveguard::Attach::Lsm));
    for (auto attach : {Attach::Lsm, Attach::FmodRet})
        for (const auto& [hook, why] : unresolved_hooks(skel->obj, attach))
            if (!hook_newer_than_its_cover(hook) || newer.count("bpf_lsm_" + hook))
                ADD_FAILURE() << attach_name(attach) << ": " << hook << ": " << why;
}

TEST(HookArgs, AnArgumentTheKernelDoesNotNameIsReported) {
    if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "this kernel has no BTF";
    const struct btf& btf = kernel_btf("the test");
    HookArgs renamed{"task_kill", {"p", "no_such_argument"}, true};
    std::string why = unresolved_args(btf, renamed, "security_task_kill");
    EXPECT_NE(why.find("no_such_argument"), std::string::npos) << why;
    EXPECT_NE(why.find("(it takes p, info, sig, cred)"), std::string::npos) << why;
    EXPECT_EQ(unresolved_args(btf, {"task_kill", {"p", "sig"}, true}, "security_task_kill"), "");
    EXPECT_NE(unresolved_args(btf, renamed, "security_no_such_hook").find("not in this kernel's BTF"),
              std::string::npos);
}

}  // namespace
