#include "base/json.h"

#include <cstdio>

namespace liveguard::json {

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
        std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        bool ok = len > 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k)
            ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
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

namespace {

struct Cursor {
    std::string_view s;
    std::size_t i = 0;
    void ws() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    }
    bool eat(char c) {
        ws();
        if (i < s.size() && s[i] == c) {
            ++i;
            return true;
        }
        return false;
    }
};

void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
        out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
}

std::optional<std::string> read_string(Cursor& c) {
    if (!c.eat('"')) return std::nullopt;
    std::string out;
    while (c.i < c.s.size()) {
        // Up to the next quote or escape, a run at a time.
        std::size_t end = c.i;
        while (end < c.s.size() && c.s[end] != '"' && c.s[end] != '\\') ++end;
        if (end == c.s.size()) return std::nullopt;
        out.append(c.s.substr(c.i, end - c.i));
        c.i = end;
        char ch = c.s[c.i++];
        if (ch == '"') return out;
        if (c.i >= c.s.size()) return std::nullopt;
        char e = c.s[c.i++];
        switch (e) {
            case 'n': out.push_back('\n'); break;
            case 't': out.push_back('\t'); break;
            case 'r': out.push_back('\r'); break;
            case 'b': out.push_back('\b'); break;
            case 'f': out.push_back('\f'); break;
            case 'u': {
                if (c.i + 4 > c.s.size()) return std::nullopt;
                unsigned cp = 0;
                for (int k = 0; k < 4; ++k) {
                    char h = c.s[c.i++];
                    cp <<= 4;
                    if (h >= '0' && h <= '9') cp |= h - '0';
                    else if (h >= 'a' && h <= 'f') cp |= h - 'a' + 10;
                    else if (h >= 'A' && h <= 'F') cp |= h - 'A' + 10;
                    else return std::nullopt;
                }
                put_utf8(out, cp);
                break;
            }
            default: out.push_back(e);
        }
    }
    return std::nullopt;
}

// Deeper than anything the writers nest (parents: an array of objects).
// Each level is a stack frame: a corrupt journal line of 100 000 '['
// overflowed the stack.
constexpr int kMaxDepth = 64;

// Skips one value of any kind; false when it is malformed or nests deeper
// than kMaxDepth.
bool skip_value(Cursor& c, int depth = 0) {
    c.ws();
    if (c.i >= c.s.size()) return false;
    char ch = c.s[c.i];
    if (ch == '"') return read_string(c).has_value();
    if (ch == '{' || ch == '[') {
        if (depth >= kMaxDepth) return false;
        char close = ch == '{' ? '}' : ']';
        ++c.i;
        if (c.eat(close)) return true;
        for (;;) {
            if (close == '}') {
                if (!read_string(c) || !c.eat(':')) return false;
            }
            if (!skip_value(c, depth + 1)) return false;
            if (c.eat(close)) return true;
            if (!c.eat(',')) return false;
        }
    }
    std::size_t start = c.i;
    while (c.i < c.s.size() && c.s[c.i] != ',' && c.s[c.i] != '}' && c.s[c.i] != ']' &&
           c.s[c.i] != ' ' && c.s[c.i] != '\n')
        ++c.i;
    return c.i > start;
}

// A member or element as the parsers hand it out: a string decoded, any
// other value as its raw text.
std::optional<std::string> read_plain_value(Cursor& c) {
    c.ws();
    if (c.i < c.s.size() && c.s[c.i] == '"') return read_string(c);
    std::size_t start = c.i;
    if (!skip_value(c)) return std::nullopt;
    return std::string(c.s.substr(start, c.i - start));
}

}  // namespace

bool is_object(std::string_view text) {
    Cursor c{text};
    c.ws();
    if (c.i >= c.s.size() || c.s[c.i] != '{' || !skip_value(c)) return false;
    c.ws();
    return c.i == text.size();
}

std::optional<std::map<std::string, std::string>> parse_object(std::string_view text) {
    Cursor c{text};
    std::map<std::string, std::string> out;
    if (!c.eat('{')) return std::nullopt;
    if (c.eat('}')) return out;
    for (;;) {
        auto key = read_string(c);
        if (!key || !c.eat(':')) return std::nullopt;
        auto v = read_plain_value(c);
        if (!v) return std::nullopt;
        out[*key] = std::move(*v);
        if (c.eat('}')) break;
        if (!c.eat(',')) return std::nullopt;
    }
    c.ws();
    if (c.i != text.size()) return std::nullopt;
    return out;
}

std::optional<std::vector<std::string>> parse_array(std::string_view text) {
    Cursor c{text};
    std::vector<std::string> out;
    if (!c.eat('[')) return std::nullopt;
    if (!c.eat(']')) {
        for (;;) {
            auto v = read_plain_value(c);
            if (!v) return std::nullopt;
            out.push_back(std::move(*v));
            if (c.eat(']')) break;
            if (!c.eat(',')) return std::nullopt;
        }
    }
    c.ws();
    if (c.i != text.size()) return std::nullopt;
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
