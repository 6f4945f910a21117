#include "kernel/programs.h"

#include <bpf/libbpf.h>

#include <string_view>

#include "kernel/hook_args.h"
#include "kernel/skeleton.h"

namespace liveguard {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

const char* mode_name(Mode m) { return m == Mode::Enforce ? "enforce" : "audit-only"; }

const char* attach_name(Attach a) {
    switch (a) {
        case Attach::Lsm: return "lsm";
        case Attach::FmodRet: return "fmod_ret";
        case Attach::AuditOnly: return "audit-only";
    }
    return "?";
}

Mode mode_of(Attach a) { return a == Attach::AuditOnly ? Mode::AuditOnly : Mode::Enforce; }

bool program_runs_in(const struct bpf_program* prog, Mode mode) {
    std::string_view name = bpf_program__name(prog);
    std::string_view section = bpf_program__section_name(prog);
    if (starts_with(name, "lg_audit_")) return mode == Mode::AuditOnly;
    if (starts_with(section, "lsm/") || !traced_function_of(prog).empty()) return mode == Mode::Enforce;
    return true;
}

bool hook_newer_than_its_cover(std::string_view hook) {
    return hook == "inode_set_acl" || hook == "inode_remove_acl" || hook == "file_ioctl_compat";
}

bool is_twin(const struct bpf_program* prog) {
    std::string_view name = bpf_program__name(prog);
    constexpr std::string_view suffix = "_twin";
    return !lsm_hook_of(prog).empty() && name.size() > suffix.size() &&
           name.substr(name.size() - suffix.size()) == suffix;
}

std::string_view traced_function_of(const struct bpf_program* prog) {
    std::string_view section = bpf_program__section_name(prog);
    for (std::string_view prefix : {"fentry/", "fmod_ret/"})
        if (starts_with(section, prefix)) return section.substr(prefix.size());
    return {};
}

std::vector<std::string> traced_functions(struct bpf_object* obj) {
    std::vector<std::string> out;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, obj) {
        std::string_view f = traced_function_of(prog);
        if (!f.empty()) out.emplace_back(f);
    }
    return out;
}

std::string_view lsm_hook_of(const struct bpf_program* prog) {
    std::string_view section = bpf_program__section_name(prog);
    return starts_with(section, "lsm/") ? section.substr(4) : std::string_view();
}

std::vector<std::string> newer_hook_functions(struct bpf_object* obj, Attach attach) {
    std::vector<std::string> out;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, obj) {
        std::string_view hook = lsm_hook_of(prog);
        if (hook_newer_than_its_cover(hook)) out.push_back(hook_function(hook, attach));
    }
    return out;
}

std::vector<std::string> attach_points_of(Mode mode) {
    Skeleton skel = open_skeleton();
    std::vector<std::string> out;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel->obj) {
        if (program_runs_in(prog, mode)) out.emplace_back(bpf_program__section_name(prog));
    }
    return out;
}

std::vector<std::string> map_names() {
    Skeleton skel = open_skeleton();
    std::vector<std::string> out;
    struct bpf_map* map;
    bpf_object__for_each_map(map, skel->obj) {
        if (!bpf_map__is_internal(map)) out.emplace_back(bpf_map__name(map));
    }
    return out;
}

}  // namespace liveguard
