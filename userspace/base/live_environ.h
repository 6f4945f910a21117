#pragma once
// An environment variable of a running process as its libc holds it now.
// /proc/<pid>/environ is the block the process was started with; setenv()
// and putenv() (pytest setting PYTEST_CURRENT_TEST at each test phase)
// change libc's `environ` array in the heap instead, which only the
// process's memory shows. That array is found through the symbol
// `__environ` (or `environ`) of the object whose definition the process
// uses: its executable when that exports one (a copy relocation, as
// Debian's python3 has, or a program that defines it), else its libc
// (glibc's libc.so.6, musl's libc.so / ld-musl-*.so.1). A statically
// linked executable without a dynamic symbol table has no such symbol;
// other objects a process loads before libc (an LD_PRELOAD library that
// defines environ) are not consulted.
//
// Reading another process's memory takes ptrace access: root, or (with
// Yama's default) one's own child. The process may exit, exec or change
// its environment meanwhile: any failure is nothing, never an exception,
// and every read is bounded in size. Not in time: memory the process
// mapped from a file on a filesystem that does not answer (FUSE) blocks
// the read, as it blocks a read of /proc/<pid>/environ.
#include <sys/types.h>

#include <cstdint>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard {

// The value of `name` in `pid`'s environment now; nothing when it is not
// set, when the process is gone or its memory cannot be read, and when
// the value is longer than 4096 bytes or sits past the array's 4096th
// entry. A pid that does not exist costs one failed open.
std::optional<std::string> read_live_environ(pid_t pid, std::string_view name);

// The Python interpreters of the usual bin directories, each file once
// (python3 and python3.11 are one).
std::vector<std::string> python_interpreters();

// Where a process running the executable `path` keeps `environ`, as a
// distance from its mm->start_code: when the executable itself defines
// it (Debian's python3 does, by a copy relocation). With the file's inode
// number and size, by which the kernel side knows it.
struct EnvironInExe {
    std::uint64_t ino = 0;
    std::uint64_t size = 0;
    std::int64_t from_start_code = 0;
};
std::optional<EnvironInExe> environ_in_executable(const std::string& path);

// Reads ahead where `environ` is in this process's own libc and in the
// Python interpreters of the usual bin directories, so that the first
// event of a pytest run is not read late (its live value would then be a
// later test's) while those tables are parsed. Returns how many files
// were read.
std::size_t warm_environ_symbols();

}  // namespace liveguard
