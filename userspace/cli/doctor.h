#pragma once
// Layered check of everything enforcement needs, each layer with its own
// verdict and the fix a person can act on. Later layers are skipped when
// an earlier one makes them meaningless.
#include <string>
#include <vector>

namespace liveguard {

enum class CheckState { Ok, Warn, Fail, Skipped };

struct Check {
    std::string name;
    CheckState state = CheckState::Skipped;
    std::string detail;  // what was found
    std::string fix;     // what to do; empty when nothing
};

struct DoctorReport {
    std::vector<Check> checks;
    // The attach form `load` will choose here ("lsm", "fmod_ret",
    // "audit-only"); empty when it could not be tried (not root).
    std::string form;
    bool enforcement_possible() const;
};

DoctorReport run_doctor();

std::string format_doctor_text(const DoctorReport& r);
std::string format_doctor_json(const DoctorReport& r);

}  // namespace liveguard
