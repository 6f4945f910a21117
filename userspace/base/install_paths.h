#pragma once
// Where the files that ship with the binary are: next to it in the build
// tree, under <prefix>/lib/liveguard-bpf once installed.
#include <string>

namespace liveguard {

// The directory holding the pytest plugin (liveguard_pytest.py and its
// dist-info), for PYTHONPATH: $LIVEGUARD_PLUGIN_DIR when set; else
// <dir of the binary>/python when it holds the plugin (the build tree);
// else <dir of the binary>/../lib/liveguard-bpf/python (installed);
// else the copy built into the binary, written out (write_embedded_plugin)
// under /run/liveguard for root, under $XDG_RUNTIME_DIR or /tmp in a
// directory of the user's own otherwise: the static binary runs sessions
// with nothing of it installed. Throws Error when that cannot be written.
std::string plugin_dir();

// Writes the plugin's files built into the binary below `dir`, creating
// it (mode 0700 when new, 0755 for root); each file replaced whole, so a pytest starting
// meanwhile reads an old copy or the new one. Throws Error with the cause.
void write_embedded_plugin(const std::string& dir);

}  // namespace liveguard
