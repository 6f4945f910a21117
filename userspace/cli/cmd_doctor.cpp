// `doctor`: the report of what enforcement needs, as text or JSON.
#include <cstdio>

#include "cli/commands.h"
#include "cli/doctor.h"

namespace liveguard {

int run_command(const DoctorOptions& o) {
    DoctorReport r = run_doctor();
    std::fputs((o.json ? format_doctor_json(r) + "\n" : format_doctor_text(r)).c_str(), stdout);
    return r.enforcement_possible() ? 0 : 1;
}

}  // namespace liveguard
