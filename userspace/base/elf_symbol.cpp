#include "base/elf_symbol.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace liveguard {
namespace {

// A libc's tables are about 100 KB each, a large program's a few MB; what
// is bigger is not read at all rather than read in part.
constexpr std::uint64_t kMaxTableBytes = 8u << 20;
constexpr unsigned kMaxSegments = 256;
constexpr unsigned kMaxSections = 4096;

bool read_exact(int fd, void* buf, std::size_t len, std::uint64_t offset) {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
        ssize_t n = ::pread(fd, p, len, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
    return true;
}

// [offset, offset + len) lies in a file of `size` bytes, without overflow.
bool within(std::uint64_t offset, std::uint64_t len, std::uint64_t size) {
    return offset <= size && len <= size - offset;
}

// A table of `count` entries the header says are `entsize` bytes each, at
// most `max` of them, all inside a file of `size` bytes.
template <class T>
std::optional<std::vector<T>> read_table(int fd, std::uint64_t offset, std::uint64_t count, std::uint64_t entsize,
                                         std::uint64_t max, std::uint64_t size) {
    if (entsize != sizeof(T) || count == 0 || count > max || !within(offset, count * sizeof(T), size))
        return std::nullopt;
    std::vector<T> table(count);
    if (!read_exact(fd, table.data(), count * sizeof(T), offset)) return std::nullopt;
    return table;
}

std::optional<ElfDataSymbol> fail(std::string* why, std::string cause) {
    if (why) *why = std::move(cause);
    return std::nullopt;
}

}  // namespace

std::optional<ElfDataSymbol> find_dynamic_object(int fd, std::span<const std::string_view> names, std::string* why) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail(why, errno_message("fstat", errno));
    if (!S_ISREG(st.st_mode)) return fail(why, "not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);

    Elf64_Ehdr eh{};
    if (size < sizeof eh || !read_exact(fd, &eh, sizeof eh, 0)) return fail(why, "shorter than an ELF header");
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return fail(why, "no ELF magic");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) return fail(why, "not a 64-bit ELF file");
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return fail(why, "not a little-endian ELF file");
    if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) return fail(why, "unknown ELF version");
    if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) return fail(why, "neither a shared object nor an executable");

    // Where the file's first page lands: the load base's offset from it.
    auto ph = read_table<Elf64_Phdr>(fd, eh.e_phoff, eh.e_phnum, eh.e_phentsize, kMaxSegments, size);
    if (!ph) return fail(why, "program headers malformed or out of the file");
    auto load = std::find_if(ph->begin(), ph->end(), [](const Elf64_Phdr& p) { return p.p_type == PT_LOAD; });
    if (load == ph->end()) return fail(why, "no loadable segment");
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    // Only then is the mapping at offset 0 the first segment's, at its
    // address rounded down as the loader maps it.
    if (load->p_offset >= page || load->p_offset % page != load->p_vaddr % page)
        return fail(why, "the first loadable segment does not map the file's first page");

    std::optional<std::uint64_t> first_exec;
    for (const auto& p : *ph)
        if (p.p_type == PT_LOAD && (p.p_flags & PF_X) && (!first_exec || p.p_vaddr < *first_exec)) first_exec = p.p_vaddr;

    auto sh = read_table<Elf64_Shdr>(fd, eh.e_shoff, eh.e_shnum, eh.e_shentsize, kMaxSections, size);
    if (!sh) return fail(why, "section headers missing, malformed or out of the file");
    auto dynsym = std::find_if(sh->begin(), sh->end(), [](const Elf64_Shdr& s) { return s.sh_type == SHT_DYNSYM; });
    if (dynsym == sh->end()) return fail(why, "no dynamic symbol table");
    if (dynsym->sh_link >= sh->size() || (*sh)[dynsym->sh_link].sh_type != SHT_STRTAB)
        return fail(why, "the dynamic symbol table names no string table");
    const Elf64_Shdr& dynstr = (*sh)[dynsym->sh_link];
    auto syms = read_table<Elf64_Sym>(fd, dynsym->sh_offset, dynsym->sh_size / sizeof(Elf64_Sym), dynsym->sh_entsize,
                                      kMaxTableBytes / sizeof(Elf64_Sym), size);
    if (!syms) return fail(why, "dynamic symbol table malformed, out of the file or over " +
                                    std::to_string(kMaxTableBytes) + " bytes");
    if (dynstr.sh_size > kMaxTableBytes || !within(dynstr.sh_offset, dynstr.sh_size, size))
        return fail(why, "dynamic symbols' names out of the file or over " + std::to_string(kMaxTableBytes) + " bytes");
    std::vector<char> strs(dynstr.sh_size);
    if (!read_exact(fd, strs.data(), strs.size(), dynstr.sh_offset)) return fail(why, "dynamic symbols' names unreadable");

    std::optional<ElfDataSymbol> found;
    std::size_t rank = names.size();
    for (const auto& s : *syms) {
        // An undefined entry is a reference to another object's definition.
        if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE) continue;
        if (ELF64_ST_TYPE(s.st_info) != STT_OBJECT || ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
        if (s.st_name >= strs.size()) continue;
        const char* at = strs.data() + s.st_name;
        std::size_t room = strs.size() - s.st_name;
        std::size_t len = strnlen(at, room);
        if (len == room) continue;  // no terminating NUL inside the table
        std::string_view name(at, len);
        for (std::size_t i = 0; i < rank; ++i)
            if (names[i] == name) {
                rank = i;
                found = ElfDataSymbol{s.st_value, s.st_size, load->p_vaddr & ~(page - 1), first_exec};
                break;
            }
        if (rank == 0) break;
    }
    if (!found) return fail(why, "defines none of the symbols asked for");
    return found;
}

}  // namespace liveguard
