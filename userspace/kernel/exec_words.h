#pragma once
// The words that make a service-control command touch a protected service,
// as the exec guard compares them: by FNV-1a hash of each argument, which
// the kernel computes while it copies a member's argv.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard {

std::uint64_t fnv1a(std::string_view s);

// systemctl verbs that start, stop, signal or reconfigure units.
const std::vector<std::string>& mutating_systemctl_verbs();

// systemctl verbs that stop or restart every unit, whatever they name.
const std::vector<std::string>& global_systemctl_verbs();

// How a command line can name a unit: "name" and "name.service".
std::vector<std::string> unit_words(const std::string& unit);

// How a command line can name a directory: as given, resolved, each with
// and without a trailing slash; with `relative`, also by its last
// component ("gateway-default", "./gateway-default"), as from its parent.
std::vector<std::string> path_words(const std::string& path, bool relative);

class ExecWords {
public:
    explicit ExecWords(int map_fd) : fd_(map_fd) {}

    // Adds `flags` (enum lg_word_flags) to what `word` means.
    void add(const std::string& word, std::uint32_t flags);
    // Takes `flags` away; the word is dropped when nothing is left.
    void remove(const std::string& word, std::uint32_t flags);

private:
    int fd_;
};

}  // namespace liveguard
