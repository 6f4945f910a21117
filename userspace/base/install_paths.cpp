// Finding what ships with the binary, from where the binary is.
#include "base/install_paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "base/error.h"

namespace liveguard {
namespace {

constexpr const char* kPluginFile = "liveguard_pytest.py";

bool holds_plugin(const std::filesystem::path& dir) {
    std::error_code ec;
    return std::filesystem::is_regular_file(dir / kPluginFile, ec);
}

}  // namespace

std::string plugin_dir() {
    if (const char* env = std::getenv("LIVEGUARD_PLUGIN_DIR"); env && *env) return env;
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot find the pytest plugin: /proc/self/exe: " + ec.message(),
                        "set LIVEGUARD_PLUGIN_DIR to the directory that holds " + std::string(kPluginFile));
    std::filesystem::path dir = exe.parent_path();
    std::filesystem::path build = dir / "python";
    if (holds_plugin(build)) return build.string();
    std::filesystem::path installed = (dir / ".." / "lib" / "liveguard-bpf" / "python").lexically_normal();
    if (holds_plugin(installed)) return installed.string();
    throw Error("the pytest plugin " + std::string(kPluginFile) + " is in neither " + build.string() + " nor " +
                    installed.string(),
                "reinstall liveguard-bpf (or `make` in its tree), or set LIVEGUARD_PLUGIN_DIR to the "
                "directory that holds " + std::string(kPluginFile));
}

}  // namespace liveguard
