#pragma once
// Reading JSON that this tool and its neighbours wrote (the watcher's state,
// session info, the `run` protocol, a container engine's config): parsed
// whole by nlohmann/json, then read member by member and by kind.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace liveguard::json {

// One JSON document (RFC 8259, nested to any depth); nothing when the text
// is not one, or holds bytes that are not UTF-8.
std::optional<nlohmann::json> parse(std::string_view text);

// Whether the text is one JSON object, checked without building it.
bool is_object(std::string_view text);

// An object's members by kind. A member that is absent, or null, reads as
// empty, zero or false; one of another kind (a number where a string
// belongs, a negative pid, a number past its type's range) reads as that
// too and makes ok() false. Not an object at all: ok() is false.
class Members {
public:
    explicit Members(const nlohmann::json& object);

    bool ok() const { return ok_; }
    bool has(const char* key) const;

    std::string text(const char* key);
    template <typename T>
    T number(const char* key) {
        if constexpr (std::numeric_limits<T>::is_signed)
            return static_cast<T>(signed_number(key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        else
            return static_cast<T>(unsigned_number(key, std::numeric_limits<T>::max()));
    }
    bool flag(const char* key);
    // An array of strings.
    std::vector<std::string> strings(const char* key);
    // An array of integers, each within T's range.
    template <typename T>
    std::vector<T> numbers(const char* key) {
        std::vector<T> out;
        for (std::size_t i = 0, n = array_size(key); i < n; ++i) {
            if constexpr (std::numeric_limits<T>::is_signed)
                out.push_back(static_cast<T>(
                    signed_element(key, i, std::numeric_limits<T>::min(), std::numeric_limits<T>::max())));
            else
                out.push_back(static_cast<T>(unsigned_element(key, i, std::numeric_limits<T>::max())));
        }
        return out;
    }
    // A member holding an array, for reading further; nothing (and ok()
    // false) when it is absent or of another kind.
    const nlohmann::json* array(const char* key);

private:
    const nlohmann::json* find(const char* key) const;
    std::int64_t signed_number(const char* key, std::int64_t min, std::int64_t max);
    std::uint64_t unsigned_number(const char* key, std::uint64_t max);
    std::size_t array_size(const char* key);
    std::int64_t signed_element(const char* key, std::size_t i, std::int64_t min, std::int64_t max);
    std::uint64_t unsigned_element(const char* key, std::size_t i, std::uint64_t max);

    const nlohmann::json& object_;
    bool ok_ = true;
};

}  // namespace liveguard::json
