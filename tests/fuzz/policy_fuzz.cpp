// parse_policy reads the policy file an administrator writes; a bad file
// must be reported as a PolicyError ("file:line: what is wrong") and
// nothing else: another exception type would escape `check-config` and
// `reload`'s handlers.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "policy/policy.h"

using namespace liveguard;

namespace {

const std::string kFile = "fuzz.toml";

bool path_kind(TargetKind k) {
    return k == TargetKind::PidFile || k == TargetKind::S6 || k == TargetKind::Cgroup;
}

void check(const Policy& p) {
    if (p.path != kFile) __builtin_trap();
    std::uint32_t expect_source = 0;
    for (const auto& t : p.targets) {
        // Sources number [[protect]] tables from 1 in file order; events
        // name the table by it.
        if (t.source != ++expect_source) __builtin_trap();
        if (t.line <= 0) __builtin_trap();
        if (t.kind == TargetKind::Pid) {
            if (t.pid <= 0 || t.pattern != std::to_string(t.pid)) __builtin_trap();
        } else if (path_kind(t.kind)) {
            if (t.pattern.empty() || t.pattern[0] != '/') __builtin_trap();
            if (t.pattern.find('\0') != std::string::npos) __builtin_trap();
        } else if (t.kind == TargetKind::SystemdUnit) {
            if (t.pattern.empty() || t.pattern.find('/') != std::string::npos) __builtin_trap();
        } else {
            __builtin_trap();
        }
        (void)t.describe();
    }
    if (p.session_parent && (p.session_parent->empty() || (*p.session_parent)[0] != '/'))
        __builtin_trap();
    for (const auto& tag : p.session_tags)
        if (tag.empty() || tag[0] != '/') __builtin_trap();
}

// "fuzz.toml:<line>: <message>"
bool names_file_and_line(const std::string& what) {
    std::string prefix = kFile + ":";
    if (what.compare(0, prefix.size(), prefix) != 0) return false;
    std::size_t i = prefix.size();
    std::size_t digits = 0;
    while (i < what.size() && std::isdigit(static_cast<unsigned char>(what[i]))) ++i, ++digits;
    if (digits == 0 || what.compare(i, 2, ": ") != 0) return false;
    if (what[prefix.size()] == '0') return false;  // lines count from 1
    return what.size() > i + 2;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    try {
        Policy p = parse_policy(in, kFile);
        check(p);
        // check-config and load must agree about the same bytes.
        Policy q = parse_policy(in, kFile);
        if (q.targets.size() != p.targets.size()) __builtin_trap();
        for (std::size_t i = 0; i < p.targets.size(); ++i)
            if (q.targets[i].pattern != p.targets[i].pattern || q.targets[i].kind != p.targets[i].kind)
                __builtin_trap();
    } catch (const PolicyError& e) {
        // Also catches toml++ internal checks that policy.cpp turned into
        // errors: those name no line, so each is reported here as a bug.
        if (!names_file_and_line(e.what())) {
            std::fprintf(stderr, "policy error without a line: %s\n", e.what());
            __builtin_trap();
        }
    } catch (...) {
        __builtin_trap();
    }
    return 0;
}
