#include "base/proc.h"

#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <climits>

#include "base/fd.h"

namespace liveguard {

std::optional<std::string> read_small_file(const std::string& path, std::size_t max) {
    return read_small_file_at(AT_FDCWD, path, max);
}

std::optional<std::string> read_small_file_at(int dirfd, const std::string& path, std::size_t max) {
    UniqueFd fd(::openat(dirfd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) return std::nullopt;
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return std::nullopt;
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > max) return std::nullopt;
    }
    return out;
}

std::optional<pid_t> parse_pid(std::string_view text) {
    if (text.empty() || text.size() > 10) return std::nullopt;
    long long v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
    if (text.front() < '0' || text.front() > '9') return std::nullopt;
    if (v <= 0 || v > INT_MAX) return std::nullopt;
    return static_cast<pid_t>(v);
}

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
    auto open = line.find('(');
    auto close = line.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
        return std::nullopt;
    ProcStat st;
    auto pid = parse_pid(line.substr(0, open == 0 ? 0 : open - 1));
    if (!pid) return std::nullopt;
    st.pid = *pid;
    st.comm = std::string(line.substr(open + 1, close - open - 1));
    // Fields after comm, numbered from 3 (state).
    std::vector<std::string_view> fields;
    std::size_t pos = close + 1;
    while (pos < line.size()) {
        while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\n')) ++pos;
        std::size_t end = pos;
        while (end < line.size() && line[end] != ' ' && line[end] != '\n') ++end;
        if (end > pos) fields.push_back(line.substr(pos, end - pos));
        pos = end;
    }
    // state=3, ppid=4, starttime=22 -> indexes 0, 1, 19.
    if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
    st.state = fields[0][0];
    long long ppid = 0;
    auto r1 = std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), ppid);
    unsigned long long start = 0;
    auto r2 = std::from_chars(fields[19].data(), fields[19].data() + fields[19].size(), start);
    if (r1.ec != std::errc() || r2.ec != std::errc()) return std::nullopt;
    st.ppid = static_cast<pid_t>(ppid);
    st.start_ticks = start;
    return st;
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
    auto text = read_small_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!text) return std::nullopt;
    return parse_proc_stat(*text);
}

std::optional<pid_t> read_tgid(pid_t tid) {
    auto text = read_small_file("/proc/" + std::to_string(tid) + "/status", 64 * 1024);
    if (!text) return std::nullopt;
    auto at = text->find("\nTgid:");
    if (at == std::string::npos) return std::nullopt;
    at += 6;
    while (at < text->size() && ((*text)[at] == '\t' || (*text)[at] == ' ')) ++at;
    auto end = text->find('\n', at);
    return parse_pid(std::string_view(*text).substr(at, end - at));
}

std::vector<pid_t> list_pids() {
    std::vector<pid_t> pids;
    DIR* d = ::opendir("/proc");
    if (!d) return pids;
    while (auto* ent = ::readdir(d)) {
        if (auto pid = parse_pid(ent->d_name)) pids.push_back(*pid);
    }
    ::closedir(d);
    return pids;
}

std::optional<std::string> read_untrusted_file(const std::string& path, std::size_t max) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    std::optional<std::string> out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        std::string data;
        char buf[65536];
        ssize_t n;
        while (data.size() < max && (n = ::read(fd, buf, sizeof buf)) > 0)
            data.append(buf, static_cast<std::size_t>(n));
        if (data.size() > max) data.resize(max);
        out = std::move(data);
    }
    ::close(fd);
    return out;
}

void remove_untrusted_dir(const std::string& path) {
    int dfd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return;
    if (DIR* d = ::fdopendir(dfd)) {
        while (struct dirent* e = ::readdir(d)) {
            std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            // unlinkat never follows a link; a directory placed here is left
            // (rmdir below then fails and the directory stays).
            ::unlinkat(dfd, name.c_str(), 0);
        }
        ::closedir(d);
    } else {
        ::close(dfd);
    }
    ::rmdir(path.c_str());
}

}  // namespace liveguard
