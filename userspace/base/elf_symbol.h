#pragma once
// A data object in an ELF file's dynamic symbol table: where a library or
// an executable keeps a variable, relative to where the file is mapped.
// The file is whatever a process maps, possibly a container's or a user's,
// so every offset and size is checked against the file and every read is
// bounded. 64-bit little-endian ELF only (what x86-64 runs); the table is
// found through the section headers (SHT_DYNSYM), which a file stripped of
// them (sstrip) lacks.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace liveguard {

struct ElfDataSymbol {
    std::uint64_t value = 0;  // st_value: the object's virtual address in the file's own layout
    std::uint64_t size = 0;
    // The first PT_LOAD's p_vaddr aligned down to a page: the address, in
    // the same layout, of the mapping at file offset 0. A mapping starting
    // at `start` holds the object at start - first_load + value.
    std::uint64_t first_load = 0;
    // The lowest p_vaddr of an executable PT_LOAD (what the kernel makes
    // mm->start_code, plus the load bias), when the file has one.
    std::optional<std::uint64_t> first_exec;
};

// The first of `names`, in the order given, that the file at `fd`
// defines (not merely references) as a data object in its dynamic symbol
// table. Nothing when it defines none of them, or when the file is not
// one this reads (then `why`, when given, says what was wrong with it).
std::optional<ElfDataSymbol> find_dynamic_object(int fd, std::span<const std::string_view> names,
                                                 std::string* why = nullptr);

}  // namespace liveguard
