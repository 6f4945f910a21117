#include "base/pid_namespaces.h"

#include <sys/stat.h>

#include <string>

#include "base/proc.h"

namespace liveguard {
namespace {

std::optional<std::vector<pid_t>> read_nspid(pid_t pid) {
    auto text = read_small_file("/proc/" + std::to_string(pid) + "/status", 64 * 1024);
    if (!text) return std::nullopt;
    return parse_nspid(*text);
}

}  // namespace

std::optional<std::vector<pid_t>> parse_nspid(std::string_view status) {
    constexpr std::string_view kKey = "NSpid:";
    std::size_t at = 0;
    for (;;) {
        if (status.substr(at, kKey.size()) == kKey) break;
        at = status.find('\n', at);
        if (at == std::string_view::npos) return std::nullopt;
        ++at;
    }
    std::string_view line = status.substr(at + kKey.size());
    line = line.substr(0, line.find('\n'));
    std::vector<pid_t> pids;
    std::size_t i = 0;
    while (i < line.size()) {
        if (line[i] == ' ' || line[i] == '\t') {
            ++i;
            continue;
        }
        std::size_t end = line.find_first_of(" \t", i);
        if (end == std::string_view::npos) end = line.size();
        auto pid = parse_pid(line.substr(i, end - i));
        if (!pid) return std::nullopt;
        pids.push_back(*pid);
        i = end;
    }
    if (pids.empty()) return std::nullopt;
    return pids;
}

std::optional<PidNs> pid_ns_of(pid_t pid) {
    struct stat st {};
    if (::stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &st) != 0) return std::nullopt;
    return st.st_ino;
}

std::optional<PidNs> own_pid_ns() {
    struct stat st {};
    if (::stat("/proc/self/ns/pid", &st) != 0) return std::nullopt;
    return st.st_ino;
}

std::optional<NsProcess> find_in_pid_ns(pid_t ns_member, pid_t ns_pid) {
    auto ns = pid_ns_of(ns_member);
    if (!ns) return std::nullopt;
    if (ns == own_pid_ns()) {
        if (!read_proc_stat(ns_pid)) return std::nullopt;
        return NsProcess{ns_pid, ns_pid};
    }
    // The member's own line says how deep its namespace is: a process of
    // that namespace has its number there at the same depth.
    auto member = read_nspid(ns_member);
    if (!member) return std::nullopt;
    std::size_t depth = member->size() - 1;
    for (pid_t pid : list_pids()) {
        auto ids = read_nspid(pid);
        if (!ids || ids->size() <= depth || (*ids)[depth] != ns_pid) continue;
        // The same depth holds every sibling container's numbers; and what
        // s6 and a service write is numbered in their own namespace.
        if (pid_ns_of(pid) != ns) continue;
        return NsProcess{pid, ns_pid};
    }
    return std::nullopt;
}

std::vector<NsProcess> find_by_ns_pid_and_start(pid_t ns_pid, std::uint64_t start_ticks) {
    std::vector<NsProcess> out;
    for (pid_t pid : list_pids()) {
        auto ids = read_nspid(pid);
        if (!ids || ids->size() < 2) continue;  // in this namespace only
        bool numbered = false;
        for (std::size_t i = 1; i < ids->size(); ++i) numbered |= (*ids)[i] == ns_pid;
        if (!numbered) continue;
        auto st = read_proc_stat(pid);
        if (st && st->start_ticks == start_ticks) out.push_back({pid, ns_pid});
    }
    return out;
}

std::optional<pid_t> inner_pid(pid_t host_pid) {
    auto ids = read_nspid(host_pid);
    if (!ids || ids->size() < 2) return std::nullopt;
    return ids->back();
}

}  // namespace liveguard
