#include "base/json_members.h"

namespace liveguard::json {
namespace {

// An integer within [min, max]; nothing for any other value.
std::optional<std::int64_t> signed_value(const nlohmann::json& v, std::int64_t min, std::int64_t max) {
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max)) return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (!v.is_number_integer()) return std::nullopt;
    auto s = v.get<std::int64_t>();
    if (s < min || s > max) return std::nullopt;
    return s;
}

std::optional<std::uint64_t> unsigned_value(const nlohmann::json& v, std::uint64_t max) {
    if (!v.is_number_unsigned()) return std::nullopt;
    auto u = v.get<std::uint64_t>();
    if (u > max) return std::nullopt;
    return u;
}

}  // namespace

std::optional<nlohmann::json> parse(std::string_view text) {
    // Without exceptions: a malformed text is the usual bad input here (a
    // torn line, a file being replaced), not an exceptional one.
    auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

bool is_object(std::string_view text) {
    std::size_t at = text.find_first_not_of(" \t\r\n");
    return at != std::string_view::npos && text[at] == '{' && nlohmann::json::accept(text.begin(), text.end());
}

Members::Members(const nlohmann::json& object) : object_(object), ok_(object.is_object()) {}

const nlohmann::json* Members::find(const char* key) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
}

bool Members::has(const char* key) const { return object_.is_object() && object_.contains(key); }

std::string Members::text(const char* key) {
    const auto* v = find(key);
    if (!v) return "";
    if (!v->is_string()) {
        ok_ = false;
        return "";
    }
    return v->get<std::string>();
}

std::int64_t Members::signed_number(const char* key, std::int64_t min, std::int64_t max) {
    const auto* v = find(key);
    if (!v) return 0;
    auto n = signed_value(*v, min, max);
    ok_ &= n.has_value();
    return n.value_or(0);
}

std::uint64_t Members::unsigned_number(const char* key, std::uint64_t max) {
    const auto* v = find(key);
    if (!v) return 0;
    auto n = unsigned_value(*v, max);
    ok_ &= n.has_value();
    return n.value_or(0);
}

bool Members::flag(const char* key) {
    const auto* v = find(key);
    if (!v) return false;
    ok_ &= v->is_boolean();
    return v->is_boolean() && v->get<bool>();
}

std::vector<std::string> Members::strings(const char* key) {
    std::vector<std::string> out;
    const auto* v = find(key);
    if (!v) return out;
    if (!v->is_array()) {
        ok_ = false;
        return out;
    }
    for (const auto& e : *v) {
        if (!e.is_string()) {
            ok_ = false;
            return {};
        }
        out.push_back(e.get<std::string>());
    }
    return out;
}

std::size_t Members::array_size(const char* key) {
    const auto* v = find(key);
    if (!v) return 0;
    if (!v->is_array()) {
        ok_ = false;
        return 0;
    }
    return v->size();
}

std::int64_t Members::signed_element(const char* key, std::size_t i, std::int64_t min, std::int64_t max) {
    auto n = signed_value((*find(key))[i], min, max);
    ok_ &= n.has_value();
    return n.value_or(0);
}

std::uint64_t Members::unsigned_element(const char* key, std::size_t i, std::uint64_t max) {
    auto n = unsigned_value((*find(key))[i], max);
    ok_ &= n.has_value();
    return n.value_or(0);
}

const nlohmann::json* Members::array(const char* key) {
    const auto* v = find(key);
    ok_ &= v && v->is_array();
    return v && v->is_array() ? v : nullptr;
}

}  // namespace liveguard::json
