#include "kernel/engine_refs.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "liveguard/abi.h"

namespace liveguard {
namespace {

lg_engine_ref key_of(const std::string& ref) {
    lg_engine_ref k{};
    std::memcpy(k.ref, ref.data(), std::min(ref.size(), sizeof(k.ref)));
    return k;
}

std::string ref_of(const lg_engine_ref& k) { return std::string(k.ref, ::strnlen(k.ref, sizeof(k.ref))); }

std::string cut(const std::string& s) { return s.substr(0, LG_ENGINE_REF_LEN); }

}  // namespace

std::set<std::string> engine_refs(const std::string& id, const std::vector<std::string>& names) {
    std::set<std::string> out;
    for (const auto& n : names)
        if (!n.empty()) out.insert(cut(n));
    for (std::size_t len = 1; len <= id.size(); ++len) out.insert(cut(id.substr(0, len)));
    return out;
}

bool set_engine_refs(int map_fd, const std::set<std::string>& want_all) {
    std::set<std::string> want = want_all;
    if (!want.empty()) want.insert("#");
    if (want.size() >= LG_MAX_ENGINE_REFS) {
        // "*" and "#", and as many refs as fit beside them, with a slot
        // to spare: the next pass can always add "*" before it deletes.
        std::set<std::string> fit = {"*", "#"};
        for (const auto& r : want_all) {
            if (fit.size() >= LG_MAX_ENGINE_REFS - 1) break;
            fit.insert(r);
        }
        want = std::move(fit);
    }
    std::set<std::string> have;
    lg_engine_ref k{}, next{};
    void* prev = nullptr;
    while (::bpf_map_get_next_key(map_fd, prev, &next) == 0) {
        have.insert(ref_of(next));
        k = next;
        prev = &k;
    }
    if (errno != ENOENT) throw_errno("cannot read the guarded containers' refs (lg_engine_refs)", errno);
    bool changed = false;
    std::uint32_t one = 1;
    // "*" in first and out last, refs no longer wanted out before new ones
    // go in (a full map has room then): no moment lets a request to a
    // guarded container through.
    if (want.count("*") && !have.count("*")) {
        auto key = key_of("*");
        if (::bpf_map_update_elem(map_fd, &key, &one, BPF_ANY) != 0)
            throw_errno("cannot guard every container at the engines' sockets (lg_engine_refs)", errno);
        changed = true;
    }
    for (const auto& r : have) {
        if (want.count(r) || r == "*") continue;
        auto key = key_of(r);
        if (::bpf_map_delete_elem(map_fd, &key) != 0 && errno != ENOENT)
            throw_errno("cannot release container ref " + r + " (lg_engine_refs)", errno);
        changed = true;
    }
    for (const auto& r : want) {
        if (have.count(r) || r == "*") continue;
        auto key = key_of(r);
        if (::bpf_map_update_elem(map_fd, &key, &one, BPF_NOEXIST) != 0 && errno != EEXIST)
            throw_errno("cannot guard container ref " + r + " at the engines' sockets (lg_engine_refs)", errno);
        changed = true;
    }
    if (have.count("*") && !want.count("*")) {
        auto key = key_of("*");
        if (::bpf_map_delete_elem(map_fd, &key) != 0 && errno != ENOENT)
            throw_errno("cannot release the guard of every container (lg_engine_refs)", errno);
        changed = true;
    }
    return changed;
}

}  // namespace liveguard
