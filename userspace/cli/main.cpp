#include <cstdio>
#include <exception>

#include "base/error.h"
#include "cli/cli.h"

int main(int argc, char** argv) {
    auto parsed = liveguard::parse_cli(argc, argv);
    std::fputs(parsed.out.c_str(), stdout);
    std::fputs(parsed.err.c_str(), stderr);
    if (!parsed.command) return parsed.exit_code;
    try {
        return liveguard::execute(*parsed.command);
    } catch (const liveguard::Error& e) {
        std::fprintf(stderr, "liveguard-bpf: error: %s\n", e.what());
        if (!e.hint().empty()) std::fprintf(stderr, "liveguard-bpf: next step: %s\n", e.hint().c_str());
        return e.exit_code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liveguard-bpf: error: %s\n", e.what());
        return 1;
    }
}
