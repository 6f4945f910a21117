// `run` without root: the broker's session, the command in it, its summary.
#include "sessions/brokered_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "base/install_paths.h"
#include "base/paths.h"
#include "events/event_journal.h"
#include "events/journal_record.h"
#include "kernel/pins.h"
#include "sessions/run_protocol.h"
#include "sessions/child_signals.h"
#include "sessions/session_summary.h"
#include "watcher/watcher_state.h"

namespace liveguard {
namespace {

// Connecting and sending (SO_SNDTIMEO; a full backlog blocks connect).
constexpr int kConnectTimeoutS = 5;
// The broker answers between other work of the watcher's loop.
constexpr int kReplyTimeoutS = 10;
// The watcher journals the session's end once its root (the command) exits.
constexpr auto kSessionEndWait = std::chrono::seconds(5);
constexpr auto kSessionEndPoll = std::chrono::milliseconds(50);

UniqueFd connect_run_socket(int* err) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) {
        *err = errno;
        return fd;
    }
    struct timeval send_tv {kConnectTimeoutS, 0}, recv_tv {kReplyTimeoutS, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &send_tv, sizeof send_tv);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &recv_tv, sizeof recv_tv);
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, paths::kRunSocket, sizeof addr.sun_path - 1);
    if (::connect(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
        *err = errno;
        fd.reset();
    }
    return fd;
}

bool send_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// One line (without its newline); nothing on EOF, error or timeout (errno
// says which; 0 for EOF or a line too long).
std::optional<std::string> recv_line(int fd) {
    std::string got;
    char buf[512];
    for (;;) {
        if (auto nl = got.find('\n'); nl != std::string::npos) return got.substr(0, nl);
        if (got.size() > kRunMessageMax) {
            errno = 0;
            return std::nullopt;
        }
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) {
            errno = 0;
            return std::nullopt;
        }
        got.append(buf, static_cast<std::size_t>(n));
    }
}

// Prepends `value` to a list variable unless it is in it already.
void prepend_env(const char* name, const std::string& value, char sep) {
    const char* old = ::getenv(name);
    if (!old || !*old) {
        ::setenv(name, value.c_str(), 1);
        return;
    }
    std::string list = std::string(1, sep) + old + sep;
    if (list.find(sep + value + sep) != std::string::npos) return;
    ::setenv(name, (value + sep + old).c_str(), 1);
}


// The session's end as the watcher journals it, once it does.
std::optional<JournalSessionEnd> wait_for_session_end(JournalReader& journal, std::uint64_t id) {
    auto deadline = std::chrono::steady_clock::now() + kSessionEndWait;
    for (;;) {
        if (auto end = find_session_end(journal.read_new(), id)) return end;
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(kSessionEndPoll);
    }
}

std::string session_word(std::uint64_t id, const std::string& name) {
    return "session " + name + " (" + std::to_string(id) + ")";
}

}  // namespace

std::optional<JournalSessionEnd> find_session_end(const std::vector<std::string>& journal_lines,
                                                  std::uint64_t id) {
    for (const auto& line : journal_lines) {
        auto rec = parse_journal_record(line);
        if (!rec) continue;
        if (auto* end = std::get_if<JournalSessionEnd>(&rec->body); end && end->session_cgroup_id == id)
            return *end;
    }
    return std::nullopt;
}

void set_session_env(const std::string& plugin_dir, const std::string& test_log_dir,
                     const std::string& label) {
    // plugin_dir holds the plugin's dist-info too, so pytest loads it by its
    // entry point, once, as `liveguard`, whether or not it is installed in
    // site-packages as well; `-p no:liveguard` turns it off. Naming the
    // module in PYTEST_PLUGINS would register it a second time under its
    // module name whenever the entry point has loaded it, which pytest
    // refuses, ending the run before the first test.
    prepend_env("PYTHONPATH", plugin_dir, ':');
    // Entry points switched off: pytest still loads one named with -p.
    const char* no_autoload = ::getenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD");
    if (no_autoload && *no_autoload) prepend_env("PYTEST_ADDOPTS", "-p liveguard", ' ');
    if (!test_log_dir.empty()) ::setenv("LIVEGUARD_TEST_LOG_DIR", test_log_dir.c_str(), 1);
    if (!label.empty()) ::setenv("LIVEGUARD_SESSION", label.c_str(), 1);
}

