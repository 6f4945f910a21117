#pragma once
// The executables whose `environ` the kernel side reads at a refusal, to
// put the test that was running (PYTEST_CURRENT_TEST) into the event: the
// Python interpreters that define it themselves. An interpreter that does
// not (one linked to a shared libpython whose libc holds it) is named by
// the consumer's read of the process's memory, later.
#include <cstddef>

namespace liveguard {

// Fills lg_environ_at (`map_fd`) for the interpreters found now; returns
// how many it lists. A full map or a failed update is skipped: no
// decision depends on it.
std::size_t publish_environ_offsets(int map_fd);

}  // namespace liveguard
