#pragma once
// Where the files that ship with the binary are: next to it in the build
// tree, under <prefix>/lib/liveguard-bpf once installed.
#include <string>

namespace liveguard {

// The directory holding the pytest plugin (liveguard_pytest.py and its
// dist-info), for PYTHONPATH: $LIVEGUARD_PLUGIN_DIR when set; else
// <dir of the binary>/python when it holds the plugin (the build tree);
// else <dir of the binary>/../lib/liveguard-bpf/python (installed).
// Throws Error naming both places when neither holds it.
std::string plugin_dir();

}  // namespace liveguard
