#pragma once
// The little JSON the CLI emits: flat objects and arrays written in order.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard::json {

// A JSON string literal, quotes included, with control characters and
// invalid UTF-8 bytes escaped so the output always parses.
std::string quote(std::string_view s);

// The top-level members of one JSON object, as written by ObjectWriter:
// strings decoded, every other value (numbers, null, arrays, objects) as
// its raw JSON text. Nothing when the text is not one object, or when a
// value nests more than 64 arrays and objects deep.
std::optional<std::map<std::string, std::string>> parse_object(std::string_view text);
// Whether the text is one well-formed JSON object (nesting as above),
// checked without building it.
bool is_object(std::string_view text);

// The elements of one JSON array, handed out as parse_object hands out
// members: strings decoded, every other value as its raw JSON text.
std::optional<std::vector<std::string>> parse_array(std::string_view text);

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
