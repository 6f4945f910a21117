// A data object found in an ELF file's dynamic symbols: libc's environ,
// where this very process has it, and nothing (no crash, no unbounded
// read) from a file cut short or with its headers damaged.
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "base/elf_symbol.h"
#include "base/fd.h"
#include "temp_dir.h"

extern char** environ;

using namespace liveguard;

namespace {

constexpr std::array<std::string_view, 2> kEnviron{"__environ", "environ"};

// This process's libc, as its maps name it.
std::string own_libc() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        std::string path = line.substr(slash);
        std::string base = path.substr(path.rfind('/') + 1);
        if (base == "libc.so.6" || (base.starts_with("libc-") && base.ends_with(".so"))) return path;
    }
    return "";
}

// Where the dynamic linker put each object of this process: its load
// bias, by name ("" for the executable).
struct Loaded {
    std::string name;
    std::uintptr_t bias;
};
std::vector<Loaded> loaded_objects() {
    std::vector<Loaded> out;
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            static_cast<std::vector<Loaded>*>(data)->push_back({info->dlpi_name ? info->dlpi_name : "", info->dlpi_addr});
            return 0;
        },
        &out);
    return out;
}

UniqueFd open_file(const std::string& path, int flags = O_RDONLY) {
    return UniqueFd(::open(path.c_str(), flags | O_CLOEXEC));
}

// A copy of libc to damage.
struct LibcCopy {
    TempDir dir;
    std::string path = dir.path + "/libc.so.6";
    UniqueFd fd;
    std::uint64_t size = 0;
    LibcCopy() {
        std::filesystem::copy_file(own_libc(), path);
        fd = open_file(path, O_RDWR);
        size = std::filesystem::file_size(path);
    }
    std::optional<ElfDataSymbol> lookup(std::string* why = nullptr) { return find_dynamic_object(fd.get(), kEnviron, why); }
    // Writes `bytes` at `offset`, runs the lookup, and puts the old bytes back.
    std::optional<ElfDataSymbol> lookup_with(std::uint64_t offset, const void* bytes, std::size_t len,
                                             std::string* why = nullptr) {
        std::vector<char> old(len);
        EXPECT_EQ(::pread(fd.get(), old.data(), len, static_cast<off_t>(offset)), static_cast<ssize_t>(len));
        EXPECT_EQ(::pwrite(fd.get(), bytes, len, static_cast<off_t>(offset)), static_cast<ssize_t>(len));
        auto r = lookup(why);
        EXPECT_EQ(::pwrite(fd.get(), old.data(), len, static_cast<off_t>(offset)), static_cast<ssize_t>(len));
        return r;
    }
    template <class T>
    T read_at(std::uint64_t offset) {
        T v{};
        EXPECT_EQ(::pread(fd.get(), &v, sizeof v, static_cast<off_t>(offset)), static_cast<ssize_t>(sizeof v));
        return v;
    }
};

}  // namespace

TEST(ElfSymbol, LibcDefinesEnviron) {
    std::string libc = own_libc();
    ASSERT_FALSE(libc.empty()) << "no libc in /proc/self/maps";
    UniqueFd fd = open_file(libc);
    ASSERT_TRUE(fd);
    std::string why;
    auto sym = find_dynamic_object(fd.get(), kEnviron, &why);
    ASSERT_TRUE(sym) << why;
    EXPECT_EQ(sym->size, sizeof(char**));
    EXPECT_EQ(sym->first_load, 0u) << "a shared object is laid out from 0";
    EXPECT_NE(sym->value, 0u);
    // A function, or a name not there, is no data object.
    constexpr std::array<std::string_view, 1> getenv_name{"getenv"};
    EXPECT_FALSE(find_dynamic_object(fd.get(), getenv_name, &why));
    EXPECT_EQ(why, "defines none of the symbols asked for");
    constexpr std::array<std::string_view, 1> none{"liveguard_no_such_symbol"};
    EXPECT_FALSE(find_dynamic_object(fd.get(), none));
}

// The variable this process's libc uses is the definition the dynamic
// linker chose: the executable's when it has one (a copy relocation), else
// libc's. Found at its object's load bias plus the symbol's value, it is
// `environ` itself.
TEST(ElfSymbol, TheDefinitionInUseIsWhereEnvironIs) {
    std::string libc = own_libc();
    ASSERT_FALSE(libc.empty());
    UniqueFd exe = open_file("/proc/self/exe");
    UniqueFd lib = open_file(libc);
    ASSERT_TRUE(exe && lib);
    auto in_exe = find_dynamic_object(exe.get(), kEnviron);
    auto in_libc = find_dynamic_object(lib.get(), kEnviron);
    ASSERT_TRUE(in_libc);
    std::uintptr_t exe_bias = 0, libc_bias = 0;
    bool libc_found = false;
    for (const auto& o : loaded_objects()) {
        if (o.name.empty()) exe_bias = o.bias;
        else if (std::filesystem::path(o.name).filename() == std::filesystem::path(libc).filename()) {
            libc_bias = o.bias;
            libc_found = true;
        }
    }
    ASSERT_TRUE(libc_found);
    auto where = in_exe ? exe_bias + in_exe->value : libc_bias + in_libc->value;
    EXPECT_EQ(where, reinterpret_cast<std::uintptr_t>(&environ)) << (in_exe ? "executable's copy" : "libc's");
}

