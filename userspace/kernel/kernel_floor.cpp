#include "kernel/kernel_floor.h"

#include <bpf/libbpf.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "base/error.h"
#include "liveguard.skel.h"

namespace liveguard {
namespace {

// When each helper the object calls became callable from the program
// types it has (LSM and tracing: lsm, fentry, fmod_ret, tp_btf, tp), from
// the kernel's uapi/linux/bpf.h history as bcc's docs/kernel-versions.md
// records it, or the later commit that opened the helper to tracing and
// LSM programs. Only helpers the object calls: the unit test fails when
// it calls one this table lacks.
struct HelperRow {
    int id;
    const char* name;
    KernelVersion since;
};
constexpr HelperRow kHelpers[] = {
    {BPF_FUNC_map_lookup_elem, "bpf_map_lookup_elem", {3, 19}},              // d0003ec01c66
    {BPF_FUNC_map_update_elem, "bpf_map_update_elem", {3, 19}},              // d0003ec01c66
    {BPF_FUNC_map_delete_elem, "bpf_map_delete_elem", {3, 19}},              // d0003ec01c66
    {BPF_FUNC_get_current_pid_tgid, "bpf_get_current_pid_tgid", {4, 2}},     // ffeedafbf023
    {BPF_FUNC_get_current_comm, "bpf_get_current_comm", {4, 2}},             // ffeedafbf023
    {BPF_FUNC_send_signal, "bpf_send_signal", {5, 3}},                       // 8b401f9ed244
    {BPF_FUNC_probe_read_user, "bpf_probe_read_user", {5, 5}},               // 6ae08ae3dea2
    {BPF_FUNC_probe_read_kernel, "bpf_probe_read_kernel", {5, 5}},           // 6ae08ae3dea2
    {BPF_FUNC_probe_read_user_str, "bpf_probe_read_user_str", {5, 5}},       // 6ae08ae3dea2
    {BPF_FUNC_probe_read_kernel_str, "bpf_probe_read_kernel_str", {5, 5}},   // 6ae08ae3dea2
    // Cgroup socket programs had it first (5.7); tracing and LSM programs
    // from 95b861a7935b.
    {BPF_FUNC_get_current_ancestor_cgroup_id, "bpf_get_current_ancestor_cgroup_id", {5, 14}},
    {BPF_FUNC_ktime_get_boot_ns, "bpf_ktime_get_boot_ns", {5, 8}},           // 71d19214776e
    {BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve", {5, 8}},               // 457f44363a88
    {BPF_FUNC_ringbuf_submit, "bpf_ringbuf_submit", {5, 8}},                 // 457f44363a88
    // LSM programs had it in 5.11 (4cf1bc1f1045); tracing programs (the
    // tp and tp_btf ones here, and the lsm ones in the fmod_ret form) from
    // a10787e6d58c, which also freed it from CONFIG_BPF_LSM.
    {BPF_FUNC_task_storage_get, "bpf_task_storage_get", {5, 13}},
    // Socket programs had it first (5.2); LSM and fentry programs from
    // 8e4597c627fb.
    {BPF_FUNC_sk_storage_get, "bpf_sk_storage_get", {5, 11}},
    {BPF_FUNC_get_current_task_btf, "bpf_get_current_task_btf", {5, 11}},    // 3ca1032ab7ab
    {BPF_FUNC_task_pt_regs, "bpf_task_pt_regs", {5, 15}},                    // dd6e10fbd9f
    {BPF_FUNC_loop, "bpf_loop", {5, 17}},                                    // e6f2dd0f8067
};

// Map types, from bcc's table.
struct MapRow {
    enum bpf_map_type type;
    const char* what;
    KernelVersion since;
};
constexpr MapRow kMaps[] = {
    {BPF_MAP_TYPE_HASH, "hash maps", {3, 19}},                  // 0f8e4bd8a1fc
    {BPF_MAP_TYPE_ARRAY, "array maps", {3, 19}},                // 28fbcfa08d8e
    {BPF_MAP_TYPE_PERCPU_ARRAY, "per-CPU array maps", {4, 6}},  // a10423b87a7e
    {BPF_MAP_TYPE_RINGBUF, "ring buffer maps", {5, 8}},         // 457f44363a88
    {BPF_MAP_TYPE_SK_STORAGE, "socket storage maps", {5, 2}},   // 6ac99e8f23d4
    {BPF_MAP_TYPE_TASK_STORAGE, "task storage maps", {5, 11}},  // 4cf1bc1f1045
};

// Program kinds, as libbpf reads them from the section names. The loader
// turns the lsm programs into fmod_ret and fentry ones for the fmod_ret
// form; neither is newer than lsm, so the lsm row dates both forms.
struct KindRow {
    enum bpf_prog_type type;
    std::optional<enum bpf_attach_type> attach;  // nothing: any
    const char* what;
    KernelVersion since;
};
const KindRow kKinds[] = {
    {BPF_PROG_TYPE_LSM, BPF_LSM_MAC, "lsm programs", {5, 7}},                      // fc611f47f218
    {BPF_PROG_TYPE_TRACING, BPF_MODIFY_RETURN, "fmod_ret programs", {5, 7}},       // ae24082331d9
    {BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, "fentry programs", {5, 5}},          // fec56f5890d9
    {BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, "tp_btf programs", {5, 5}},          // f1b9509c2fb0
    {BPF_PROG_TYPE_TRACEPOINT, std::nullopt, "tracepoint programs", {4, 7}},       // 98b5c2c65c29
};

// What the object's shape needs besides.
constexpr const char* kSubprogramsWhat = "bpf-to-bpf calls";  // cc8b0b92a169
constexpr KernelVersion kSubprogramsSince{4, 16};
constexpr const char* kGlobalsWhat = "global variables";  // d8eca5bbb2be
constexpr KernelVersion kGlobalsSince{5, 2};

struct ElfDeleter {
    void operator()(Elf* e) const { elf_end(e); }
};
struct ObjectDeleter {
    void operator()(struct bpf_object* o) const { bpf_object__close(o); }
};

// What the object's code calls. Read from the ELF itself, not from
// bpf_program__insns(): before load libbpf keeps each program's own
// section only, and the subprograms in .text (where much of the calling
// is) join them at load.
struct Calls {
    std::set<int> helpers;
    std::set<std::string> kfuncs;
    bool subprograms = false;
};

Calls calls_in(const void* image, std::size_t size) {
    if (elf_version(EV_CURRENT) == EV_NONE)
        throw Error(std::string("cannot read the BPF object: libelf: ") + elf_errmsg(-1));
    std::unique_ptr<Elf, ElfDeleter> elf(elf_memory(static_cast<char*>(const_cast<void*>(image)), size));
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
        throw Error(std::string("cannot read the BPF object: not an ELF image (") + elf_errmsg(-1) + ")");

    // Calls relocated against an undefined symbol are kfuncs: the compiler
    // emits them as subprogram calls (src_reg BPF_PSEUDO_CALL) and libbpf
    // marks them BPF_PSEUDO_KFUNC_CALL only when it resolves them at load.
    std::map<std::size_t, std::vector<const bpf_insn*>> code;  // by section index
    std::map<std::pair<std::size_t, std::size_t>, std::string> externs;  // (section, insn) -> name
    Elf_Scn* symtab = nullptr;
    std::size_t strtab = 0;
    std::vector<Elf_Scn*> rels;
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn)) != nullptr;) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) throw Error(std::string("cannot read the BPF object's sections: ") + elf_errmsg(-1));
        if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
            Elf_Data* d = elf_getdata(scn, nullptr);
            if (!d || !d->d_buf) continue;
            auto* insns = static_cast<const bpf_insn*>(d->d_buf);
            auto& out = code[elf_ndxscn(scn)];
            for (std::size_t i = 0; i < d->d_size / sizeof(bpf_insn); ++i) out.push_back(&insns[i]);
        } else if (sh.sh_type == SHT_SYMTAB) {
            symtab = scn;
            strtab = sh.sh_link;
        } else if (sh.sh_type == SHT_REL) {
            rels.push_back(scn);
        }
    }
    Elf_Data* syms = symtab ? elf_getdata(symtab, nullptr) : nullptr;
    for (Elf_Scn* scn : rels) {
        GElf_Shdr sh;
        Elf_Data* d = elf_getdata(scn, nullptr);
        if (!syms || !d || !gelf_getshdr(scn, &sh) || !code.count(sh.sh_info)) continue;
        for (std::size_t i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); ++i) {
            GElf_Rel rel;
            GElf_Sym sym;
            if (!gelf_getrel(d, static_cast<int>(i), &rel) ||
                !gelf_getsym(syms, static_cast<int>(GELF_R_SYM(rel.r_info)), &sym) || sym.st_shndx != SHN_UNDEF)
                continue;
            const char* name = elf_strptr(elf.get(), strtab, sym.st_name);
            externs[{sh.sh_info, rel.r_offset / sizeof(bpf_insn)}] = name ? name : "?";
        }
    }

    Calls calls;
    for (const auto& [section, insns] : code) {
        for (std::size_t i = 0; i < insns.size(); ++i) {
            const bpf_insn& in = *insns[i];
            if (in.code == (BPF_LD | BPF_IMM | BPF_DW)) {
                ++i;  // the second half of a 16-byte load holds no opcode
                continue;
            }
            if (in.code != (BPF_JMP | BPF_CALL)) continue;
            auto ext = externs.find({section, i});
            if (ext != externs.end() || in.src_reg == BPF_PSEUDO_KFUNC_CALL)
                calls.kfuncs.insert(ext != externs.end() ? ext->second : "#" + std::to_string(in.imm));
            else if (in.src_reg == BPF_PSEUDO_CALL)
                calls.subprograms = true;
            else if (in.src_reg == 0)
                calls.helpers.insert(in.imm);
        }
    }
    return calls;
}

