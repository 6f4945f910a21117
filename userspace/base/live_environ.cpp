#include "base/live_environ.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "base/elf_symbol.h"
#include "base/fd.h"
#include "base/proc.h"

namespace liveguard {
namespace {

// A process maps a few hundred files at most; a maps file this large is
// not read.
constexpr std::size_t kMaxMapsBytes = 4u << 20;
constexpr std::size_t kMaxEntries = 4096;
constexpr std::size_t kMaxValueBytes = 4096;
// A machine runs a handful of libcs and interpreters: enough to keep them
// all, small enough to search in a line.
constexpr std::size_t kCacheEntries = 32;
// In the order a definition is preferred when an object has several:
// they are aliases of one variable in glibc and musl.
constexpr std::array<std::string_view, 3> kEnvironNames{"__environ", "environ", "_environ"};
constexpr std::string_view kDeleted = " (deleted)";

// A file mapped at offset 0: where its first page, and so its load base,
// is in the process.
struct Mapping {
    std::uint64_t start = 0, end = 0;
    std::uint64_t inode = 0;
    std::string path;  // as /proc/<pid>/maps shows it, " (deleted)" included
};

std::string_view next_field(std::string_view& line) {
    std::size_t b = line.find_first_not_of(' ');
    if (b == std::string_view::npos) b = line.size();
    std::size_t e = line.find(' ', b);
    if (e == std::string_view::npos) e = line.size();
    std::string_view f = line.substr(b, e - b);
    line.remove_prefix(e);
    return f;
}

std::optional<std::uint64_t> number(std::string_view s, int base) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

// "start-end perms offset dev inode   path" lines of files mapped at
// offset 0, in address order.
std::vector<Mapping> first_pages(std::string_view maps) {
    std::vector<Mapping> out;
    while (!maps.empty()) {
        std::size_t nl = maps.find('\n');
        std::string_view line = maps.substr(0, nl);
        maps.remove_prefix(nl == std::string_view::npos ? maps.size() : nl + 1);
        std::string_view range = next_field(line);
        next_field(line);  // perms
        std::string_view offset = next_field(line);
        next_field(line);  // device: for btrfs not the one stat() reports
        std::string_view inode = next_field(line);
        std::size_t p = line.find_first_not_of(' ');
        bool at_zero = !offset.empty() && offset.find_first_not_of('0') == std::string_view::npos;
        if (p == std::string_view::npos || line[p] != '/' || !at_zero) continue;
        std::size_t dash = range.find('-');
        if (dash == std::string_view::npos) continue;
        auto start = number(range.substr(0, dash), 16);
        auto end = number(range.substr(dash + 1), 16);
        auto ino = number(inode, 10);
        if (!start || !end || !ino || *ino == 0) continue;
        out.push_back({*start, *end, *ino, std::string(line.substr(p))});
    }
    return out;
}

std::string_view without_deleted(std::string_view path) {
    if (path.size() > kDeleted.size() && path.ends_with(kDeleted)) path.remove_suffix(kDeleted.size());
    return path;
}

bool is_libc(std::string_view path) {
    path = without_deleted(path);
    std::string_view base = path.substr(path.rfind('/') + 1);
    // glibc (libc-2.NN.so before 2.34), musl (Debian's libc.so; Alpine's
    // ld-musl-ARCH.so.1, which libc.musl-ARCH.so.1 links to).
    return base == "libc.so.6" || base == "libc.so" || (base.starts_with("libc-") && base.ends_with(".so")) ||
           (base.starts_with("ld-musl-") && base.ends_with(".so.1")) ||
           (base.starts_with("libc.musl-") && base.ends_with(".so.1"));
}

// The objects whose definition of environ the process would use, in the
// order the dynamic linker searches them: the executable, then libc.
std::vector<const Mapping*> candidates(const std::vector<Mapping>& maps, std::string_view exe) {
    std::vector<const Mapping*> out;
    auto add = [&out](const Mapping& m) {
        for (const Mapping* o : out)
            if (o->inode == m.inode && o->path == m.path) return;
        out.push_back(&m);
    };
    for (const auto& m : maps)
        if (!exe.empty() && m.path == exe) {
            add(m);
            break;
        }
    for (const auto& m : maps)
        if (is_libc(m.path)) {
            add(m);
            break;
        }
    return out;
}

// The mapped file itself: through map_files/, which is the very file the
// process maps even once replaced or deleted on disk, and which needs
// CAP_SYS_ADMIN in the initial namespace; else by its path in the
// process's root (its container's files), if that is still the same file.
UniqueFd open_mapped(int pid_dir, const Mapping& m) {
    // Named without the leading zeros maps shows (400000-41f000).
    char range[48];
    std::snprintf(range, sizeof range, "map_files/%" PRIx64 "-%" PRIx64, m.start, m.end);
    UniqueFd fd(::openat(pid_dir, range, O_RDONLY | O_CLOEXEC));
    if (fd || without_deleted(m.path).size() != m.path.size()) return fd;
    // O_PATH first: whatever a user put at that path is not opened (a
    // FIFO, a device) until it is known to be the mapped file.
    UniqueFd at(::openat(pid_dir, ("root" + m.path).c_str(), O_PATH | O_CLOEXEC));
    struct stat st {};
    if (!at || ::fstat(at.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != m.inode) return {};
    return UniqueFd(::open(("/proc/self/fd/" + std::to_string(at.get())).c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
}

// What a file's dynamic symbols say about environ, by the file's identity:
// a libc is read once, not at every event. The change time and size are
// part of it, so that an inode freed and reused is not taken for the old
// file.
struct FileId {
    dev_t dev;
    ino_t ino;
    off_t size;
    std::int64_t ctime_sec, ctime_nsec;
    bool operator==(const FileId&) const = default;
};

std::optional<ElfDataSymbol> environ_symbol(int fd) {
    static std::mutex mutex;
    static std::vector<std::pair<FileId, std::optional<ElfDataSymbol>>> cache;
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    FileId id{st.st_dev, st.st_ino, st.st_size, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
    {
        std::lock_guard lock(mutex);
        for (const auto& [k, v] : cache)
            if (k == id) return v;
    }
    auto sym = find_dynamic_object(fd, kEnvironNames);
    // A pointer-sized object, or it is not the variable meant.
    if (sym && sym->size != sizeof(std::uint64_t)) sym.reset();
    std::lock_guard lock(mutex);
    if (cache.size() >= kCacheEntries) cache.erase(cache.begin());
    cache.emplace_back(id, sym);
    return sym;
}

// Up to `len` bytes of the process's memory at `addr`: fewer where its
// readable memory ends, none where nothing is mapped.
std::size_t read_memory(int mem, std::uint64_t addr, void* buf, std::size_t len) {
    // pread's offset is signed; no user address comes near its top.
    if (addr > static_cast<std::uint64_t>(INT64_MAX) - len) return 0;
    ssize_t n;
    do n = ::pread(mem, buf, len, static_cast<off_t>(addr));
    while (n < 0 && errno == EINTR);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
}

// The mapping still holds the file read: not so once the process has
// exec'd between the reading of its maps and of its memory.
bool maps_file(int mem, std::uint64_t start, int file) {
    char in_memory[64], on_disk[64];
    return read_memory(mem, start, in_memory, sizeof in_memory) == sizeof in_memory &&
           ::pread(file, on_disk, sizeof on_disk, 0) == static_cast<ssize_t>(sizeof on_disk) &&
           std::memcmp(in_memory, on_disk, sizeof on_disk) == 0;
}

// Walks the NULL-ended array of "NAME=value" strings that `environ`
// (at `environ_addr`) points to, as getenv() does: the first entry wins.
std::optional<std::string> value_in(int mem, std::uint64_t environ_addr, std::string_view name) {
    std::uint64_t array = 0;
    if (read_memory(mem, environ_addr, &array, sizeof array) != sizeof array || array == 0 ||
        array > static_cast<std::uint64_t>(INT64_MAX))
        return std::nullopt;
    std::string key = std::string(name) + "=";
    std::vector<char> text(kMaxValueBytes + 1);
    std::array<std::uint64_t, 256> chunk{};
    std::size_t i = 0;
    while (i < kMaxEntries) {
        std::size_t want = std::min(chunk.size(), kMaxEntries - i);
        std::size_t got = read_memory(mem, array + i * sizeof(std::uint64_t), chunk.data(),
                                      want * sizeof(std::uint64_t)) /
                          sizeof(std::uint64_t);
        if (got == 0) return std::nullopt;
        for (std::size_t j = 0; j < got; ++j, ++i) {
            if (chunk[j] == 0) return std::nullopt;  // the end: not set
            if (read_memory(mem, chunk[j], text.data(), key.size()) != key.size() ||
                std::memcmp(text.data(), key.data(), key.size()) != 0)
                continue;
            std::size_t n = read_memory(mem, chunk[j] + key.size(), text.data(), kMaxValueBytes + 1);
            std::size_t len = strnlen(text.data(), n);
            // Unreadable, or longer than the bound: not known whole.
            if (len == n) return std::nullopt;
            return std::string(text.data(), len);
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> read_live_environ(pid_t pid, std::string_view name) {
    if (pid <= 0 || name.empty() || name.size() > kMaxValueBytes || name.find('=') != std::string_view::npos)
        return std::nullopt;
    // Everything below is read through this directory: the process's own
    // files, or nothing once it has exited, even if its pid is reused.
    UniqueFd dir(::open(("/proc/" + std::to_string(pid)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return std::nullopt;
    UniqueFd mem(::openat(dir.get(), "mem", O_RDONLY | O_CLOEXEC));
    if (!mem) return std::nullopt;
    auto maps = read_small_file_at(dir.get(), "maps", kMaxMapsBytes);
    if (!maps) return std::nullopt;
    char buf[PATH_MAX];
    ssize_t n = ::readlinkat(dir.get(), "exe", buf, sizeof buf);
    std::string exe = n > 0 && n < static_cast<ssize_t>(sizeof buf) ? std::string(buf, static_cast<std::size_t>(n)) : "";

    std::vector<Mapping> pages = first_pages(*maps);
    for (const Mapping* m : candidates(pages, exe)) {
        // A definition found further on is not known to be the one in use.
        UniqueFd file = open_mapped(dir.get(), *m);
        if (!file) return std::nullopt;
        auto sym = environ_symbol(file.get());
        if (!sym) continue;
        if (!maps_file(mem.get(), m->start, file.get())) return std::nullopt;
        return value_in(mem.get(), m->start - sym->first_load + sym->value, name);
    }
    return std::nullopt;
}

std::vector<std::string> python_interpreters() {
    std::vector<std::string> files;
    std::error_code ec;
    for (const char* dir : {"/usr/bin", "/usr/local/bin"})
        for (auto it = std::filesystem::directory_iterator(dir, ec);
             !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
            std::string name = it->path().filename().string();
            if (!name.starts_with("python") && !name.starts_with("pypy")) continue;
            auto real = std::filesystem::canonical(it->path(), ec);
            if (ec) {
                ec.clear();
                continue;
            }
            if (std::find(files.begin(), files.end(), real.string()) == files.end()) files.push_back(real.string());
        }
    return files;
}

std::optional<EnvironInExe> environ_in_executable(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    auto sym = environ_symbol(fd.get());
    if (!sym || !sym->first_exec) return std::nullopt;
    return EnvironInExe{static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size),
                        static_cast<std::int64_t>(sym->value - *sym->first_exec)};
}

std::size_t warm_environ_symbols() {
    std::vector<std::string> files;
    if (auto maps = read_small_file("/proc/self/maps", kMaxMapsBytes))
        for (const Mapping& m : first_pages(*maps))
            if (is_libc(m.path)) {
                files.push_back(std::string(without_deleted(m.path)));
                break;
            }
    for (auto& f : python_interpreters()) files.push_back(std::move(f));
    std::size_t read = 0;
    for (const auto& path : files) {
        if (read >= kCacheEntries / 2) break;  // room left for what events bring
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        environ_symbol(fd.get());
        ++read;
    }
    return read;
}

}  // namespace liveguard
