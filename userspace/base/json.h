#pragma once
// The JSON the tool writes: objects and arrays written member by member, in
// order. Reading it back is base/json_members.h's.
#include <cstdint>
#include <string>
#include <string_view>

namespace liveguard::json {

// A JSON string literal, quotes included, with control characters and
// invalid UTF-8 bytes escaped so the output always parses.
std::string quote(std::string_view s);

// Appends `"key":` (with a comma first unless the object just opened).
class ObjectWriter {
public:
    ObjectWriter() : out_("{") {}
    ObjectWriter& raw(std::string_view key, std::string_view json_value);
    ObjectWriter& str(std::string_view key, std::string_view value) { return raw(key, quote(value)); }
    ObjectWriter& num(std::string_view key, std::int64_t v) { return raw(key, std::to_string(v)); }
    ObjectWriter& unum(std::string_view key, std::uint64_t v) { return raw(key, std::to_string(v)); }
    ObjectWriter& boolean(std::string_view key, bool v) { return raw(key, v ? "true" : "false"); }
    std::string done() { return out_ + "}"; }

private:
    std::string out_;
    bool first_ = true;
};

// Appends elements, with a comma before all but the first.
class ArrayWriter {
public:
    ArrayWriter() : out_("[") {}
    ArrayWriter& raw(std::string_view json_value);
    ArrayWriter& str(std::string_view value) { return raw(quote(value)); }
    ArrayWriter& num(std::int64_t v) { return raw(std::to_string(v)); }
    std::string done() { return out_ + "]"; }

private:
    std::string out_;
};

}  // namespace liveguard::json
