// The test an event belongs to is read from what session members write:
// the pytest plugin's log ("<boot ns>\t<test id>" lines, the last one
// possibly torn) and /proc/<pid>/environ.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "events/event_details.h"

using namespace liveguard;

namespace {

void check_test_at(std::string_view log, std::uint64_t boot_ns) {
    std::string t = test_at_since(log, boot_ns);
    // A test id is the rest of one complete line.
    if (t.find('\n') != std::string::npos) __builtin_trap();
    if (!t.empty() && log.find(t) == std::string_view::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);

    check_test_at(in, 0);
    check_test_at(in, UINT64_MAX);
    check_test_at(in, 1000000000ull * 3600);

    auto args = split_args(in);
    // Arguments are the NUL-separated pieces in order: joined back they
    // are the input up to its trailing NULs.
    std::string joined;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].find('\0') != std::string::npos) __builtin_trap();
        if (i) joined.push_back('\0');
        joined += args[i];
    }
    std::string_view rest = in;
    while (!rest.empty() && rest.back() == '\0') rest.remove_suffix(1);
    if (joined != rest) __builtin_trap();

    std::string id = pytest_test_from_environ(in);
    if (id.find('\0') != std::string::npos) __builtin_trap();
    if (!id.empty() && in.find("PYTEST_CURRENT_TEST=" + id) == std::string_view::npos) __builtin_trap();
    return 0;
}
