#pragma once
// What the watcher tells the service manager that started it (systemd,
// through libsystemd's sd_notify): ready once the programs are attached and
// the policy applied, reloading and ready again around a policy re-read,
// alive at the watchdog's pace, and a one-line status. Outside systemd
// (no NOTIFY_SOCKET: s6, a shell, `load` without --foreground) every call
// does nothing. The static binary is built without libsystemd
// (LG_STATIC): it never notifies, and its unit is Type=forking instead.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace liveguard {

// `text` as one STATUS= line: control characters (a newline would start
// another assignment) as spaces, at most `max` bytes, cut between
// characters.
std::string status_line(std::string_view text, std::size_t max = 200);

class ServiceManager {
public:
    // Reads the environment systemd set for this process (NOTIFY_SOCKET,
    // WATCHDOG_USEC, WATCHDOG_PID).
    ServiceManager();

    // Whether a manager listens for notifications at all.
    bool notifying() const { return notify_; }

    void ready(const std::string& status);
    void reloading();
    void status(const std::string& status);
    // Nothing when no watchdog is set for this process.
    std::optional<std::chrono::milliseconds> watchdog_interval() const { return watchdog_; }
    // A WATCHDOG=1 ping when one is due (half the watchdog's timeout since
    // the last): the loop calls it on every turn, and the time left until
    // the next is due bounds how long it may sleep (-1: no bound).
    int ping_if_due();
    // Told before the watcher exits, so a stop is not taken for a crash.
    void stopping();

private:
    void send(const std::string& state);

    bool notify_ = false;
    std::optional<std::chrono::milliseconds> watchdog_;
    std::chrono::steady_clock::time_point next_ping_{};
};

}  // namespace liveguard
