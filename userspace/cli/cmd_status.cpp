// `status`: the status report, as text or JSON; `metrics`: its counters
// for Prometheus.
#include <cstdio>

#include "base/privileges.h"
#include "cli/commands.h"
#include "cli/status_report.h"
#include "service/daemon.h"
#include "service/metrics.h"

namespace liveguard {

int run_command(const StatusOptions& o) {
    require_root("status");
    StatusReport r = gather_status();
    std::fputs((o.json ? format_status_json(r) + "\n" : format_status_text(r)).c_str(), stdout);
    return 0;
}

int run_command(const MetricsOptions&) {
    require_root("metrics");
    std::fputs(format_metrics(gather_metrics(running_watcher().has_value())).c_str(), stdout);
    return 0;
}

}  // namespace liveguard
