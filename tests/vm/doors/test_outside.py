"""The same acts from outside any session: liveguard must not get in the way
(tests/vm/doors/run runs this file without a session).

Destructive acts use disposable processes this file starts and protects
with `liveguard-bpf protect --pid`, so they prove that protection does not
reach outsiders without touching the gateway; the gateway itself is only
restarted through s6, read, or sent SIGURG (which it counts).
"""
import contextlib
import errno
import fcntl
import itertools
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

import doorlib as D
from doorlib import CFG, SCAN, SLOT, assert_kept, describe, exec_refused, run, via

_counter = itertools.count(1)


@pytest.fixture(autouse=True)
def _must_be_outside():
    if D.in_session():
        pytest.fail(f"this file must run outside any session (cgroup {D.cgroup_of()})", pytrace=False)


@contextlib.contextmanager
def disposable(cgroup=None):
    """A sleeping process started here and protected, optionally moved into
    cgroup after it was protected (so that cgroup holds a protected process).
    Yields (Popen, unique command-line pattern)."""
    # A unique duration marks the command line for pkill -f.
    secs = f"{700000 + os.getpid() % 1000 * 100 + next(_counter)}.5"
    p = subprocess.Popen(["sleep", secs], stdin=subprocess.DEVNULL)
    try:
        r = D.lg("protect", "--pid", str(p.pid))
        assert r.returncode == 0, r.stdout + r.stderr
        assert D.wait_until(lambda: D.listed_protected(p.pid, D.status_json(live=True)), 10), \
            f"disposable {p.pid} never listed protected"
        if cgroup:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(p.pid))
        yield p, f"sleep {secs}"
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(10)


def test_outside_kill_protected_process():
    with disposable() as (p, _):
        os.kill(p.pid, signal.SIGTERM)
        assert p.wait(10) == -signal.SIGTERM


@pytest.mark.full_only
def test_outside_pkill_protected_process():
    with disposable() as (p, pattern):
        r = run(["pkill", "-f", pattern])
        assert r.returncode == 0, r.stderr
        assert p.wait(10) == -signal.SIGTERM


def test_outside_ptrace_protected_process():
    with disposable() as (p, _):
        D.ptrace_attach(p.pid)
        D.ptrace_attach(p.pid, seize=True)
        assert p.poll() is None


def test_outside_proc_mem_of_protected_process():
    with disposable() as (p, _):
        fd = os.open(f"/proc/{p.pid}/mem", os.O_RDWR)
        os.close(fd)


@pytest.mark.full_only
def test_outside_limits_of_protected_process():
    import resource
    with disposable() as (p, _):
        resource.prlimit(p.pid, resource.RLIMIT_NOFILE, (64, 64))
        os.setpriority(os.PRIO_PROCESS, p.pid, 19)
        os.sched_setscheduler(p.pid, os.SCHED_IDLE, os.sched_param(0))
        assert os.getpriority(os.PRIO_PROCESS, p.pid) == 19


@pytest.mark.full_only
def test_outside_cgroup_kill_of_protected_cgroup():
    cg = os.path.join(CFG["cgroup_mount"], f"doors-outside-{os.getpid()}")
    os.mkdir(cg)
    try:
        with disposable(cgroup=cg) as (p, _):
            assert D.cgroup_of(p.pid) == cg
            with open(os.path.join(cg, "cgroup.kill"), "w") as f:
                f.write("1")
            assert p.wait(10) == -signal.SIGKILL
    finally:
        D.wait_until(lambda: not open(os.path.join(cg, "cgroup.procs")).read().strip(), 5)
        os.rmdir(cg)


def test_outside_gateway_cgroup_files_writable(gateway):
    with open(os.path.join(gateway.cgroup, "cgroup.freeze"), "w") as f:
        f.write("0")
    fd = os.open(os.path.join(gateway.cgroup, "cgroup.kill"), os.O_WRONLY)
    os.close(fd)
    assert_kept(gateway)


