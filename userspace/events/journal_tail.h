#pragma once
// The last lines of the event journal, as `tail -n` finds them: what
// `events` shows of the past before it follows. The journal is read
// backwards a block at a time and only as far as the lines asked for go,
// so ten lines of a journal 128 MiB long (it and its rotated files) cost
// ten lines' worth of reading, not 128 MiB of memory.
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"

namespace liveguard {

struct JournalTail {
    std::vector<std::string> lines;  // oldest first
    // Reading on starts here: the journal file as it was when its tail was
    // read (none when there was none), just after its last complete line.
    // A line still being written is not in `lines`; it is read on from
    // here once its newline is there.
    UniqueFd file;
    off_t end = 0;
};

// The last `count` complete lines that `keep` accepts of the journal at
// `journal` and, before it, of its rotated files (`journal`.1, .2, ...).
// Throws when a journal file exists but cannot be read.
JournalTail read_journal_tail(const std::string& journal, std::size_t count,
                              const std::function<bool(std::string_view)>& keep);

}  // namespace liveguard
