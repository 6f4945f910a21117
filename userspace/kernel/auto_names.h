#pragma once
// The names whose exec starts a session ([sessions] auto), as the kernel
// compares them: FNV-1a hashes of an exec's file name without its version
// suffix, and of an interpreter's name with the module it runs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard {

// One [sessions] auto entry: a program ("pytest"), or an interpreter and
// the module it runs ("python3 -m pytest").
struct AutoEntry {
    std::string name;
    std::string module;  // empty for a program

    bool operator==(const AutoEntry&) const = default;
};

// "pytest" or "python3 -m pytest"; throws std::invalid_argument saying
// what is wrong otherwise.
AutoEntry parse_auto_entry(std::string_view text);

// A name as the kernel keys it: its last path component, without trailing
// digits and dots and then one '-' (python3.11 -> python, pytest-3 ->
// pytest); a name that is all suffix stays whole.
std::string auto_base_name(std::string_view name);

// The map's contents for `entries`: key -> enum lg_auto_flags.
std::vector<std::pair<std::uint64_t, std::uint32_t>> auto_name_keys(const std::vector<AutoEntry>& entries);

class AutoNames {
public:
    AutoNames(int map_fd, int settings_fd) : fd_(map_fd), settings_fd_(settings_fd) {}

    // Makes the map hold exactly `entries`, then publishes its count (the
    // kernel's exec hook does nothing while it is zero).
    void set(const std::vector<AutoEntry>& entries);

private:
    int fd_;
    int settings_fd_;
};

}  // namespace liveguard
