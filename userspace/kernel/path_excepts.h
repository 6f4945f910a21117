#pragma once
// Names that stay writable below a protected tree ([[protect]] path's
// `except`), as the kernel compares them: FNV-1a of a whole name, or of a
// suffix from its last '.' ("*.pyc" is ".pyc"), with one bit per
// [[protect]] table that lists it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct ProtectTarget;

// The map's contents for `targets`: hash -> which tables list it.
std::map<std::uint64_t, lg_path_except> path_except_keys(const std::vector<ProtectTarget>& targets);

class PathExcepts {
public:
    explicit PathExcepts(int map_fd) : fd_(map_fd) {}

    // Makes the map hold exactly `targets`' except names.
    void set(const std::vector<ProtectTarget>& targets);

private:
    int fd_;
};

}  // namespace liveguard