def test_outside_sigio_to_protected_process():
    with disposable() as (p, _):
        a, b = socket.socketpair()
        try:
            fcntl.fcntl(a, fcntl.F_SETOWN, p.pid)
            fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
            b.send(b"x")
            assert p.wait(10) == -signal.SIGIO
        finally:
            a.close()
            b.close()


def test_outside_sigurg_reaches_gateway(gateway):
    """The positive control of the in-session SIGURG test: from outside, the
    gateway does receive (and count) it."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname())
    s, _ = srv.accept()
    try:
        before = D.sigurg_count(gateway.pid)
        fcntl.fcntl(s, fcntl.F_SETOWN, gateway.pid)
        c.send(b"!", socket.MSG_OOB)
        assert D.wait_until(lambda: D.sigurg_count(gateway.pid) > before, 5), "no SIGURG arrived"
        assert_kept(gateway)
    finally:
        for x in (s, c, srv):
            x.close()


def test_outside_oom_score_adj(gateway):
    path = f"/proc/{gateway.pid}/oom_score_adj"
    with open(path) as f:
        old = int(f.read())
    new = old + 1 if old < 1000 else old - 1
    try:
        with open(path, "w") as f:
            f.write(str(new))
        with open(path) as f:
            assert int(f.read()) == new
    finally:
        with open(path, "w") as f:
            f.write(str(old))
    assert_kept(gateway, settle=0)


@pytest.mark.parametrize("path", [
    os.path.join(SLOT, "supervise", "control"),
    os.path.join(SCAN, ".s6-svscan", "control"),
])
def test_outside_open_control_fifo(path):
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    os.close(fd)


def test_outside_mapped_file_opens_for_writing():
    for which in ("mapped_db", "mapped_plugin"):
        os.close(os.open(CFG[which], os.O_WRONLY))


def test_outside_mapped_file_shared_writable_mapping():
    fd = os.open(CFG["mapped_db"], os.O_RDWR)
    try:
        D.map_shared(fd, 4096, writable=True)
        D.map_shared(fd, 4096, writable=False, then_writable=True)
    finally:
        os.close(fd)


def test_outside_lock_on_file_protected_process_holds_open():
    fd = os.open(CFG["held_lock"], os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def test_outside_service_bus_manager_calls():
    for path in CFG["bus_sockets"]:
        s = D.bus_connect(path)
        try:
            s.sendall(D.transient_unit_call())
            s.sendall(D.transient_unit_call()[:20])
            s.sendall(D.transient_unit_call()[20:])
        finally:
            s.close()


@pytest.mark.parametrize("path", CFG["sockets"] + CFG["bus_sockets"])
def test_outside_connect_service_socket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    finally:
        s.close()


@pytest.mark.parametrize("argv", [
    ["systemctl", "restart", "hermes-gateway"],
    ["sh", "-c", "systemctl --user stop hermes-gateway.service"],
], ids=" ".join)
def test_outside_systemctl_not_refused(gateway, argv):
    res = via("subprocess.run", argv)
    assert not isinstance(res, OSError), describe(res)
    assert not exec_refused(res), describe(res)
    assert res.rc not in (126, 2) or "Operation not permitted" not in res.out, describe(res)
    assert_kept(gateway, settle=0)


def test_outside_s6_svscanctl():
    r = run(["s6-svscanctl", "-an", SCAN])
    assert r.returncode == 0, r.stderr


def test_outside_lg_status_and_links():
    r = D.lg("status", "--json")
    assert r.returncode == 0, r.stderr
    r = run(["bpftool", "link", "show", "pinned", os.path.join(D.PIN_DIR, "link_lg_task_kill")])
    assert r.returncode == 0, r.stderr


@pytest.mark.full_only
def test_outside_s6_svc_restarts_gateway(gateway):
    r = run(["s6-svc", "-t", SLOT])
    assert r.returncode == 0, r.stderr
    assert D.wait_until(lambda: D.s6_pid() not in (None, gateway.pid), 15), "the gateway did not restart"
    new, why = D.wait_gateway(timeout=20)
    assert new and new.pid != gateway.pid, why


# --- what members may not do, done outside any session ------------------------

def test_outside_clone3_into_cgroup():
    D.clone3_into(CFG["elsewhere_cg"])


def test_outside_fork_past_session_limit():
    """The sessions' task limit is no limit of the machine's."""
    forked, err = D.fork_storm()
    assert (forked, err) == (D.STORM_TASKS, 0), f"{forked} forked, then {os.strerror(err) if err else 'stopped'}"


def test_outside_oom_score_is_its_own():
    """Outside a session a process is not ranked, and writes its own OOM
    score as the kernel lets it."""
    with open("/proc/self/oom_score_adj") as f:
        assert f.read().strip() != "1000", "a process outside every session was ranked first for the OOM killer"
    r = D.run([sys.executable, "-c", "open('/proc/self/oom_score_adj', 'w').write('500');"
               "print(open('/proc/self/oom_score_adj').read().strip())"])
    assert r.returncode == 0 and r.stdout.strip() == "500", D.describe(r)


def test_outside_mount_and_umount(tmp_path):
    D.mount("doors", str(tmp_path), "tmpfs")
    D.umount2(str(tmp_path))


def test_outside_open_sysctl_for_writing():
    fd = os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY)
    os.close(fd)


def test_outside_bpf_prog_load():
    os.close(D.bpf_prog_load_trivial())


def test_outside_realtime_own_process():
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def test_outside_fanotify_permission_mark(tmp_path):
    f = tmp_path / "marked"
    f.write_text("x")
    D.fanotify_open_perm_mark(str(f))


def test_outside_perf_event_sigtrap_on_own_child():
    p = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL)
    try:
        os.close(D.perf_event_open_sigtrap(p.pid))
    finally:
        p.kill()
        p.wait(10)


def test_reload_ignores_a_rewritten_watcher_pid_file():
    """A test suite running as root could rewrite watcher.pid to name a
    service; reload finds the watcher by its socket, never by that file."""
    path = CFG["watcher_pidfile"]
    victim = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
    with open(path) as f:
        original = f.read()
    try:
        with open(path, "w") as f:
            f.write(f"{victim.pid} 0\n")
        r = D.lg("reload")
        assert r.returncode == 0, describe(r)
        try:
            victim.wait(1)
        except subprocess.TimeoutExpired:
            pass
        assert victim.poll() is None, f"reload signalled the pid in {path}: {victim.returncode}"
    finally:
        with open(path, "w") as f:
            f.write(original)
        victim.kill()
        victim.wait(10)


# The machine's acts the session is refused, outside any session: the
# kernel does them (each is harmless: see doorlib.machine_acts).
@pytest.mark.parametrize("name", ["reboot CAD_OFF", "kexec_load", "finit_module", "clock_settime", "ioperm",
                                  "/dev/mem", "/dev/port", "sethostname", "setdomainname", "swapon", "swapoff"])
def test_outside_machine_capability(name):
    err = D.machine_acts()[name][1]()
    assert err != errno.EPERM, f"{name} refused outside any session"


@pytest.mark.parametrize("path", ["/sys/power/state", "/sys/kernel/security/lockdown"])
def test_outside_machine_files_open_for_writing(path):
    os.close(os.open(path, os.O_WRONLY))


@pytest.mark.parametrize("how", ["flock", "fcntl", "ofd", "lease"])
def test_outside_lock_protected_file(how):
    err = D.lock_as_nobody(CFG["pidfile"], how)
    assert err == 0, f"{how} on {CFG['pidfile']} outside any session: {os.strerror(err)}"


def test_outside_every_writable_proc_file_of_a_disposable_process():
    p = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    try:
        opened = 0
        for path in D.writable_proc_files(p.pid):
            try:
                os.close(os.open(path, os.O_WRONLY))
                opened += 1
            except PermissionError as e:
                pytest.fail(f"{path}: {e}")
            except OSError:
                pass
        assert opened >= 10, opened
    finally:
        p.kill()
        p.wait(10)


def test_outside_network_change_in_machine_namespace():
    assert D.rtnetlink_set_link_up("lo") == 0


def test_outside_netfilter_request():
    assert D.netfilter_batch_begin() == 0


@pytest.mark.parametrize("name", sorted(D.network_admin_acts()))
def test_outside_network_admin(name):
    assert D.network_admin_acts()[name]() == 0


@pytest.mark.parametrize("name", sorted(set(D.terminal_acts()) - {"TIOCSPGRP"}))
def test_outside_terminal_of_protected_process(name):
    with open(CFG["tty_service_tty"]) as f:
        fd = D.open_terminal(f.read().strip())
    with open(CFG["tty_service"]) as f:
        pid = int(f.read().split()[0])
    try:
        assert D.terminal_acts()[name](fd, pid) == 0
    finally:
        os.close(fd)


def test_outside_at_job_runs(tmp_path):
    ran = f"{CFG['at_ran']}-outside"
    job = tmp_path / "job"
    job.write_text(f"touch {ran}\n")
    r = D.run(["at", "-f", str(job), "now"])
    assert r.returncode == 0, D.describe(r)
    for _ in range(100):
        if os.path.exists(ran):
            break
        time.sleep(0.1)
    assert os.path.exists(ran), "atd did not run the job"
    os.unlink(ran)


def test_outside_handoff_spool_and_fifo():
    path = os.path.join(CFG["handoff_spool"], "crontabs", "lg-outside")
    with open(path, "w") as f:
        f.write("# nothing\n")
    os.unlink(path)
    # No reader: ENXIO from the kernel, not the guard's EPERM.
    with pytest.raises(OSError) as e:
        os.close(os.open(CFG["handoff_fifo"], os.O_WRONLY | os.O_NONBLOCK))
    assert e.value.errno == errno.ENXIO


def test_outside_bind_policy_port():
    assert D.bind_errno(D.POLICY_PORT) == 0
    # The gateway's own port: the kernel's answer, not the guard's.
    assert D.bind_errno(D.GATEWAY_PORT) == errno.EADDRINUSE


def test_outside_process_madvise_protected_process():
    with disposable() as (p, _):
        time.sleep(0.2)
        assert D.process_madvise_pageout(p.pid) == 0
        assert p.poll() is None


@pytest.mark.parametrize("kind", sorted(k for k in D.USER_COUNTS if "marks" not in k))
def test_outside_user_count_reserve_is_for_outsiders(kind):
    """Outside a session, a user takes its counts up to the kernel's limit,
    the reserve included. As nobody, whose counts nothing else here uses
    (root's serve the watcher); fanotify marks, which nobody may place
    only on filesystems with file handles, are left out."""
    limit = D.user_count_limit(kind)
    count, err, release = D.take_user_count(kind, uid=D.NOBODY)
    release()
    assert err == D.USER_COUNTS[kind][1], f"took {count} {kind}, then {os.strerror(err) if err else 'ran out of inodes'}"
    assert count >= limit - limit // 8, f"took only {count} {kind} of {limit}: the reserve reached outside sessions"


@pytest.mark.parametrize("tool", ["tmux", "screen"])
def test_outside_multiplexer_runs_what_it_is_sent(tool):
    marker = f"/run/doors/{tool}-outside-{os.getpid()}-{next(_counter)}"
    r = D.send_to_multiplexer(tool, f"touch {marker}")
    assert r.returncode == 0, describe(r)
    assert D.wait_until(lambda: os.path.exists(marker), 10), f"the {tool} server ran nothing: {describe(r)}"
    os.unlink(marker)


def test_outside_fills_the_reserve_too():
    """Outside a session the reserve is no limit: a writer fills the
    filesystem to the end."""
    st = os.statvfs(CFG["smallfs"])
    size = st.f_blocks * st.f_frsize
    fill = os.path.join(CFG["smallfs"], f"outside-fill-{os.getpid()}")
    try:
        written, err = D.fill_filesystem(fill)
        left = os.statvfs(CFG["smallfs"]).f_bavail * st.f_frsize
    finally:
        os.unlink(fill)
    assert err == errno.ENOSPC, os.strerror(err)
    assert left < size * CFG["smallfs_reserve_percent"] // 100 // 4, f"{left} bytes left of {size}: the reserve held outside"
