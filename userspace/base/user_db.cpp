#include "base/user_db.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace liveguard {
namespace {

std::vector<std::string_view> split(std::string_view line, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        auto at = line.find(sep);
        out.push_back(line.substr(0, at));
        if (at == std::string_view::npos) return out;
        line.remove_prefix(at + 1);
    }
}

std::optional<unsigned long> number(std::string_view s) {
    unsigned long v = 0;
    if (s.empty()) return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v > 0xfffffffeUL) return std::nullopt;
    return v;
}

// Each usable line of a passwd- or group-format file, split at ':'.
template <typename F>
void for_each_entry(std::string_view text, std::size_t min_fields, F&& f) {
    while (!text.empty()) {
        auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
        auto fields = split(line, ':');
        if (fields.size() < min_fields || fields[0].empty()) continue;
        if (f(fields)) return;
    }
}

std::string read_file(const char* path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

#ifndef LG_STATIC
std::optional<Account> find_through_nss(const std::string& who) {
    struct passwd pw {};
    struct passwd* res = nullptr;
    std::vector<char> buf(16384);
    if (getpwnam_r(who.c_str(), &pw, buf.data(), buf.size(), &res) != 0 || !res) {
        auto uid = number(who);
        if (!uid || getpwuid_r(static_cast<uid_t>(*uid), &pw, buf.data(), buf.size(), &res) != 0 || !res)
            return std::nullopt;
    }
    Account a{pw.pw_name, pw.pw_uid, pw.pw_gid, {}};
    int n = 64;
    std::vector<gid_t> groups(n);
    if (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
        groups.resize(n);
        if (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) n = 0;
    }
    groups.resize(n);
    a.groups = {a.gid};
    for (gid_t g : groups)
        if (std::find(a.groups.begin(), a.groups.end(), g) == a.groups.end()) a.groups.push_back(g);
    return a;
}
#endif

}  // namespace

std::optional<Account> find_in_passwd(std::string_view passwd, const std::string& who) {
    std::optional<Account> by_name, by_uid;
    auto wanted_uid = number(who);
    for_each_entry(passwd, 4, [&](const std::vector<std::string_view>& f) {
        auto uid = number(f[2]);
        auto gid = number(f[3]);
        if (!uid || !gid) return false;
        Account a{std::string(f[0]), static_cast<uid_t>(*uid), static_cast<gid_t>(*gid), {}};
        if (f[0] == who) {
            by_name = std::move(a);
            return true;
        }
        if (wanted_uid && *uid == *wanted_uid && !by_uid) by_uid = std::move(a);
        return false;
    });
    return by_name ? by_name : by_uid;
}

std::vector<gid_t> groups_in_group_file(std::string_view group, const std::string& user, gid_t primary) {
    std::vector<gid_t> out{primary};
    for_each_entry(group, 4, [&](const std::vector<std::string_view>& f) {
        auto gid = number(f[2]);
        if (!gid) return false;
        for (auto member : split(f[3], ',')) {
            // As the C library reads them: blanks around a name ignored.
            while (!member.empty() && (member.front() == ' ' || member.front() == '\t')) member.remove_prefix(1);
            while (!member.empty() && (member.back() == ' ' || member.back() == '\t')) member.remove_suffix(1);
            if (member == user && std::find(out.begin(), out.end(), *gid) == out.end())
                out.push_back(static_cast<gid_t>(*gid));
        }
        return false;
    });
    return out;
}

// No more than the kernel takes (setgroups fails past NGROUPS_MAX).
static void cap_groups(std::vector<gid_t>& groups) {
    long max = ::sysconf(_SC_NGROUPS_MAX);
    if (max > 0 && groups.size() > static_cast<std::size_t>(max)) groups.resize(static_cast<std::size_t>(max));
}

Account lookup_account(const std::string& who) {
    if (auto a = find_in_passwd(read_file("/etc/passwd"), who)) {
        a->groups = groups_in_group_file(read_file("/etc/group"), a->name, a->gid);
#ifndef LG_STATIC
        // Groups a directory service adds for a user of the files, as
        // initgroups would.
        if (auto nss = find_through_nss(a->name); nss && nss->uid == a->uid)
            for (gid_t g : nss->groups)
                if (std::find(a->groups.begin(), a->groups.end(), g) == a->groups.end()) a->groups.push_back(g);
#endif
        cap_groups(a->groups);
        return *a;
    }
#ifndef LG_STATIC
    if (auto a = find_through_nss(who)) {
        cap_groups(a->groups);
        return *a;
    }
    throw Error("no such user: " + who + " (looked in /etc/passwd and the system's user database)",
                "give an existing user name or uid (see getent passwd)");
#else
    throw Error("no such user: " + who + " in /etc/passwd",
                "give a user /etc/passwd lists; this static build does not ask directory services "
                "(LDAP, SSSD): use the distribution's package for such accounts");
#endif
}

}  // namespace liveguard
