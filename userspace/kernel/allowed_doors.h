#pragma once
// Doors a policy may open to every session ([sessions] allow): only those
// that guard the machine as a whole, which some suites need on purpose
// (setting the clock inside a time namespace they made, loading a module
// they test). Doors that guard a protected service stay shut.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace liveguard {

// The door's bit in lg_allowed_doors (1 << enum lg_hook), or nothing when
// `name` is no door a policy may open.
std::optional<std::uint64_t> allowable_door_bit(std::string_view name);

// "reboot, module, clock, raw_io, power, securityfs": for error messages.
std::string allowable_door_names();

// Sets the doors open to sessions; throws with the cause.
void set_allowed_doors(int map_fd, std::uint64_t mask);

}  // namespace liveguard