TEST(ElfSymbol, NotAnElfFile) {
    TempDir dir;
    std::string why;
    std::ofstream(dir.path + "/text") << "#!/bin/sh\necho hello, this is longer than an ELF header, which is 64 bytes\n";
    UniqueFd text = open_file(dir.path + "/text");
    EXPECT_FALSE(find_dynamic_object(text.get(), kEnviron, &why));
    EXPECT_EQ(why, "no ELF magic");
    UniqueFd d(::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    EXPECT_FALSE(find_dynamic_object(d.get(), kEnviron, &why));
    EXPECT_EQ(why, "not a regular file");
    EXPECT_FALSE(find_dynamic_object(-1, kEnviron, &why));
    EXPECT_NE(why.find("fstat"), std::string::npos) << why;
}

TEST(ElfSymbol, ATruncatedLibcIsNothing) {
    LibcCopy copy;
    ASSERT_TRUE(copy.lookup());
    auto eh = copy.read_at<Elf64_Ehdr>(0);
    const std::uint64_t sizes[] = {0,
                                   1,
                                   SELFMAG,
                                   sizeof(Elf64_Ehdr) - 1,
                                   sizeof(Elf64_Ehdr),
                                   eh.e_phoff + sizeof(Elf64_Phdr),
                                   4096,
                                   copy.size / 2,
                                   eh.e_shoff,
                                   eh.e_shoff + sizeof(Elf64_Shdr),
                                   copy.size - sizeof(Elf64_Shdr),
                                   copy.size - 1};
    for (auto s : sizes) {
        ASSERT_EQ(::ftruncate(copy.fd.get(), static_cast<off_t>(s)), 0);
        std::string why;
        EXPECT_FALSE(copy.lookup(&why)) << "cut to " << s << " bytes";
        EXPECT_FALSE(why.empty());
    }
}

TEST(ElfSymbol, DamagedHeadersAreNothing) {
    LibcCopy copy;
    auto eh = copy.read_at<Elf64_Ehdr>(0);
    std::string why;
    auto set = [&](std::uint64_t offset, auto value) { return copy.lookup_with(offset, &value, sizeof value, &why); };

    EXPECT_FALSE(set(0, std::uint8_t{0x7e}));
    EXPECT_EQ(why, "no ELF magic");
    EXPECT_FALSE(set(EI_CLASS, std::uint8_t{ELFCLASS32}));
    EXPECT_EQ(why, "not a 64-bit ELF file");
    EXPECT_FALSE(set(EI_DATA, std::uint8_t{ELFDATA2MSB}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_type), std::uint16_t{ET_REL}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_phoff), std::uint64_t{copy.size - 8}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_phoff), UINT64_MAX - 8));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_phnum), std::uint16_t{0xffff}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_phentsize), std::uint16_t{32}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_shoff), std::uint64_t{copy.size}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_shoff), UINT64_MAX - 63));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_shnum), std::uint16_t{0}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_shnum), std::uint16_t{0xffff}));
    EXPECT_FALSE(set(offsetof(Elf64_Ehdr, e_shentsize), std::uint16_t{40}));

    // The dynamic symbol table's own header.
    std::uint64_t dynsym = 0;
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
        auto sh = copy.read_at<Elf64_Shdr>(eh.e_shoff + i * sizeof(Elf64_Shdr));
        if (sh.sh_type == SHT_DYNSYM) dynsym = eh.e_shoff + i * sizeof(Elf64_Shdr);
    }
    ASSERT_NE(dynsym, 0u);
    auto sh = copy.read_at<Elf64_Shdr>(dynsym);
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_type), std::uint32_t{SHT_NULL}));
    EXPECT_EQ(why, "no dynamic symbol table");
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_offset), UINT64_MAX - 16));
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_offset), copy.size - sh.sh_size + 1));
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_size), UINT64_MAX));
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_size), std::uint64_t{1} << 40));
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_link), std::uint32_t{eh.e_shnum}));
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_link), std::uint32_t{0}));
    EXPECT_FALSE(set(dynsym + offsetof(Elf64_Shdr, sh_entsize), std::uint64_t{16}));
    auto str = eh.e_shoff + sh.sh_link * sizeof(Elf64_Shdr);
    EXPECT_FALSE(set(str + offsetof(Elf64_Shdr, sh_offset), copy.size));
    EXPECT_FALSE(set(str + offsetof(Elf64_Shdr, sh_size), UINT64_MAX - 1));

    // Every symbol's name pointing past the string table: nothing found,
    // nothing read out of bounds.
    std::vector<char> table(sh.sh_size);
    ASSERT_EQ(::pread(copy.fd.get(), table.data(), table.size(), static_cast<off_t>(sh.sh_offset)),
              static_cast<ssize_t>(table.size()));
    const std::uint32_t far = UINT32_MAX - 1;
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= table.size(); off += sizeof(Elf64_Sym))
        std::memcpy(table.data() + off + offsetof(Elf64_Sym, st_name), &far, sizeof far);
    EXPECT_FALSE(copy.lookup_with(sh.sh_offset, table.data(), table.size(), &why));

    // And random bytes anywhere in the headers: whatever the answer, no
    // crash and no read outside the file (the sanitizers' fuzz target
    // covers the rest).
    std::mt19937 rng(12345);
    const std::uint64_t regions[][2] = {{0, sizeof(Elf64_Ehdr)},
                                        {eh.e_phoff, std::uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr)},
                                        {eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)}};
    for (const auto& r : regions)
        for (int i = 0; i < 300; ++i) {
            std::uint64_t at = r[0] + rng() % r[1];
            std::uint8_t b = static_cast<std::uint8_t>(rng());
            copy.lookup_with(at, &b, 1);
        }
    EXPECT_TRUE(copy.lookup()) << "the copy was put back as it was";
}
