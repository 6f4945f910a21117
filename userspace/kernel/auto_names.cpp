#include "kernel/auto_names.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <map>
#include <set>
#include <stdexcept>

#include "base/error.h"
#include "kernel/exec_words.h"
#include "kernel/map_walk.h"
#include "liveguard/abi.h"

namespace liveguard {
namespace {

bool valid_name(std::string_view s) {
    if (s.empty() || s.size() >= LG_AUTO_NAME_LEN) return false;
    for (char c : s)
        if (c == '/' || c == ' ' || c == '\t' || c == '\0') return false;
    return true;
}

std::uint64_t fnv_continue(std::uint64_t h, std::string_view s) {
    for (unsigned char c : s) {
        h ^= c;
        h *= LG_FNV_PRIME;
    }
    return h;
}

}  // namespace

AutoEntry parse_auto_entry(std::string_view text) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ') ++j;
        if (j > i) words.emplace_back(text.substr(i, j - i));
        i = j;
    }
    if (words.size() == 1 && valid_name(words[0])) return {words[0], ""};
    if (words.size() == 3 && words[1] == "-m" && valid_name(words[0]) && valid_name(words[2]))
        return {words[0], words[2]};
    throw std::invalid_argument("\"" + std::string(text) +
                                "\" is neither a program name (\"pytest\") nor an interpreter "
                                "running a module (\"python3 -m pytest\")");
}

std::string auto_base_name(std::string_view name) {
    if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    std::size_t end = name.size();
    while (end > 0 && ((name[end - 1] >= '0' && name[end - 1] <= '9') || name[end - 1] == '.')) --end;
    if (end > 0 && end < name.size() && name[end - 1] == '-') --end;
    if (end == 0) return std::string(name);
    return std::string(name.substr(0, end));
}

std::vector<std::pair<std::uint64_t, std::uint32_t>> auto_name_keys(const std::vector<AutoEntry>& entries) {
    std::map<std::uint64_t, std::uint32_t> keys;
    for (const auto& e : entries) {
        std::uint64_t h = fnv1a(auto_base_name(e.name));
        if (e.module.empty()) {
            keys[h] |= LG_AUTO_PROGRAM;
        } else {
            keys[h] |= LG_AUTO_INTERPRETER;
            std::uint64_t m = fnv_continue(h, std::string_view("\0", 1));
            keys[fnv_continue(m, e.module)] |= LG_AUTO_MODULE;
        }
    }
    return {keys.begin(), keys.end()};
}

void AutoNames::set(const std::vector<AutoEntry>& entries) {
    auto want = auto_name_keys(entries);
    if (want.size() > LG_MAX_AUTO_NAMES)
        throw Error("[sessions] auto names " + std::to_string(want.size()) + " names; the kernel holds " +
                        std::to_string(LG_MAX_AUTO_NAMES),
                    "name fewer test runners");
    std::set<std::uint64_t> keep;
    for (const auto& [key, flags] : want) {
        if (bpf_map_update_elem(fd_, &key, &flags, BPF_ANY) != 0)
            throw_errno("cannot record the names that start sessions", errno);
        keep.insert(key);
    }
    for (const auto& [key, flags] : list_u64_map<std::uint32_t>(fd_, LG_MAX_AUTO_NAMES))
        if (!keep.count(key)) bpf_map_delete_elem(fd_, &key);
    write_setting(settings_fd_, LG_SETTING_AUTO_NAMES, want.size());
}

}  // namespace liveguard
