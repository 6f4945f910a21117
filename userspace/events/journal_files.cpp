// The journal's files: appending, rotating, and opening them to read.
#include "events/journal_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "base/error.h"

namespace liveguard {
namespace {

constexpr const char* kUnreadable =
    "check the file's permissions, and the kernel log (dmesg) for I/O errors on its file system";

// Renames `journal` to .1 after moving each older file one number up and
// dropping the oldest. Under a lock, and only when the file is still full
// once the lock is held: two appenders that both found it full rotate once.
// A rotation that fails leaves the files as they are; the line is still
// appended (the journal grows past its bound instead of losing lines).
void rotate(const std::string& journal, const JournalLimits& limits) {
    UniqueFd lock(::open((journal + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!lock) return;
    while (::flock(lock.get(), LOCK_EX) != 0)
        if (errno != EINTR) return;
    struct stat st {};
    if (::stat(journal.c_str(), &st) != 0 || st.st_size <= limits.rotate_bytes) return;
    int kept = limits.kept < 1 ? 1 : limits.kept;
    ::unlink(rotated_journal_path(journal, kept).c_str());
    for (int n = kept - 1; n >= 1; --n)
        ::rename(rotated_journal_path(journal, n).c_str(), rotated_journal_path(journal, n + 1).c_str());
    ::rename(journal.c_str(), rotated_journal_path(journal, 1).c_str());
}

bool same_file(int fd, const struct stat& other) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && st.st_ino == other.st_ino && st.st_dev == other.st_dev;
}

}  // namespace

std::string rotated_journal_path(const std::string& journal, int n) { return journal + "." + std::to_string(n); }

void append_journal_line(const std::string& journal, std::string_view line, const JournalLimits& limits) {
    std::filesystem::path dir = std::filesystem::path(journal).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
        std::filesystem::create_directories(dir, ec);
        if (ec) throw_errno("cannot make the event journal's directory " + dir.string(), ec.value());
        ::chmod(dir.c_str(), 0755);
    }
    struct stat st {};
    if (::stat(journal.c_str(), &st) == 0 && st.st_size > limits.rotate_bytes) rotate(journal, limits);
    UniqueFd fd(::open(journal.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!fd) throw_errno("cannot open the event journal " + journal, errno);
    // One write: appenders never interleave. The line is not copied for
    // its newline: a batch of lines can be megabytes.
    char nl = '\n';
    struct iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {&nl, 1}};
    if (::writev(fd.get(), parts, 2) != static_cast<ssize_t>(line.size() + 1))
        throw_errno("cannot append to " + journal, errno);
}

std::vector<JournalFile> open_journal_files(const std::string& journal, int kept) {
    std::vector<JournalFile> files;
    auto add = [&](std::string path) {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) {
            if (errno == ENOENT) return;
            throw_errno("cannot open the event journal " + path, errno, kUnreadable);
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) throw_errno("cannot read the event journal " + path, errno, kUnreadable);
        for (const auto& f : files)
            if (same_file(f.fd.get(), st)) return;
        files.push_back({std::move(fd), std::move(path)});
    };
    add(journal);
    for (int n = 1; n <= kept; ++n) add(rotated_journal_path(journal, n));
    return files;
}

}  // namespace liveguard
