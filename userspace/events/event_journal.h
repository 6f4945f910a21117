#pragma once
// Every consumer of the ring buffer (`events`, `run` at its end) appends
// what it consumed, as JSON lines with the details only userspace can read,
// to one journal; every reader prints from the journal. So two readers at
// once see every event, and none is lost between them.
#include <sys/types.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/paths.h"
#include "events/journal_files.h"
#include "events/journal_tail.h"

namespace liveguard {

// Appends one line to the journal (events/journal_files.h: one write, so
// concurrent appenders never interleave; rotated by size, a bound on what
// is kept).
void journal_append(std::string_view line);

// Reads the journal at `path` (with its rotated files, `path`.1 the newest)
// as it grows.
class JournalReader {
public:
    // From the journal's start (the oldest rotated file's, when there are
    // any: what they hold survives reboots), or from its current end.
    explicit JournalReader(bool from_start, std::string path = paths::kJournal);
    // The tail's lines first, then on from where the tail ends.
    explicit JournalReader(JournalTail tail, std::string path = paths::kJournal);
    // Complete lines appended since the last call. A rotation between
    // calls loses nothing: the rotated file is read to its end first.
    std::vector<std::string> read_new();

private:
    void drain(std::vector<std::string>& lines);
    void read_newer(std::vector<std::string>& lines);

    std::string path_;
    UniqueFd fd_;  // the file being read, which a rotation renames away
    std::vector<JournalFile> newer_;  // to read from their start after fd_, newest first
    off_t offset_ = 0;
    std::string partial_;
    std::vector<std::string> earlier_;  // the tail's lines, not yet returned
};

struct JournalFilter;

// What `events` prints as the journal grows: the lines appended since the
// last call that pass `filter`, as JSON or text, then flushed. Returns
// how many lines were printed. `out` is best fully buffered
// (buffer_by_batch), terminals too: a batch is then one write, not one a
// line, and is still shown whole when it ends.
void buffer_by_batch(std::FILE* out);
std::size_t print_new_journal_lines(JournalReader& reader, const JournalFilter& filter, bool json, bool colour,
                                    std::FILE* out);

}  // namespace liveguard
