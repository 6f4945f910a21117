#include "service/metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "base/error.h"
#include "base/fd.h"
#include "events/event_format.h"
#include "kernel/loader.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"
#include "kernel/skipped_runs.h"

namespace liveguard {
namespace {

// A family's header: what it counts, and its type.
void family(std::string& out, const std::string& name, const char* type, const char* help) {
    out += "# HELP " + name + " " + help + "\n";
    out += "# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, std::uint64_t value) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += " " + std::to_string(value) + "\n";
}

std::string label(const char* key, std::string_view value) {
    return std::string(key) + "=\"" + metrics_label_value(value) + "\"";
}

struct Problem {
    std::uint32_t counter;
    const char* what;
};

// The kernel's counts of what it could not record or enforce as asked,
// labelled by what: each is a reason to look at `status`.
constexpr Problem kProblems[] = {
    {LG_COUNTER_INHERIT_FAILED, "inherit_failed"},
    {LG_COUNTER_MEMBER_MARK_FAILED, "member_mark_failed"},
    {LG_COUNTER_ARGV_MISSING, "argv_missing"},
    {LG_COUNTER_SESSION_OVERFLOW, "session_overflow"},
    {LG_COUNTER_SESSION_MARK_FAILED, "session_mark_failed"},
    {LG_COUNTER_FOWNERS_FULL, "fowners_full"},
    {LG_COUNTER_PROTECTED_PIDS_FULL, "protected_pids_full"},
};

}  // namespace

std::string metrics_label_value(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

MetricsSnapshot gather_metrics(bool watcher_running) {
    MetricsSnapshot m;
    m.watcher_running = watcher_running;
    if (!Guard::is_loaded()) return m;
    m.loaded = true;
    m.attach = Guard::loaded_attach().value_or(Attach::Lsm);
    PinnedMaps maps = PinnedMaps::open(/*read_only=*/true);
    m.counters = read_counters(maps.counters.get());
    m.skipped = skipped_runs();
    m.protected_processes = ProtectedSet(maps.protected_tasks.get()).list().size();
    m.protected_cgroups = ProtectedCgroups(maps).list().size();
    for (const auto& s : SessionRegistry(maps.sessions.get(), maps.settings.get()).list()) {
        const char* kind = !s.is_process_session()           ? "cgroup"
                           : s.id == LG_SESSION_OVERFLOW     ? "overflow"
                           : (s.info.flags & LG_SESSION_RUN) ? "run"
                                                             : "auto";
        ++m.sessions[kind];
    }
    return m;
}

std::string format_metrics(const MetricsSnapshot& m) {
    std::string out;
    family(out, "liveguard_loaded", "gauge", "Whether the guard is loaded (1), by the form it is attached in.");
    for (Attach a : {Attach::Lsm, Attach::FmodRet, Attach::AuditOnly})
        sample(out, "liveguard_loaded", label("attach", attach_name(a)), m.loaded && m.attach == a ? 1 : 0);
    family(out, "liveguard_watcher_up", "gauge", "Whether the policy watcher is running.");
    sample(out, "liveguard_watcher_up", "", m.watcher_running ? 1 : 0);
    if (!m.loaded) return out;
    std::string attach = label("attach", attach_name(m.attach));

    family(out, "liveguard_refusals_total", "counter",
           "Acts of test session members refused (seen, in the audit-only form), per door, since the guard was "
           "loaded.");
    for (std::uint32_t h = 0; h < LG_HOOK_COUNT; ++h)
        sample(out, "liveguard_refusals_total", label("door", hook_name(h)) + "," + attach,
               m.counters[LG_COUNTER_DENIED + h]);
    family(out, "liveguard_events_lost_total", "counter",
           "Events the kernel had no room for in its ring buffer (their refusals still happened).");
    sample(out, "liveguard_events_lost_total", "", m.counters[LG_COUNTER_EVENTS_LOST]);
    family(out, "liveguard_kernel_problems_total", "counter",
           "What the kernel could not record as asked (a full map, an unreadable argv), per kind; see "
           "liveguard-bpf status.");
    for (const auto& p : kProblems)
        sample(out, "liveguard_kernel_problems_total", label("problem", p.what), m.counters[p.counter]);
    family(out, "liveguard_skipped_runs_total", "counter",
           "Runs of a program the kernel skipped (recursion), per program.");
    for (const auto& [prog, n] : m.skipped) sample(out, "liveguard_skipped_runs_total", label("program", prog), n);
    family(out, "liveguard_protected_processes", "gauge", "Processes protected now.");
    sample(out, "liveguard_protected_processes", "", m.protected_processes);
    family(out, "liveguard_protected_cgroups", "gauge", "Cgroups protected now.");
    sample(out, "liveguard_protected_cgroups", "", m.protected_cgroups);
    family(out, "liveguard_sessions", "gauge", "Test sessions now, per kind.");
    for (const char* kind : {"cgroup", "auto", "run", "overflow"}) {
        auto it = m.sessions.find(kind);
        sample(out, "liveguard_sessions", label("kind", kind), it == m.sessions.end() ? 0 : it->second);
    }
    return out;
}

std::string metrics_textfile_path(const std::string& dir) { return dir + "/liveguard.prom"; }

bool write_metrics_textfile(const std::string& dir, const std::string& text) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    std::string path = metrics_textfile_path(dir);
    std::string tmp = path + ".tmp";
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) throw_errno("cannot write " + tmp, errno);
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            ::unlink(tmp.c_str());
            throw_errno("cannot write " + tmp, e);
        }
        done += static_cast<std::size_t>(n);
    }
    fd.reset();
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        int e = errno;
        ::unlink(tmp.c_str());
        throw_errno("cannot rename " + tmp + " to " + path, e);
    }
    return true;
}

}  // namespace liveguard