Error no_broker_error(int connect_errno, bool guard_absent, std::optional<pid_t> watcher_pid) {
    const std::string as_root = "; or run it as root: sudo liveguard-bpf run --user \"$USER\" -- CMD";
    if (guard_absent)
        return Error("cannot start a session: liveguard is not loaded",
                     "load it with its policy: sudo systemctl start liveguard-bpf, or sudo "
                     "liveguard-bpf load --config POLICY");
    std::string where = errno_message(paths::kRunSocket, connect_errno);
    if (watcher_pid)
        return Error("cannot start a session: the policy watcher (pid " + std::to_string(*watcher_pid) +
                         ") does not answer on its socket (" + where + ")",
                     "restart it: sudo systemctl restart liveguard-bpf, or sudo liveguard-bpf unload "
                     "and sudo liveguard-bpf load --config POLICY" + as_root);
    return Error("cannot start a session: no policy watcher is running (" + where + ")",
                 "start it: sudo systemctl start liveguard-bpf, or sudo liveguard-bpf load --config "
                 "POLICY" + as_root);
}

int run_brokered_session(const RunOptions& opts) {
    if (opts.argv.empty()) throw Error("no command given", "usage: liveguard-bpf run -- CMD [ARGS...]", 2);
    if (opts.user)
        throw Error("`run --user` needs root: only root may run a command as another user",
                    "run it with sudo: sudo liveguard-bpf run --user " + *opts.user +
                        " -- CMD; or leave out --user to run CMD as yourself",
                    2);
    if (opts.parent)
        throw Error("a session in a cgroup of its own (under " + *opts.parent + ") needs root",
                    "run it with sudo: sudo liveguard-bpf run --user \"$USER\" -- CMD", 2);
    std::string name = opts.name.value_or(default_session_name(opts.argv.front()));
    if (auto why = validate_session_name(name))
        throw Error("--name: " + *why, "give a name of 1 to " + std::to_string(kSessionNameMax) +
                                           " printable ASCII characters", 2);
    std::string plugin = plugin_dir();

    // No watcher, no session: say so before anything runs.
    {
        int err = 0;
        if (!connect_run_socket(&err)) {
            struct stat st {};
            bool absent = ::stat(pins::kDir, &st) != 0 && errno == ENOENT;
            throw no_broker_error(err, absent, read_running_watcher_pid());
        }
    }
    // The session's end is journalled after this point.
    JournalReader journal(false);
    int journal_errno = 0;
    if (UniqueFd probe(::open(paths::kJournal, O_RDONLY | O_CLOEXEC)); !probe && errno != ENOENT)
        journal_errno = errno;

    std::vector<char*> argv;
    for (const auto& a : opts.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    // The child reports a failure before exec through `err` ("what\nhint"),
    // and its session through `info` ("<id> <joined>\n"); exec closes both.
    int errpipe[2], infopipe[2];
    if (::pipe2(errpipe, O_CLOEXEC) != 0) throw_errno("cannot create a pipe", errno);
    UniqueFd err_read(errpipe[0]), err_write(errpipe[1]);
    if (::pipe2(infopipe, O_CLOEXEC) != 0) throw_errno("cannot create a pipe", errno);
    UniqueFd info_read(infopipe[0]), info_write(infopipe[1]);

    pid_t child = ::fork();
    if (child < 0) throw_errno("cannot fork", errno);
    if (child == 0) {
        auto fail = [&](const std::string& what, const std::string& hint) {
            std::string msg = what + "\n" + hint;
            (void)!::write(err_write.get(), msg.data(), msg.size());
            ::_exit(127);
        };
        const std::string log_hint = std::string("nothing of the command ran; the watcher's log (") +
                                     paths::kWatcherLog + ") says more";
        // This process asks to become the session's root, then becomes
        // the command: nothing of it runs before it is a member.
        int e = 0;
        UniqueFd sock = connect_run_socket(&e);
        if (!sock)
            fail(errno_message(std::string("cannot reach the policy watcher at ") + paths::kRunSocket, e),
                 log_hint);
        if (!send_all(sock.get(), format_run_request(RunRequest{name}) + "\n"))
            fail(errno_message("cannot send the policy watcher the request", errno), log_hint);
        auto line = recv_line(sock.get());
        if (!line) {
            e = errno;
            fail(e == EAGAIN || e == EWOULDBLOCK
                     ? "the policy watcher did not answer within " + std::to_string(kReplyTimeoutS) + " s"
                     : e ? errno_message("the policy watcher did not answer", e)
                         : std::string("the policy watcher closed the connection without an answer"),
                 log_hint);
        }
        auto reply = parse_run_reply(*line);
        if (!reply) fail("the policy watcher's answer is not understood: " + line->substr(0, 200), log_hint);
        if (!reply->ok) fail("the policy watcher did not start a session: " + reply->error, log_hint);
        sock.reset();
        set_session_env(plugin, reply->test_log_dir, reply->joined ? std::string() : name);
        std::string info = std::to_string(reply->session) + (reply->joined ? " 1\n" : " 0\n");
        (void)!::write(info_write.get(), info.data(), info.size());
        ::execvp(argv[0], argv.data());
        fail(errno_message(std::string("cannot run ") + argv[0], errno),
             "check the command (nothing ran; the session made for it ends by itself)");
    }
    err_write.reset();
    info_write.reset();
    std::optional<ChildSignals> signals(std::in_place, child);

    std::string failure;
    char buf[1024];
    for (;;) {
        ssize_t n = ::read(err_read.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        failure.append(buf, static_cast<std::size_t>(n));
    }
    std::string info;
    for (;;) {
        ssize_t n = ::read(info_read.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        info.append(buf, static_cast<std::size_t>(n));
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    signals.reset();
    if (!failure.empty()) {
        auto nl = failure.find('\n');
        throw Error(failure.substr(0, nl), nl == std::string::npos ? "" : failure.substr(nl + 1), 127);
    }
    int rc = shell_status(status);

    std::uint64_t id = std::strtoull(info.c_str(), nullptr, 10);
    bool joined = info.find(" 1") != std::string::npos;
    if (id == 0) {
        // Killed while it waited for the watcher, before anything ran.
        std::fprintf(stderr, "liveguard-bpf: %s did not start (%s before its session was made)\n",
                     opts.argv.front().c_str(),
                     WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "ended");
        return rc;
    }
    if (joined) {
        std::fprintf(stderr,
                     "liveguard-bpf: note: %s ran in session %llu, which run already was a member "
                     "of; that session's summary comes when it ends%s\n",
                     opts.argv.front().c_str(), static_cast<unsigned long long>(id),
                     opts.fail_on_violation ? " (so --fail-on-violation was not checked)" : "");
        return rc;
    }
    if (journal_errno) {
        std::fprintf(stderr,
                     "liveguard-bpf: warning: no summary of %s: cannot read the event journal (%s)%s; "
                     "`sudo liveguard-bpf events --since 1h --session %s` shows what it was refused\n",
                     session_word(id, name).c_str(), errno_message(paths::kJournal, journal_errno).c_str(),
                     opts.fail_on_violation ? ", so --fail-on-violation was not checked" : "", name.c_str());
        return rc;
    }
    auto end = wait_for_session_end(journal, id);
    if (!end) {
        std::fprintf(stderr,
                     "liveguard-bpf: warning: no summary: the policy watcher did not record the end of "
                     "%s within %lld s%s; `sudo liveguard-bpf events --since 1h --session %s` shows "
                     "what it was refused\n",
                     session_word(id, name).c_str(),
                     static_cast<long long>(kSessionEndWait.count()),
                     opts.fail_on_violation ? " (--fail-on-violation was not checked)" : "", name.c_str());
        return rc;
    }
    print_session_end(*end);
    if (opts.fail_on_violation && end->refusals > 0 && rc == 0) return 3;
    return rc;
}

}  // namespace liveguard
