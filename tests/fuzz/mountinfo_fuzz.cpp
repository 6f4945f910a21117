// find_cgroup2_mount reads /proc/self/mountinfo, whose mount points are
// paths anyone who can mount (user namespaces) chooses, escaped by the
// kernel as \ooo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/cgroup.h"

using namespace liveguard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto m = find_cgroup2_mount(in);
    if (!m) return 0;
    // Unescaping only shortens a field, and a field is never empty.
    if (m->empty() || m->size() > size) __builtin_trap();
    // Only a line whose filesystem type is cgroup2 may name the mount.
    if (in.find("cgroup2") == std::string_view::npos) __builtin_trap();
    auto again = find_cgroup2_mount(in);
    if (!again || *again != *m) __builtin_trap();
    return 0;
}
