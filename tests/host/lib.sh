# Sourced by the host tests: their check lines and counts, a probe of the
# pytest plugin, and what a guard needs mounted on a machine that may be a
# bare container.
passed=0 failed=0 mounted=()
ok() { echo "[ OK ] $*"; passed=$((passed + 1)); }
bad() { echo "[FAIL] $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# Writes $1/test_plugin.py, a pytest test that passes when pytest has
# registered the liveguard plugin under exactly the names in $LG_EXPECT
# (empty: not loaded): a second registration, or none, shows.
write_plugin_probe() {
    cat >"$1/test_plugin.py" <<'EOF'
import os


def test_plugin(request):
    names = sorted(n for n, p in request.config.pluginmanager.list_name_plugin()
                   if getattr(p, "__name__", "") == "liveguard_pytest")
    assert names == os.environ["LG_EXPECT"].split(), names
EOF
}

# bpffs and cgroup v2, where a systemd host has them; what this mounts is
# in `mounted`, for unmount_ours.
mount_bpffs_and_cgroup2() {
    if ! grep -q ' /sys/fs/bpf bpf ' /proc/self/mountinfo && ! grep -q ' - bpf ' <(awk '$5=="/sys/fs/bpf"' /proc/self/mountinfo); then
        mount -t bpf bpf /sys/fs/bpf && mounted+=(/sys/fs/bpf)
    fi
    if ! grep -q ' - cgroup2 ' /proc/self/mountinfo; then
        mkdir -p /sys/fs/cgroup/unified
        mount -t cgroup2 none /sys/fs/cgroup/unified && mounted+=(/sys/fs/cgroup/unified)
    fi
}
unmount_ours() {
    local m
    for m in "${mounted[@]}"; do umount "$m" 2>/dev/null; done
}
