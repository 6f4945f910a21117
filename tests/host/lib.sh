# Sourced by the host tests: their check lines and counts, and what a
# guard needs mounted on a machine that may be a bare container.
passed=0 failed=0 mounted=()
ok() { echo "[ OK ] $*"; passed=$((passed + 1)); }
bad() { echo "[FAIL] $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

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
