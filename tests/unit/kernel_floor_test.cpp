// The kernel floor (kernel/kernel_floor.h): read from the embedded object,
// it names bpf_loop's 5.17; every helper the object calls is dated, so a
// helper added without a version fails here; what the table cannot date is
// named and left out of the floor; kernel versions compare as numbers.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "kernel/kernel_floor.h"
#include "kernel/skeleton.h"

namespace liveguard {
// Failures print 5.17, not bytes.
void PrintTo(const KernelVersion& v, std::ostream* os) { *os << v.str(); }
}  // namespace liveguard

namespace {

using namespace liveguard;

TEST(KernelFloor, TheEmbeddedObjectNeeds517ForBpfLoop) {
    const KernelFloor& f = kernel_floor();
    EXPECT_GE(f.version, (KernelVersion{5, 17}));
    EXPECT_NE(f.what.find("bpf_loop"), std::string::npos) << f.reason();
    EXPECT_NE(f.reason().find("bpf_loop (" + f.version.str() + ")"), std::string::npos) << f.reason();
    ASSERT_FALSE(f.needs.empty());
    for (const auto& n : f.needs) EXPECT_LE(n.since, f.version) << n.what;
    EXPECT_TRUE(std::is_sorted(f.needs.begin(), f.needs.end(),
                               [](const KernelNeed& a, const KernelNeed& b) { return a.since > b.since; }));
}

TEST(KernelFloor, EveryHelperTheObjectCallsIsInTheTable) {
    const KernelFloor& f = kernel_floor();
    ASSERT_FALSE(f.helper_ids.empty());
    for (int id : f.helper_ids) EXPECT_TRUE(helper_since(id).has_value()) << "helper " << id << " has no version";
    // Nor any map type, program kind or kfunc the table cannot date.
    EXPECT_TRUE(f.unknown.empty()) << f.warning();
    EXPECT_TRUE(f.warning().empty());
}

// Before load libbpf holds each program's own section only; the floor
// reads the subprograms in .text too, so it sees at least as much.
TEST(KernelFloor, ReadsAtLeastWhatLibbpfShowsOfEachProgram) {
    Skeleton skel = open_skeleton();
    std::set<int> shown;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        const struct bpf_insn* insns = bpf_program__insns(prog);
        for (std::size_t i = 0; i < bpf_program__insn_cnt(prog); ++i)
            if (insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == 0) shown.insert(insns[i].imm);
    }
    const auto& ids = kernel_floor().helper_ids;
    for (int id : shown) EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << "helper " << id;
}

// A helper the table lacks is named and left out; the floor falls to the
// newest one it knows.
TEST(KernelFloor, AnUnknownHelperIsNamedAndTheFloorComesFromTheKnownOnes) {
    std::size_t size = 0;
    const auto* image = static_cast<const unsigned char*>(liveguard_bpf__elf_bytes(&size));
    std::vector<unsigned char> copy(image, image + size);
    // Every `call bpf_loop` becomes a call of helper 4000.
    struct bpf_insn loop {};
    loop.code = BPF_JMP | BPF_CALL;
    loop.imm = BPF_FUNC_loop;
    struct bpf_insn unknown = loop;
    unknown.imm = 4000;
    int patched = 0;
    for (std::size_t off = 0; off + sizeof loop <= copy.size(); off += sizeof loop) {
        if (std::memcmp(&copy[off], &loop, sizeof loop) != 0) continue;
        std::memcpy(&copy[off], &unknown, sizeof unknown);
        ++patched;
    }
    ASSERT_GT(patched, 0);

    KernelFloor f = kernel_floor_of(copy.data(), copy.size());
    EXPECT_EQ(f.unknown, std::vector<std::string>{"unknown helper 4000"});
    EXPECT_NE(f.warning().find("unknown helper 4000"), std::string::npos) << f.warning();
    EXPECT_EQ(f.what.find("bpf_loop"), std::string::npos) << f.reason();
    EXPECT_LT(f.version, (KernelVersion{5, 17}));
    EXPECT_FALSE(helper_since(4000).has_value());
}

TEST(KernelFloor, AnImageThatIsNoObjectThrowsWithTheCause) {
    const char junk[] = "not an ELF image";
    try {
        kernel_floor_of(junk, sizeof junk);
        FAIL() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("BPF object"), std::string::npos) << e.what();
    }
}

TEST(KernelVersion, ParsesTheReleaseAndComparesAsNumbers) {
    EXPECT_EQ(parse_kernel_version("6.1.0-50-amd64"), (KernelVersion{6, 1}));
    EXPECT_EQ(parse_kernel_version("5.10.0"), (KernelVersion{5, 10}));
    EXPECT_EQ(parse_kernel_version("5.17"), (KernelVersion{5, 17}));
    EXPECT_EQ(parse_kernel_version("6.12.48+deb13-amd64"), (KernelVersion{6, 12}));
    EXPECT_EQ(parse_kernel_version("junk"), KernelVersion{});
    EXPECT_EQ(parse_kernel_version("6"), KernelVersion{});
    EXPECT_EQ(parse_kernel_version(""), KernelVersion{});

    EXPECT_LT((KernelVersion{5, 15}), (KernelVersion{5, 17}));
    EXPECT_LT((KernelVersion{5, 9}), (KernelVersion{5, 10}));  // not "5.9" > "5.10"
    EXPECT_GT((KernelVersion{6, 0}), (KernelVersion{5, 17}));
    EXPECT_GE((KernelVersion{5, 17}), (KernelVersion{5, 17}));
    EXPECT_LT(parse_kernel_version("5.15.0-91-generic"), (KernelVersion{5, 17}));
    EXPECT_GE(parse_kernel_version("6.1.0-50-amd64"), (KernelVersion{5, 17}));
    EXPECT_EQ((KernelVersion{5, 17}).str(), "5.17");
}

}  // namespace
