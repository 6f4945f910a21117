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
// each of its prefixes, except a prefix that is another container's name
// (the engines take a name before a prefix). Names longer than the key
// are cut to it, as the BPF side cuts what it reads.
std::set<std::string> engine_refs(const std::string& id, const std::vector<std::string>& names,
                                  const std::set<std::string>& other_names);

// Makes the map hold exactly `want`. When it cannot hold them all, "*"
// goes in first: every request that would change any container is then
// refused, never one to a guarded container let through. Returns whether
// the map changed; throws when it cannot be read or written.
bool set_engine_refs(int map_fd, const std::set<std::string>& want);

}  // namespace liveguard
