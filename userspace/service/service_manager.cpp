#include "service/service_manager.h"

#include <cstdint>
#include <cstdlib>
#include <ctime>

#ifndef LG_STATIC
#include <systemd/sd-daemon.h>
#endif

#include "watcher/log.h"

namespace liveguard {

std::string status_line(std::string_view text, std::size_t max) {
    std::string out;
    for (char c : text) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
    if (out.size() <= max) return out;
    // Cut before a UTF-8 continuation byte's lead, not through a
    // character: systemd drops a STATUS that is not valid UTF-8.
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    return out.substr(0, cut);
}

ServiceManager::ServiceManager() {
#ifndef LG_STATIC
    const char* socket = std::getenv("NOTIFY_SOCKET");
    notify_ = socket != nullptr && *socket != '\0';
    std::uint64_t usec = 0;
    // The environment is kept (unset_environment 0): sd_notify reads it on
    // every call, and the watcher starts no program that could inherit it.
    if (int r = sd_watchdog_enabled(0, &usec); r > 0 && usec > 0)
        watchdog_ = std::chrono::milliseconds(usec / 1000);
    else if (r < 0)
        watcher_log("warning: the watchdog settings systemd passed cannot be read (WATCHDOG_USEC, WATCHDOG_PID); "
                    "running without pinging it");
#else
    if (const char* socket = std::getenv("NOTIFY_SOCKET"); socket && *socket)
        watcher_log("warning: started as a Type=notify service, but this static build has no libsystemd and "
                    "cannot report readiness: use the unit the release tarball's install.sh writes (Type=forking)");
#endif
    next_ping_ = std::chrono::steady_clock::now();
}

void ServiceManager::send(const std::string& state) {
#ifndef LG_STATIC
    if (!notify_) return;
    if (int r = sd_notify(0, state.c_str()); r < 0)
        watcher_log("warning: cannot notify the service manager (" + state.substr(0, state.find('\n')) +
                    "): error " + std::to_string(-r));
#else
    (void)state;
#endif
}

void ServiceManager::ready(const std::string& status) {
    send("READY=1\nSTATUS=" + status_line(status));
}

void ServiceManager::reloading() {
    // MONOTONIC_USEC lets systemd (253 on) match this to the reload it
    // asked for; older ones ignore it.
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long usec = static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL +
                              static_cast<unsigned long long>(ts.tv_nsec) / 1000ULL;
    send("RELOADING=1\nSTATUS=re-reading the policy\nMONOTONIC_USEC=" + std::to_string(usec));
}

void ServiceManager::status(const std::string& status) {
    send("STATUS=" + status_line(status));
}

int ServiceManager::ping_if_due() {
    if (!watchdog_ || !notify_) return -1;
    auto now = std::chrono::steady_clock::now();
    if (now >= next_ping_) {
        send("WATCHDOG=1");
        next_ping_ = now + *watchdog_ / 2;
    }
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next_ping_ - now).count());
}

void ServiceManager::stopping() {
    send("STOPPING=1");
}

}  // namespace liveguard
