#pragma once
// s6-supervise's binary `supervise/status` file: which PID the supervised
// process has, if it is up. s6-svstat is the reference reader; the layout
// is two TAI64N stamps (12 bytes each) then the PID as a big-endian
// 64-bit number, wstat and flags (35 bytes in s6 2.11; later versions
// append fields, earlier ones are not supported).
#include <sys/types.h>

#include <optional>
#include <string_view>

namespace liveguard {

struct S6Status {
    std::optional<pid_t> pid;  // nullopt when the service is down
};

// nullopt when the content is not an s6 status file of a known layout.
std::optional<S6Status> parse_s6_status(std::string_view bytes);

}  // namespace liveguard