void add_need(std::vector<KernelNeed>& needs, std::string what, KernelVersion since) {
    for (const auto& n : needs)
        if (n.what == what) return;
    needs.push_back({std::move(what), since});
}

std::string type_name(const char* s, long fallback) { return s ? s : std::to_string(fallback); }

}  // namespace

std::string KernelVersion::str() const { return std::to_string(major) + "." + std::to_string(minor); }

KernelVersion parse_kernel_version(const std::string& release) {
    int major = 0, minor = 0;
    if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2 || major < 0 || minor < 0) return {};
    return {major, minor};
}

std::string KernelFloor::reason() const { return what + " (" + version.str() + ")"; }

std::string KernelFloor::warning() const {
    if (unknown.empty()) return {};
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
    return "the floor leaves out what this build cannot date (" + list + "); the real one may be higher";
}

std::optional<KernelNeed> helper_since(int id) {
    for (const auto& h : kHelpers)
        if (h.id == id) return KernelNeed{h.name, h.since};
    return std::nullopt;
}

KernelFloor kernel_floor_of(const void* image, std::size_t size) {
    KernelFloor f;
    Calls calls = calls_in(image, size);
    for (int id : calls.helpers) {
        f.helper_ids.push_back(id);
        if (auto h = helper_since(id))
            add_need(f.needs, h->what, h->since);
        else
            f.unknown.push_back("unknown helper " + std::to_string(id));
    }
    for (const auto& k : calls.kfuncs) f.unknown.push_back("kfunc " + k);
    if (calls.subprograms) add_need(f.needs, kSubprogramsWhat, kSubprogramsSince);

    // Program kinds and map types as libbpf reads them; opening parses
    // the object and loads nothing.
    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "liveguard");
    std::unique_ptr<struct bpf_object, ObjectDeleter> obj(bpf_object__open_mem(image, size, &opts));
    if (!obj) throw_errno("cannot open the BPF object to read its kernel floor", errno);
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, obj.get()) {
        enum bpf_prog_type type = bpf_program__type(prog);
        enum bpf_attach_type attach = bpf_program__expected_attach_type(prog);
        auto row = std::find_if(std::begin(kKinds), std::end(kKinds), [&](const KindRow& k) {
            return k.type == type && (!k.attach || *k.attach == attach);
        });
        if (row != std::end(kKinds))
            add_need(f.needs, row->what, row->since);
        else
            f.unknown.push_back("program kind " + type_name(libbpf_bpf_prog_type_str(type), type) + "/" +
                                type_name(libbpf_bpf_attach_type_str(attach), attach) + " (" +
                                bpf_program__name(prog) + ")");
    }
    struct bpf_map* map;
    bpf_object__for_each_map(map, obj.get()) {
        if (bpf_map__is_internal(map)) {
            add_need(f.needs, kGlobalsWhat, kGlobalsSince);
            continue;
        }
        enum bpf_map_type type = bpf_map__type(map);
        auto row = std::find_if(std::begin(kMaps), std::end(kMaps), [&](const MapRow& m) { return m.type == type; });
        if (row != std::end(kMaps))
            add_need(f.needs, row->what, row->since);
        else
            f.unknown.push_back("map type " + type_name(libbpf_bpf_map_type_str(type), type) + " (" +
                                bpf_map__name(map) + ")");
    }
    std::sort(f.unknown.begin(), f.unknown.end());
    f.unknown.erase(std::unique(f.unknown.begin(), f.unknown.end()), f.unknown.end());

    std::stable_sort(f.needs.begin(), f.needs.end(),
                     [](const KernelNeed& a, const KernelNeed& b) { return a.since > b.since; });
    if (f.needs.empty()) throw Error("the BPF object uses nothing the kernel-floor table knows");
    f.version = f.needs.front().since;
    for (const auto& n : f.needs)
        if (n.since == f.version) f.what += (f.what.empty() ? "" : ", ") + n.what;
    return f;
}

const KernelFloor& kernel_floor() {
    static const KernelFloor floor = [] {
        std::size_t size = 0;
        const void* image = liveguard_bpf__elf_bytes(&size);
        return kernel_floor_of(image, size);
    }();
    return floor;
}

}  // namespace liveguard
