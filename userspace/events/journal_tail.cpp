// The journal's last lines, read from its end backwards.
#include "events/journal_tail.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/error.h"
#include "events/journal_files.h"

namespace liveguard {
namespace {

constexpr off_t kBlock = 1 << 16;
constexpr const char* kUnreadable =
    "check the file's permissions, and the kernel log (dmesg) for I/O errors on its file system";

void read_at(int fd, char* to, std::size_t n, off_t at, const std::string& path) {
    while (n > 0) {
        ssize_t got = ::pread(fd, to, n, at);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw_errno("cannot read the event journal " + path, errno, kUnreadable);
        // The journal only grows (rotation renames it, and an open file
        // keeps its bytes): a shorter file was cut by someone else.
        if (got == 0)
            throw Error("the event journal " + path + " shrank while it was read",
                        "run the command again; if it keeps failing, something is truncating the journal");
        to += got;
        n -= static_cast<std::size_t>(got);
        at += got;
    }
}

// Calls `at_newline` with the offset of each newline in the first `size`
// bytes of `fd`, last first, while it returns true. False when stopped.
bool newlines_backwards(int fd, off_t size, const std::string& path, const std::function<bool(off_t)>& at_newline) {
    std::string block(static_cast<std::size_t>(std::min(size, kBlock)), '\0');
    for (off_t to = size; to > 0;) {
        off_t from = std::max<off_t>(0, to - kBlock);
        read_at(fd, block.data(), static_cast<std::size_t>(to - from), from, path);
        for (const void* nl = block.data() + (to - from);
             (nl = ::memrchr(block.data(), '\n', static_cast<const char*>(nl) - block.data()));)
            if (!at_newline(from + (static_cast<const char*>(nl) - block.data()))) return false;
        to = from;
    }
    return true;
}

}  // namespace

JournalTail read_journal_tail(const std::string& journal, std::size_t count,
                              const std::function<bool(std::string_view)>& keep) {
    // Newest first: the current file, then .1, .2, ... (events/journal_files.h
    // opens them so that a rotation in between loses no line and reads none
    // twice).
    auto files = open_journal_files(journal);
    const bool have_current = !files.empty() && files.front().path == journal;

    JournalTail tail;
    std::vector<std::string> kept;  // newest first
    for (auto& file : files) {
        const int fd = file.fd.get();
        const std::string& path = file.path;
        const bool current = have_current && &file == &files.front();
        struct stat st {};
        if (::fstat(fd, &st) != 0) throw_errno("cannot read the event journal " + path, errno, kUnreadable);
        // What follows the last newline is a line still being written: it
        // is left to reading on. Lines are read one at a time, so a long
        // one costs its own length and no more.
        off_t line_end = -1;
        auto take = [&](off_t from, off_t to) {
            if (from == to) return;
            std::string line(static_cast<std::size_t>(to - from), '\0');
            read_at(fd, line.data(), line.size(), from, path);
            if (keep(line)) kept.push_back(std::move(line));
        };
        bool to_start = newlines_backwards(fd, st.st_size, path, [&](off_t nl) {
            if (line_end < 0) {
                if (current) tail.end = nl + 1;
            } else {
                take(nl + 1, line_end);
            }
            line_end = nl;
            return kept.size() < count;
        });
        if (to_start && line_end > 0) take(0, line_end);
        if (kept.size() >= count) break;
    }
    tail.lines.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
    if (have_current) tail.file = std::move(files.front().fd);
    return tail;
}

}  // namespace liveguard
