#pragma once
// Containers as the runtimes leave them on the host: a cgroup named after
// the runtime and the container's id (Docker's docker-<id>.scope or
// docker/<id>, Podman's libpod-<id>.scope or libpod_parent/libpod-<id>,
// containerd's and nerdctl's <name>-<id>.scope), and the container's name
// where the runtime writes it down (Docker's config.v2.json, the command
// line of Podman's conmon, nerdctl's name store).
// Read-only: no runtime's socket is spoken to.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/resolver.h"

namespace liveguard {

struct ContainerCgroup {
    std::string runtime;  // "docker", "podman", "containerd", "nerdctl"
    std::string id;       // 64 hex digits
};

// What a cgroup directory named `name` in a directory named `parent` is:
// the container it holds, or nothing.
std::optional<ContainerCgroup> container_of_cgroup(std::string_view parent, std::string_view name);

struct Container {
    std::string runtime;
    std::string id;
    std::vector<std::string> names;  // without Docker's leading '/'
    std::string cgroup;              // its directory
    std::uint64_t cgroup_id = 0;
    pid_t init = 0;  // its first process (pid 1 inside), by the host's number; 0 when empty
};

// Every container whose cgroup is below `cgroup_mount` (not below another
// container's), each directory walked added to `dirs` so that a new
// container wakes the watcher.
std::vector<Container> find_containers(const std::string& cgroup_mount, WatchDirs& dirs);

// The container whose cgroup is `dir` or holds it (the outermost, as
// find_containers sees them), or nothing.
std::optional<Container> container_holding(const std::string& cgroup_mount, const std::string& dir);

// Whether `pattern` names the container: a glob matching one of its names
// or its id, or (12 hex digits or more) a prefix of its id, as the
// runtimes' short ids are.
bool container_matches(const Container& c, const std::string& pattern);

// The name in a Docker config.v2.json text, in a Podman .containerenv
// (filled in for privileged containers only), or on the command line
// (NUL-separated) of the conmon that runs the container `id`.
std::optional<std::string> docker_config_name(std::string_view config);
std::optional<std::string> containerenv_field(std::string_view text, std::string_view key);
std::optional<std::string> conmon_container_name(std::string_view cmdline, std::string_view id);

// "docker hermes (0123456789ab)".
std::string describe(const Container& c);

}  // namespace liveguard
