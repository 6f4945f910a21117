// `status`: the status report, as text or JSON.
#include <cstdio>

#include "base/privileges.h"
#include "cli/commands.h"
#include "cli/status_report.h"

namespace liveguard {

int run_command(const StatusOptions& o) {
    require_root("status");
    StatusReport r = gather_status();
    std::fputs((o.json ? format_status_json(r) + "\n" : format_status_text(r)).c_str(), stdout);
    return 0;
}

}  // namespace liveguard
