#include "policy/containers.h"

#include <dirent.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "base/cgroup.h"
#include "base/json_members.h"
#include "base/pid_namespaces.h"
#include "base/proc.h"

namespace liveguard {
namespace {

constexpr std::size_t kIdLength = 64;
constexpr std::size_t kShortIdLength = 12;
constexpr int kMaxDepth = 12;

bool is_hex(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)); });
}

bool is_id(std::string_view s) { return s.size() == kIdLength && is_hex(s); }

// `<prefix><id>.scope`.
std::optional<std::string> scope_id(std::string_view name, std::string_view prefix) {
    constexpr std::string_view kScope = ".scope";
    if (name.size() != prefix.size() + kIdLength + kScope.size()) return std::nullopt;
    if (name.substr(0, prefix.size()) != prefix || name.substr(name.size() - kScope.size()) != kScope)
        return std::nullopt;
    auto id = name.substr(prefix.size(), kIdLength);
    if (!is_id(id)) return std::nullopt;
    return std::string(id);
}

// The host pid of the container's PID 1: of the processes in its cgroup
// numbered 1 in their innermost namespace, the one nearest the host (a
// sandbox nested in the container has a PID 1 of its own); else the
// oldest one listed.
pid_t first_process(const std::string& cgroup) {
    auto procs = read_small_file(cgroup + "/cgroup.procs", 1 << 20);
    if (!procs) return 0;
    pid_t init = 0, oldest = 0;
    std::size_t init_depth = SIZE_MAX;
    std::uint64_t oldest_start = UINT64_MAX;
    std::size_t at = 0;
    while (at < procs->size()) {
        std::size_t end = procs->find('\n', at);
        if (end == std::string::npos) end = procs->size();
        auto pid = parse_pid(std::string_view(*procs).substr(at, end - at));
        at = end + 1;
        if (!pid) continue;
        auto status = read_small_file("/proc/" + std::to_string(*pid) + "/status", 64 * 1024);
        auto ids = status ? parse_nspid(*status) : std::nullopt;
        if (ids && ids->size() > 1 && ids->back() == 1 && ids->size() < init_depth) {
            init = *pid;
            init_depth = ids->size();
        }
        auto st = read_proc_stat(*pid);
        if (st && st->start_ticks < oldest_start) {
            oldest = *pid;
            oldest_start = st->start_ticks;
        }
    }
    return init ? init : oldest;
}

// Podman runs one conmon per container, the parent of its PID 1, told
// the container's id (-c) and name (-n) on its command line, whatever
// storage root or user it runs as. Only that parent is asked: any process
// can call itself conmon.
std::optional<std::string> conmon_name(const std::string& id, pid_t init) {
    auto st = init > 0 ? read_proc_stat(init) : std::nullopt;
    if (!st || st->ppid <= 0) return std::nullopt;
    auto parent = read_proc_stat(st->ppid);
    if (!parent || parent->comm != "conmon") return std::nullopt;
    auto cmdline = read_small_file("/proc/" + std::to_string(st->ppid) + "/cmdline", 64 * 1024);
    if (!cmdline) return std::nullopt;
    return conmon_container_name(*cmdline, id);
}

std::vector<std::string> names_of(const ContainerCgroup& k, pid_t init) {
    std::vector<std::string> names;
    if (k.runtime == "podman")
        if (auto n = conmon_name(k.id, init)) names.push_back(*n);
    if (k.runtime == "docker") {
        if (auto cfg = read_untrusted_file("/var/lib/docker/containers/" + k.id + "/config.v2.json", 4 << 20))
            if (auto n = docker_config_name(*cfg)) names.push_back(*n);
    }
    if (k.runtime == "nerdctl") {
        // nerdctl's name store: /var/lib/nerdctl/<hash>/names/<namespace>/<name>, holding the id.
        namespace fs = std::filesystem;
        auto dirs_in = [](const fs::path& dir) {
            std::vector<fs::path> out;
            std::error_code ec;
            fs::directory_iterator it(dir, ec), end;
            for (; !ec && it != end; it.increment(ec)) out.push_back(it->path());
            return out;
        };
        for (const auto& store : dirs_in("/var/lib/nerdctl"))
            for (const auto& ns : dirs_in(store / "names"))
                for (const auto& f : dirs_in(ns)) {
                    auto id = read_untrusted_file(f.string(), 256);
                    if (id && id->substr(0, kIdLength) == k.id) names.push_back(f.filename().string());
                }
    }
    // A privileged Podman container has its name in /run/.containerenv,
    // with its id: an image cannot name another container.
    if (k.runtime == "podman" && names.empty() && init > 0)
        if (auto env = read_untrusted_file("/proc/" + std::to_string(init) + "/root/run/.containerenv", 64 * 1024)) {
            auto id = containerenv_field(*env, "id");
            auto name = containerenv_field(*env, "name");
            if (name && id && *id == k.id) names.push_back(*name);
        }
    return names;
}

