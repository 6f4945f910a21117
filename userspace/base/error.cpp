#include "base/error.h"

#include <cstring>

namespace liveguard {

std::string errno_message(const std::string& what, int err) {
    return what + ": " + std::strerror(err);
}

void throw_errno(const std::string& what, int err, std::string hint) {
    throw Error(errno_message(what, err), std::move(hint));
}

}  // namespace liveguard
