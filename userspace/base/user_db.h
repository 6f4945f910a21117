#pragma once
// Users and groups as /etc/passwd and /etc/group list them, read without
// the C library's NSS modules: a statically linked binary cannot load
// those, and `run --user` must work there too. Accounts only a directory
// service knows (LDAP, SSSD, systemd-homed) are found through NSS in the
// dynamically linked build and not at all in the static one.
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard {

struct Account {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;  // the primary group first, then each group listing the user
};

// The entry of `who` in passwd-format text: by name first, as chown and
// install do, then, when `who` is a number, by uid. Comments, blank lines,
// NIS compat lines (+, -) and entries without a numeric uid and gid are
// skipped.
std::optional<Account> find_in_passwd(std::string_view passwd, const std::string& who);

// The groups in group-format text whose member list names `user`, after
// `primary`; each gid once.
std::vector<gid_t> groups_in_group_file(std::string_view group, const std::string& user, gid_t primary);

// `who` (a name or a uid) from /etc/passwd and /etc/group, then, in the
// dynamically linked build, from NSS. Throws Error naming where it looked.
Account lookup_account(const std::string& who);

}  // namespace liveguard
