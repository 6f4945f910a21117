#pragma once
// The event journal's files on disk: the current one, which appenders
// write, and the rotated ones beside it (`.1` the newest, up to `.7`), so
// that the journal survives a reboot and its size has a bound.
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"

namespace liveguard {

struct JournalLimits {
    // A file past this size is rotated before the next line is appended.
    off_t rotate_bytes = 16 << 20;
    // Rotated files kept: the oldest goes when another is made.
    int kept = 7;
};

// `journal`.n (n >= 1).
std::string rotated_journal_path(const std::string& journal, int n);

// Appends one line as one write (concurrent appenders never interleave),
// rotating the files first when the current one is full. The directory
// is made when missing. Throws with the cause when the line cannot be
// written.
void append_journal_line(const std::string& journal, std::string_view line, const JournalLimits& limits = {});

// The journal's files that exist, newest first (the current one, then
// `.1`, `.2`, ...), each opened once: a rotation while they are opened
// makes two names one file, which is kept once. The current one is opened
// first, so a rotation in between leaves none of its lines unread. Missing
// files are skipped; one that exists but cannot be opened throws.
struct JournalFile {
    UniqueFd fd;
    std::string path;  // the name it had when opened
};
std::vector<JournalFile> open_journal_files(const std::string& journal, int kept = JournalLimits{}.kept);

}  // namespace liveguard
