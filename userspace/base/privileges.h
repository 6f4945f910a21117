#pragma once
// The privilege check every command that changes the kernel's state makes
// first, so the error names the fix instead of a refused system call.
#include <string>

namespace liveguard {

// Throws unless running as root, naming `command` in the fix.
void require_root(const std::string& command);

}  // namespace liveguard
