// The session info files under /run/liveguard/sessions.
#include "events/session_info.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/json.h"
#include "base/json_members.h"
#include "base/paths.h"
#include "base/proc.h"

namespace liveguard {
namespace {

std::string info_path(std::uint64_t id) {
    return std::string(paths::kSessionInfoDir) + "/" + std::to_string(id) + ".json";
}

}  // namespace

void write_session_info(std::uint64_t id, const SessionInfo& info) {
    std::error_code ec;
    std::filesystem::create_directories(paths::kSessionInfoDir, ec);
    std::string path = info_path(id);
    std::ofstream f(path + ".tmp", std::ios::trunc);
    f << json::ObjectWriter()
             .str("name", info.name)
             .str("path", info.path)
             .num("root_pid", info.root_pid)
             .done()
      << "\n";
    f.close();
    std::filesystem::rename(path + ".tmp", path, ec);
}

std::optional<SessionInfo> read_session_info(std::uint64_t id) {
    auto text = read_small_file(info_path(id), 1 << 16);
    if (!text) return std::nullopt;
    auto obj = json::parse(*text);
    if (!obj) return std::nullopt;
    json::Members m(*obj);
    SessionInfo s;
    s.name = m.text("name");
    s.path = m.text("path");
    s.root_pid = m.number<pid_t>("root_pid");
    if (!m.ok()) return std::nullopt;
    return s;
}

void remove_session_info(std::uint64_t id) {
    std::error_code ec;
    std::filesystem::remove(info_path(id), ec);
    // The test log directory may be writable by the session's user.
    remove_untrusted_dir(std::string(paths::kTestLogDir) + "/" + std::to_string(id));
}

}  // namespace liveguard
