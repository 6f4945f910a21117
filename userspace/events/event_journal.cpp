// The journal file: appends, rotation, and reading what was appended.
#include "events/event_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "base/error.h"
#include "base/fd.h"
#include "base/paths.h"
#include "events/event_format.h"

namespace liveguard {
namespace {
constexpr off_t kRotateBytes = 32 << 20;
}

void journal_append(std::string_view line) {
    ::mkdir(paths::kStateDir, 0755);
    struct stat st {};
    if (::stat(paths::kJournal, &st) == 0 && st.st_size > kRotateBytes)
        ::rename(paths::kJournal, (std::string(paths::kJournal) + ".1").c_str());
    UniqueFd fd(::open(paths::kJournal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!fd) throw_errno(std::string("cannot open the event journal ") + paths::kJournal, errno);
    // One write: appenders never interleave. The line is not copied for
    // its newline: a batch of lines can be megabytes.
    char nl = '\n';
    struct iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {&nl, 1}};
    if (::writev(fd.get(), parts, 2) != static_cast<ssize_t>(line.size() + 1))
        throw_errno(std::string("cannot append to ") + paths::kJournal, errno);
}

JournalReader::JournalReader(bool from_start, std::string path) : path_(std::move(path)) {
    // From the start means the rotated file too: what it holds is as recent
    // as a minute ago when the journal has just been rotated. read_new()
    // moves on to the current file once the rotated one is read.
    if (from_start) fd_ = UniqueFd(::open((path_ + ".1").c_str(), O_RDONLY | O_CLOEXEC));
    if (fd_) return;
    fd_ = UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!from_start && fd_ && ::fstat(fd_.get(), &st) == 0) offset_ = st.st_size;
}

JournalReader::JournalReader(JournalTail tail, std::string path)
    : path_(std::move(path)), fd_(std::move(tail.file)), offset_(tail.end), earlier_(std::move(tail.lines)) {}

void JournalReader::drain(std::vector<std::string>& lines) {
    char buf[65536];
    for (;;) {
        ssize_t n = ::pread(fd_.get(), buf, sizeof buf, offset_);
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
}

std::vector<std::string> JournalReader::read_new() {
    std::vector<std::string> lines = std::exchange(earlier_, {});
    if (fd_) drain(lines);
    // Rotated (or created) since: the file now at the journal's path is
    // another one; what was held is finished, so read the new one from 0.
    struct stat now {}, held {};
    if (::stat(path_.c_str(), &now) != 0) return lines;
    if (fd_ && ::fstat(fd_.get(), &held) == 0 && held.st_ino == now.st_ino && held.st_dev == now.st_dev)
        return lines;
    UniqueFd next(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (!next) return lines;
    fd_ = std::move(next);
    offset_ = 0;
    partial_.clear();
    drain(lines);
    return lines;
}

void buffer_by_batch(std::FILE* out) { std::setvbuf(out, nullptr, _IOFBF, 1 << 16); }

std::size_t print_new_journal_lines(JournalReader& reader, const JournalFilter& filter, bool json, bool colour,
                                    std::FILE* out) {
    std::size_t printed = 0;
    for (const auto& line : reader.read_new())
        if (auto text = render_journal_line(line, filter, json, colour)) {
            std::fwrite(text->data(), 1, text->size(), out);
            std::fputc('\n', out);
            ++printed;
        }
    std::fflush(out);
    return printed;
}

}  // namespace liveguard
