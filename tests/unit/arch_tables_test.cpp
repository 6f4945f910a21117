// The per-architecture tables of the kernel side (bpf/arch/*.h) against
// the kernel's own: every call number the hooks tell calls apart by is the
// number in the kernel's uapi headers for that architecture and ABI (the
// 64-bit one and the 32-bit compat one), and every register the macros
// read is a member of that architecture's struct pt_regs in its BTF
// (bpf/vmlinux/<arch>/vmlinux.h, which CO-RE relocates by name). A
// number copied from the wrong table, or a register of the other
// architecture, fails here instead of in a hook that never matches.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string arch_header(const std::string& arch) {
    return slurp(LIVEGUARD_SOURCE_DIR "/bpf/arch/" + arch + ".h");
}

// LG_NR_<NAME> and LG_NR_COMPAT_<NAME> of an arch header, by call name.
struct Numbers {
    std::map<std::string, long> native, compat;
};

Numbers table_numbers(const std::string& header) {
    Numbers n;
    std::regex def(R"(#define LG_NR_(COMPAT_)?([A-Z0-9_]+) (\d+))");
    for (auto it = std::sregex_iterator(header.begin(), header.end(), def); it != std::sregex_iterator(); ++it) {
        std::string name = (*it)[2];
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        ((*it)[1].matched ? n.compat : n.native)[name] = std::stol((*it)[3]);
    }
    return n;
}

// __NR_<name> from a uapi header: "#define __NR_write 1", asm-generic's
// "#define __NR3264_fallocate 47" and arm's "(__NR_SYSCALL_BASE + 4)".
std::map<std::string, long> uapi_numbers(const std::string& text) {
    std::map<std::string, long> m;
    std::regex def(R"(#define __NR(?:3264)?_([a-z0-9_]+)\s+\(?(?:__NR_SYSCALL_BASE\s*\+\s*)?(\d+)\)?)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), def); it != std::sregex_iterator(); ++it)
        m.emplace((*it)[1], std::stol((*it)[2]));
    return m;
}

// Compares one table; skipped (not passed) when Debian's headers for that
// architecture are not installed (make test installs them).
void expect_numbers_match(const std::map<std::string, long>& ours, const std::string& uapi_path) {
    std::string text = slurp(uapi_path);
    if (text.empty()) GTEST_SKIP() << uapi_path << " is missing (make deps installs it)";
    auto theirs = uapi_numbers(text);
    ASSERT_FALSE(ours.empty());
    for (const auto& [name, nr] : ours) {
        auto it = theirs.find(name);
        ASSERT_NE(it, theirs.end()) << "the kernel has no call " << name << " in " << uapi_path;
        EXPECT_EQ(nr, it->second) << name << " in " << uapi_path;
    }
}

// Members named by the header's register macros: (regs)->NAME,
// BPF_CORE_READ(regs, NAME...) and BPF_CORE_READ(task, thread_info.NAME).
std::set<std::string> registers_read(const std::string& header, const std::string& base) {
    std::set<std::string> names;
    std::regex use("(?:\\(regs\\)->|BPF_CORE_READ\\(regs, |bpf_task_pt_regs\\(task\\), )([a-z_0-9]+)");
    for (auto it = std::sregex_iterator(header.begin(), header.end(), use); it != std::sregex_iterator(); ++it)
        names.insert((*it)[1]);
    std::regex ti("BPF_CORE_READ\\(task, " + base + "\\.([a-z_0-9]+)\\)");
    for (auto it = std::sregex_iterator(header.begin(), header.end(), ti); it != std::sregex_iterator(); ++it)
        names.insert("thread_info." + std::string((*it)[1]));
    return names;
}

// The body of `struct NAME {` in a vmlinux.h, up to its closing "};".
std::string struct_body(const std::string& vmlinux, const std::string& name) {
    auto start = vmlinux.find("\nstruct " + name + " {\n");
    if (start == std::string::npos) return {};
    auto end = vmlinux.find("\n};\n", start);
    return vmlinux.substr(start, end - start);
}

bool has_member(const std::string& body, const std::string& member) {
    return std::regex_search(body, std::regex("[ *]" + member + "(\\[\\d+\\])?;"));
}

void expect_registers_exist(const std::string& arch) {
    std::string header = arch_header(arch);
    std::string vmlinux = slurp(LIVEGUARD_SOURCE_DIR "/bpf/vmlinux/" + arch + "/vmlinux.h");
    ASSERT_FALSE(vmlinux.empty());
    std::string regs = struct_body(vmlinux, "pt_regs");
    ASSERT_FALSE(regs.empty()) << "no struct pt_regs in " << arch << "'s vmlinux.h";
    std::set<std::string> used = registers_read(header, "thread_info");
    ASSERT_FALSE(used.empty());
    for (const std::string& m : used) {
        if (m.rfind("thread_info.", 0) == 0)
            EXPECT_TRUE(has_member(struct_body(vmlinux, "thread_info"), m.substr(12))) << m << " on " << arch;
        else
            EXPECT_TRUE(has_member(regs, m)) << "struct pt_regs has no " << m << " on " << arch;
    }
}

TEST(ArchTables, X86CallNumbersAreTheKernels) {
    Numbers n = table_numbers(arch_header("x86_64"));
    expect_numbers_match(n.native, "/usr/include/x86_64-linux-gnu/asm/unistd_64.h");
    expect_numbers_match(n.compat, "/usr/include/x86_64-linux-gnu/asm/unistd_32.h");
}

TEST(ArchTables, Arm64CallNumbersAreTheKernels) {
    Numbers n = table_numbers(arch_header("aarch64"));
    expect_numbers_match(n.native, "/usr/aarch64-linux-gnu/include/asm-generic/unistd.h");
    // AArch32 tasks on an arm64 kernel use arm's EABI numbers.
    expect_numbers_match(n.compat, "/usr/arm-linux-gnueabihf/include/asm/unistd-eabi.h");
}

TEST(ArchTables, BothArchitecturesNameTheSameCalls) {
    // A call told apart on one architecture and not the other would be a
    // door open on one of them. arm64 has no inotify_init (only init1).
    Numbers x86 = table_numbers(arch_header("x86_64")), arm = table_numbers(arch_header("aarch64"));
    for (const auto& [name, nr] : x86.native)
        if (name != "inotify_init") EXPECT_TRUE(arm.native.count(name)) << name << " missing on arm64";
    for (const auto& [name, nr] : x86.compat) EXPECT_TRUE(arm.compat.count(name)) << name << " (compat) missing on arm64";
    EXPECT_EQ(x86.native.size(), arm.native.size() + 1);
}

TEST(ArchTables, X86RegistersAreMembersOfItsPtRegs) { expect_registers_exist("x86_64"); }

TEST(ArchTables, Arm64RegistersAreMembersOfItsPtRegs) { expect_registers_exist("aarch64"); }

}  // namespace
