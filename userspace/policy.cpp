#include "policy.h"

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace liveguard {
namespace {

std::string where(const std::string& file, const toml::source_region& r) {
    return file + ":" + std::to_string(r.begin.line) + ": ";
}

[[noreturn]] void fail(const std::string& file, const toml::node& n, const std::string& msg) {
    throw PolicyError(where(file, n.source()) + msg);
}

std::string require_absolute_string(const std::string& file, const toml::node& n,
                                    const std::string& key) {
    auto v = n.value<std::string>();
    if (!n.is_string() || !v) fail(file, n, "`" + key + "` must be a string");
    if (v->empty() || (*v)[0] != '/') fail(file, n, "`" + key + "` must be an absolute path, not \"" + *v + "\"");
    if (v->find('\0') != std::string::npos) fail(file, n, "`" + key + "` contains a NUL byte");
    return *v;
}

}  // namespace

const char* kind_key(TargetKind k) {
    switch (k) {
        case TargetKind::Pid: return "pid";
        case TargetKind::PidFile: return "pidfile";
        case TargetKind::S6: return "s6";
        case TargetKind::SystemdUnit: return "systemd_unit";
        case TargetKind::Cgroup: return "cgroup";
    }
    return "?";
}

std::string ProtectTarget::describe() const {
    if (kind == TargetKind::Pid) return "pid " + std::to_string(pid);
    return std::string(kind_key(kind)) + " \"" + pattern + "\"";
}

Policy parse_policy(std::string_view text, const std::string& file) {
    toml::table root;
    try {
        root = toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        throw PolicyError(file + ":" + std::to_string(e.source().begin.line) + ": " +
                          std::string(e.description()));
    }
    Policy p;
    p.path = file;
    for (auto&& [key, node] : root) {
        std::string k(key.str());
        if (k == "protect") {
            auto* arr = node.as_array();
            if (!arr || !arr->is_array_of_tables())
                fail(file, node, "`protect` must be written as [[protect]] tables");
            std::uint32_t index = 0;
            for (auto&& entry : *arr) {
                ++index;
                auto& t = *entry.as_table();
                ProtectTarget target;
                target.source = index;
                target.line = static_cast<int>(t.source().begin.line);
                int kinds = 0;
                for (auto&& [ek, ev] : t) {
                    std::string e(ek.str());
                    TargetKind kind;
                    if (e == "pid") kind = TargetKind::Pid;
                    else if (e == "pidfile") kind = TargetKind::PidFile;
                    else if (e == "s6") kind = TargetKind::S6;
                    else if (e == "systemd_unit") kind = TargetKind::SystemdUnit;
                    else if (e == "cgroup") kind = TargetKind::Cgroup;
                    else
                        fail(file, ev, "unknown key `" + e +
                                           "` in [[protect]] (expected one of pid, pidfile, s6, "
                                           "systemd_unit, cgroup)");
                    ++kinds;
                    target.kind = kind;
                    target.line = static_cast<int>(ev.source().begin.line);
                    if (kind == TargetKind::Pid) {
                        auto v = ev.value<std::int64_t>();
                        if (!ev.is_integer() || !v || *v <= 0 || *v > 0x7fffffff)
                            fail(file, ev, "`pid` must be a positive integer");
                        target.pid = static_cast<pid_t>(*v);
                        target.pattern = std::to_string(*v);
                    } else if (kind == TargetKind::SystemdUnit) {
                        auto v = ev.value<std::string>();
                        if (!ev.is_string() || !v || v->empty())
                            fail(file, ev, "`systemd_unit` must be a unit name or glob, e.g. "
                                           "\"hermes-gateway*.service\"");
                        if (v->find('/') != std::string::npos)
                            fail(file, ev, "`systemd_unit` is a unit name, not a path: \"" + *v + "\"");
                        target.pattern = *v;
                    } else {
                        target.pattern = require_absolute_string(file, ev, e);
                    }
                }
                if (kinds != 1)
                    throw PolicyError(file + ":" + std::to_string(t.source().begin.line) +
                                      ": a [[protect]] table needs exactly one of pid, pidfile, "
                                      "s6, systemd_unit, cgroup (found " +
                                      std::to_string(kinds) + ")");
                p.targets.push_back(std::move(target));
            }
        } else if (k == "sessions") {
            auto* t = node.as_table();
            if (!t) fail(file, node, "`sessions` must be a table: [sessions]");
            for (auto&& [sk, sv] : *t) {
                std::string s(sk.str());
                if (s == "parent") {
                    p.session_parent = require_absolute_string(file, sv, "parent");
                } else if (s == "tag") {
                    auto* a = sv.as_array();
                    if (!a) fail(file, sv, "`tag` must be an array of cgroup directories");
                    for (auto&& d : *a) p.session_tags.push_back(require_absolute_string(file, d, "tag"));
                } else if (s == "refuse_service_manager_sockets") {
                    auto v = sv.value<bool>();
                    if (!sv.is_boolean() || !v)
                        fail(file, sv, "`refuse_service_manager_sockets` must be true or false");
                    p.refuse_service_manager_sockets = *v;
                } else {
                    fail(file, sv, "unknown key `" + s +
                                       "` in [sessions] (expected parent, tag, "
                                       "refuse_service_manager_sockets)");
                }
            }
        } else {
            fail(file, node, "unknown key `" + k + "` (expected [[protect]] or [sessions])");
        }
    }
    return p;
}

Policy load_policy(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw PolicyError(path + ": cannot be read: " + std::strerror(errno));
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    if (text.size() > (1 << 20)) throw PolicyError(path + ": larger than 1 MiB; not a policy file");
    return parse_policy(text, path);
}

}  // namespace liveguard
