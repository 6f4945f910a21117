#include "base/json.h"

#include <cstdio>

namespace liveguard::json {
namespace {

// The length of the well-formed UTF-8 sequence `s` starts with (2 to 4
// bytes), or 0.
std::size_t utf8_sequence_length(std::string_view s) {
    auto byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    unsigned c = byte(0);
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xbf;  // the second byte's range
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (byte(1) < lo || byte(1) > hi) return 0;
    for (std::size_t k = 2; k < len; ++k)
        if ((byte(k) & 0xc0) != 0x80) return 0;
    return len;
}

}  // namespace

std::string quote(std::string_view s) {
    std::string out = "\"";
    out.reserve(s.size() + 2);
    for (std::size_t i = 0; i < s.size(); ++i) {
        // Plain printable ASCII, the usual case, is copied a run at a time.
        std::size_t run = i;
        while (run < s.size() && static_cast<unsigned char>(s[run]) >= 0x20 &&
               static_cast<unsigned char>(s[run]) < 0x7f && s[run] != '"' && s[run] != '\\')
            ++run;
        if (run > i) {
            out.append(s.substr(i, run - i));
            i = run - 1;
            continue;
        }
        unsigned char c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"': out += "\\\""; continue;
            case '\\': out += "\\\\"; continue;
            case '\n': out += "\\n"; continue;
            case '\t': out += "\\t"; continue;
            case '\r': out += "\\r"; continue;
            default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            continue;
        }
        if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            continue;
        }
        // Keep well-formed UTF-8 sequences; escape stray bytes as U+00XX.
        // Well-formed as RFC 3629 has it: no overlong forms, no surrogates,
        // nothing past U+10FFFF, which strict readers (ours, Python's)
        // refuse a whole line for.
        std::size_t len = utf8_sequence_length(s.substr(i));
        bool ok = len > 0;
        if (ok) {
            out.append(s.substr(i, len));
            i += len - 1;
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        }
    }
    out += "\"";
    return out;
}

ObjectWriter& ObjectWriter::raw(std::string_view key, std::string_view json_value) {
    if (!first_) out_ += ",";
    first_ = false;
    out_ += quote(key);
    out_ += ":";
    out_ += json_value;
    return *this;
}

ArrayWriter& ArrayWriter::raw(std::string_view json_value) {
    if (out_.size() > 1) out_ += ",";
    out_ += json_value;
    return *this;
}

}  // namespace liveguard::json
