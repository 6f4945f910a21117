// The files a process maps are read for their dynamic symbols (where its
// libc keeps environ): whatever a user or a container put there, cut
// short or with headers that point anywhere.
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/elf_symbol.h"

using namespace liveguard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const int fd = ::memfd_create("elf_symbol_fuzz", MFD_CLOEXEC);
    if (fd < 0) __builtin_trap();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) __builtin_trap();

    constexpr std::array<std::string_view, 3> names{"__environ", "environ", "_environ"};
    std::string why;
    auto sym = find_dynamic_object(fd, names, &why);
    // A file refused says why; one read gives a page-aligned load address.
    if (!sym && why.empty()) __builtin_trap();
    if (sym && sym->first_load % static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) != 0) __builtin_trap();
    return 0;
}
