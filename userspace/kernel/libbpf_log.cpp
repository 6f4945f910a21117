#include "kernel/libbpf_log.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <deque>

namespace liveguard {
namespace {

// libbpf's callback has no user pointer, so the capture state is static;
// it is only touched on the CLI's single thread.
std::deque<std::string> g_lines;
bool g_echo = false;
bool g_verbose = false;
libbpf_print_fn_t g_previous = nullptr;

int capture(enum libbpf_print_level level, const char* fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    if (g_echo || g_verbose) std::vfprintf(stderr, fmt, copy);
    va_end(copy);
    if (level == LIBBPF_DEBUG) return 0;
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, fmt, args);
    std::string line(buf);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    g_lines.push_back(line);
    if (g_lines.size() > 200) g_lines.pop_front();
    return 0;
}

}  // namespace

LibbpfLogCapture::LibbpfLogCapture(bool echo) {
    g_lines.clear();
    g_echo = echo;
    g_previous = libbpf_set_print(capture);
}

LibbpfLogCapture::~LibbpfLogCapture() { libbpf_set_print(g_previous); }

std::string LibbpfLogCapture::tail(std::size_t max_lines) const {
    std::string out;
    std::size_t start = g_lines.size() > max_lines ? g_lines.size() - max_lines : 0;
    for (std::size_t i = start; i < g_lines.size(); ++i) out += "  libbpf: " + g_lines[i] + "\n";
    return out;
}

void LibbpfLogCapture::set_verbose(bool v) { g_verbose = v; }
bool LibbpfLogCapture::verbose() { return g_verbose; }

}  // namespace liveguard
