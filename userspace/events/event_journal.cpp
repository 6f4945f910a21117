// The journal file: appends, rotation, and reading what was appended.
#include "events/event_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <utility>

#include "base/error.h"
#include "base/fd.h"
#include "base/paths.h"
#include "events/event_format.h"
#include "events/journal_files.h"

namespace liveguard {

void journal_append(std::string_view line) { append_journal_line(paths::kJournal, line); }

JournalReader::JournalReader(bool from_start, std::string path) : path_(std::move(path)) {
    if (from_start) {
        // Every file, oldest first; the current one, last, is then followed.
        newer_ = open_journal_files(path_);
        return;
    }
    fd_ = UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (fd_ && ::fstat(fd_.get(), &st) == 0) offset_ = st.st_size;
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
    read_newer(lines);
    // Rotated (or created) since: the file now at the journal's path is
    // another one, and what was held is finished. Every file newer than
    // the held one is read from its start, oldest first: with more than
    // one rotation since, the held file is now .k and .k-1 ... .1 come
    // before the current one. A held file rotated out of what is kept was
    // older than every file left; none held (there was no journal), all
    // of them are new.
    struct stat now {}, held {};
    if (::stat(path_.c_str(), &now) != 0) return lines;
    const bool holding = fd_ && ::fstat(fd_.get(), &held) == 0;
    if (holding && held.st_ino == now.st_ino && held.st_dev == now.st_dev) return lines;
    try {
        newer_ = open_journal_files(path_);
    } catch (const std::exception&) {
        return lines;  // unreadable now: tried again at the next call
    }
    for (std::size_t i = 0; holding && i < newer_.size(); ++i) {
        struct stat st {};
        if (::fstat(newer_[i].fd.get(), &st) == 0 && st.st_ino == held.st_ino && st.st_dev == held.st_dev) {
            newer_.resize(i);  // the held file and what is older than it
            break;
        }
    }
    read_newer(lines);
    return lines;
}

void JournalReader::read_newer(std::vector<std::string>& lines) {
    // newer_ is newest first: each file read from its start, oldest first.
    while (!newer_.empty()) {
        fd_ = std::move(newer_.back().fd);
        newer_.pop_back();
        offset_ = 0;
        partial_.clear();
        drain(lines);
    }
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
