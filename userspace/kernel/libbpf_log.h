#pragma once
// libbpf reports through one process-wide print callback. This scoped
// capture keeps its (verbose) output off the terminal unless asked for, and
// keeps the last lines so a failure can show the kernel's own reason.
#include <string>

namespace liveguard {

class LibbpfLogCapture {
public:
    explicit LibbpfLogCapture(bool echo);
    ~LibbpfLogCapture();
    LibbpfLogCapture(const LibbpfLogCapture&) = delete;
    LibbpfLogCapture& operator=(const LibbpfLogCapture&) = delete;

    // The captured warnings and errors, last `max_lines` lines.
    std::string tail(std::size_t max_lines = 12) const;

    // Process-wide switch set by --verbose.
    static void set_verbose(bool v);
    static bool verbose();
};

}  // namespace liveguard
