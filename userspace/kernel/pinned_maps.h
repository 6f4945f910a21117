#pragma once
// File descriptors of the maps a loaded guard has pinned. Every command
// other than load/unload works through these.
#include "base/fd.h"

namespace liveguard {

struct PinnedMaps {
    UniqueFd protected_tasks;
    UniqueFd sessions;
    UniqueFd events;
    UniqueFd counters;
    UniqueFd protected_cgroups;
    UniqueFd cgroup_filter;
    UniqueFd settings;
    UniqueFd protected_pids;
    UniqueFd guarded_cgroups;
    UniqueFd guarded_inodes;
    UniqueFd exec_words;
    UniqueFd members;
    UniqueFd auto_names;
    UniqueFd path_excepts;
    UniqueFd environ_at;
    UniqueFd allowed_doors;
    UniqueFd protected_ports;
    UniqueFd session_tasks;
    UniqueFd session_limits;
    UniqueFd fs_space;
    UniqueFd engine_refs;

    // Throws "not loaded" with the fix when the pins are missing.
    // `read_only`: fds that can only read (what `status` needs), which a
    // test session may also get.
    static PinnedMaps open(bool read_only = false);

    // Throws unless this process may change liveguard (root, not a test
    // session member). Asked of one map every version pins, so that
    // `unload` still works on pins another version left.
    static void require_write_access();
};

}  // namespace liveguard
