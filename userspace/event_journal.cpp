#include "event_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "error.h"
#include "fd.h"
#include "watcher.h"

namespace liveguard {
namespace {
constexpr off_t kRotateBytes = 32 << 20;
}

void journal_append(const std::string& line) {
    ::mkdir(kStateDir, 0755);
    struct stat st {};
    if (::stat(kJournalFile, &st) == 0 && st.st_size > kRotateBytes)
        ::rename(kJournalFile, (std::string(kJournalFile) + ".1").c_str());
    UniqueFd fd(::open(kJournalFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640));
    if (!fd) throw_errno(std::string("cannot open the event journal ") + kJournalFile, errno);
    std::string l = line + "\n";
    if (::write(fd.get(), l.data(), l.size()) != static_cast<ssize_t>(l.size()))
        throw_errno(std::string("cannot append to ") + kJournalFile, errno);
}

JournalReader::JournalReader(bool from_start) {
    struct stat st {};
    if (!from_start && ::stat(kJournalFile, &st) == 0) offset_ = st.st_size;
}

std::vector<std::string> JournalReader::read_new() {
    std::vector<std::string> lines;
    UniqueFd fd(::open(kJournalFile, O_RDONLY | O_CLOEXEC));
    if (!fd) return lines;
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && st.st_size < offset_) offset_ = 0;  // rotated
    char buf[65536];
    for (;;) {
        ssize_t n = ::pread(fd.get(), buf, sizeof buf, offset_);
        if (n <= 0) break;
        offset_ += n;
        partial_.append(buf, static_cast<std::size_t>(n));
    }
    std::size_t start = 0, nl;
    while ((nl = partial_.find('\n', start)) != std::string::npos) {
        lines.push_back(partial_.substr(start, nl - start));
        start = nl + 1;
    }
    partial_.erase(0, start);
    return lines;
}

}  // namespace liveguard
