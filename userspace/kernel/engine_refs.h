#pragma once
// The containers guarded at their engines' API sockets, in
// lg_engine_refs: every ref a request can name one with (its names, its
// id, each prefix of its id), so that bpf/lib/engine_request.h finds it
// with one lookup, whatever the client wrote.
#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace liveguard {

// The refs of a container with `id` and `names`: the names, the id and
// each of its prefixes (one that is also another container's name refuses
// a request to that one too: the safe side). Names longer than the key
// are cut to it, as the BPF side cuts what it reads.
std::set<std::string> engine_refs(const std::string& id, const std::vector<std::string>& names);

// Makes the map hold exactly `want`, and "#" with it when it is not empty.
// When it cannot hold them all, "*" goes in first: every request that
// would change any container is then refused, never one to a guarded
// container let through. Returns whether the map changed; throws when it
// cannot be read or written.
bool set_engine_refs(int map_fd, const std::set<std::string>& want);

}  // namespace liveguard
