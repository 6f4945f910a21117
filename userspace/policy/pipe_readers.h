#pragma once
// Who reads a service's output. A service writing its stdout or stderr
// into a pipe dies of SIGPIPE (or fails every write with EPIPE) once the
// last reader of that pipe is gone, so whoever reads it keeps the service
// alive and is protected with it, as s6's log service is. Reads /proc.
#include <sys/types.h>

#include <vector>

namespace liveguard {

struct PipeReader {
    pid_t pid = 0;
    pid_t service = 0;   // whose output it reads
    int service_fd = 0;  // 1 or 2: which of the service's outputs
};

// The processes holding a descriptor open for reading on the pipe behind
// a service's fd 1 or 2 (none for outputs that are not pipes), each
// service's own descriptors aside. One pass over /proc for all services;
// processes that vanish while looked at are skipped.
std::vector<PipeReader> output_pipe_readers(const std::vector<pid_t>& services);

}  // namespace liveguard