// The container of cgroup `path`, its process and names read; nothing
// when the cgroup is gone.
std::optional<Container> container_at(const std::string& path, const ContainerCgroup& k) {
    Container c;
    c.runtime = k.runtime;
    c.id = k.id;
    c.cgroup = path;
    try {
        c.cgroup_id = cgroup_id_of(path);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    c.init = first_process(path);
    c.names = names_of(k, c.init);
    return c;
}

void walk(const std::string& dir, const std::string& dir_name, int depth, WatchDirs& dirs,
          std::vector<Container>& out) {
    if (depth > kMaxDepth) return;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    watch(dirs, dir, kAnyName);
    std::vector<std::string> subdirs;
    while (auto* e = ::readdir(d))
        if (e->d_type == DT_DIR && e->d_name[0] != '.') subdirs.emplace_back(e->d_name);
    ::closedir(d);
    for (const auto& name : subdirs) {
        std::string path = dir + "/" + name;
        if (auto k = container_of_cgroup(dir_name, name)) {
            auto found = container_at(path, *k);
            if (!found) continue;  // removed while we looked: the next event rescans
            Container c = std::move(*found);
            // Its first process starting, or its last one gone.
            watch(dirs, path, "cgroup.events");
            out.push_back(std::move(c));
            continue;  // what a container nests is its own
        }
        walk(path, name, depth + 1, dirs, out);
    }
}

}  // namespace

std::optional<ContainerCgroup> container_of_cgroup(std::string_view parent, std::string_view name) {
    static constexpr std::pair<std::string_view, std::string_view> kScopes[] = {
        {"docker-", "docker"},        {"libpod-", "podman"},      {"cri-containerd-", "containerd"},
        {"nerdctl-", "nerdctl"},
    };
    for (const auto& [prefix, runtime] : kScopes)
        if (auto id = scope_id(name, prefix)) return ContainerCgroup{std::string(runtime), *id};
    // The cgroupfs drivers: docker/<id>, libpod_parent/libpod-<id>.
    if (parent == "docker" && is_id(name)) return ContainerCgroup{"docker", std::string(name)};
    if (parent == "libpod_parent" && name.substr(0, 7) == "libpod-" && is_id(name.substr(7)))
        return ContainerCgroup{"podman", std::string(name.substr(7))};
    return std::nullopt;
}

std::optional<Container> container_holding(const std::string& cgroup_mount, const std::string& dir) {
    if (dir.size() <= cgroup_mount.size() || dir.compare(0, cgroup_mount.size(), cgroup_mount) != 0 ||
        dir[cgroup_mount.size()] != '/')
        return std::nullopt;
    std::string parent_name, path = cgroup_mount;
    std::size_t at = cgroup_mount.size() + 1;
    while (at <= dir.size()) {
        std::size_t end = dir.find('/', at);
        if (end == std::string::npos) end = dir.size();
        std::string name = dir.substr(at, end - at);
        path += "/" + name;
        if (auto k = container_of_cgroup(parent_name, name)) return container_at(path, *k);
        parent_name = name;
        at = end + 1;
    }
    return std::nullopt;
}

std::vector<Container> find_containers(const std::string& cgroup_mount, WatchDirs& dirs) {
    std::vector<Container> out;
    walk(cgroup_mount, "", 0, dirs, out);
    return out;
}

bool container_matches(const Container& c, const std::string& pattern) {
    for (const auto& n : c.names)
        if (::fnmatch(pattern.c_str(), n.c_str(), 0) == 0) return true;
    if (::fnmatch(pattern.c_str(), c.id.c_str(), 0) == 0) return true;
    return pattern.size() >= kShortIdLength && is_hex(pattern) && c.id.rfind(pattern, 0) == 0;
}

std::optional<std::string> docker_config_name(std::string_view config) {
    auto obj = json::parse(config);
    if (!obj) return std::nullopt;
    json::Members m(*obj);
    std::string name = m.text("Name");
    if (!m.ok() || name.empty()) return std::nullopt;
    if (name[0] == '/') name.erase(0, 1);
    if (name.empty()) return std::nullopt;
    return name;
}

std::optional<std::string> conmon_container_name(std::string_view cmdline, std::string_view id) {
    std::vector<std::string_view> args;
    std::size_t at = 0;
    while (at < cmdline.size()) {
        std::size_t end = cmdline.find('\0', at);
        if (end == std::string_view::npos) end = cmdline.size();
        args.push_back(cmdline.substr(at, end - at));
        at = end + 1;
    }
    std::optional<std::string_view> cid, name;
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == "-c" || args[i] == "--cid") cid = args[i + 1];
        if (args[i] == "-n" || args[i] == "--name") name = args[i + 1];
    }
    if (!cid || *cid != id || !name || name->empty()) return std::nullopt;
    return std::string(*name);
}

std::optional<std::string> containerenv_field(std::string_view text, std::string_view key) {
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (line.size() < key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != '=') continue;
        std::string_view v = line.substr(key.size() + 1);
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        if (v.empty()) return std::nullopt;
        return std::string(v);
    }
    return std::nullopt;
}

std::string describe(const Container& c) {
    std::string out = c.runtime + " ";
    out += c.names.empty() ? "container" : c.names.front();
    out += " (" + c.id.substr(0, kShortIdLength) + ")";
    return out;
}

}  // namespace liveguard
