"""The doors, from inside a liveguard session (tests/vm/doors/run runs this
file under `liveguard-bpf run`). Every test marked door_<name> proves a
refusal of that door and that the gateway kept its PID; the control run
repeats it with the door's links removed and requires it to fail. Tests
without a door marker are pass-throughs: what a session may still do.

Tests signal only processes they start themselves, the stand-in gateway
(and its s6-supervise, which `pkill -f gateway` names) and, where the brief
asks for it, liveguard's watcher. Destructive tests come last in file order
(tampering with liveguard itself, unmounting bpffs), so a door that lets
one through in the main run harms as few later tests as possible.
"""
import ctypes
import errno
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid

import pytest

import doorlib as D
from doorlib import CFG, LG, PIN_DIR, SCAN, SLOT, assert_kept, describe, exec_refused, run, via

door = {name: getattr(pytest.mark, f"door_{name}") for name in D.DOORS}


@pytest.fixture(autouse=True)
def _must_be_a_member():
    if not D.in_session():
        pytest.fail(f"not inside a liveguard session (cgroup {D.cgroup_of()}); "
                    "run through tests/vm/doors/run", pytrace=False)


def assert_exec_refused(res, what=""):
    assert exec_refused(res), f"{what} was not refused at exec: {describe(res)}"


def assert_not_exec_refused(res, what=""):
    assert not isinstance(res, OSError), f"{what}: exec failed: {describe(res)}"
    assert not exec_refused(res), f"{what} was refused at exec: {describe(res)}"


def open_refused(path, flags):
    """Opens path; True when the open is refused with EPERM. An open that
    works is closed at once without writing anything."""
    try:
        fd = os.open(path, flags)
    except PermissionError:
        return True
    os.close(fd)
    return False


def own_child(*extra):
    """A sleeping child of this test; extra arguments mark its command line."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *extra],
                            stdin=subprocess.DEVNULL)


def wait_exec(p, marker, timeout=10.0):
    """Until the child's command line shows the marker (it has exec'd)."""
    def shown():
        try:
            with open(f"/proc/{p.pid}/cmdline", "rb") as f:
                return marker.encode() in f.read()
        except OSError:
            return False
    assert D.wait_until(shown, timeout), f"child {p.pid} never showed {marker}"


def reap(p):
    if p.poll() is None:
        p.kill()
    p.wait(10)


# =============================================================================
# Pass-throughs: what a session member may still do.
# =============================================================================

@pytest.mark.parametrize("argv", [
    ["systemctl", "status", "hermes-gateway"],
    ["systemctl", "--user", "status", "hermes-gateway.service"],
    ["systemctl", "is-active", "hermes-gateway"],
    ["systemctl", "show", "hermes-gateway.service"],
    ["systemctl", "list-units", "hermes-gateway*"],
    ["systemctl", "restart", "unrelated-unit.service"],
], ids=lambda a: " ".join(a[1:]))
def test_pass_systemctl_readonly_or_unprotected(gateway, argv):
    res = via("subprocess.run", argv)
    assert_not_exec_refused(res, " ".join(argv))
    assert res.rc != 126
    assert_kept(gateway, settle=0)


def test_pass_s6_svstat(gateway):
    r = run(["s6-svstat", SLOT])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("up") and f"pid {gateway.pid}" in r.stdout, r.stdout


def test_pass_s6_svc_unprotected_service():
    other = CFG["other_slot"]
    before = D.wait_until(lambda: D.s6_pid(other), 10)
    assert before, "the unprotected s6 service is not up"
    res = via("subprocess.run", ["s6-svc", "-t", other])
    assert_not_exec_refused(res, "s6-svc -t (unprotected service)")
    assert res.rc == 0, describe(res)
    after = D.wait_until(lambda: (D.s6_pid(other) or before) != before and D.s6_pid(other), 10)
    assert after and after != before, "s6-svc -t did not restart the unprotected service"


def test_pass_open_unprotected_control_fifo():
    fd = os.open(os.path.join(CFG["other_slot"], "supervise", "control"), os.O_WRONLY | os.O_NONBLOCK)
    os.close(fd)


def test_pass_kill_own_child():
    p = own_child()
    try:
        os.kill(p.pid, signal.SIGTERM)
        assert p.wait(10) == -signal.SIGTERM
    finally:
        reap(p)


def test_pass_pkill_own_child_by_unique_pattern():
    marker = f"doors-own-child-{uuid.uuid4().hex}"
    p = own_child(marker)
    try:
        wait_exec(p, marker)
        r = run(["pkill", "-f", marker])
        assert r.returncode == 0, r.stderr
        assert p.wait(10) == -signal.SIGTERM
    finally:
        reap(p)


def test_pass_read_proc_status(gateway):
    with open(f"/proc/{gateway.pid}/status") as f:
        text = f.read()
    assert f"Pid:\t{gateway.pid}\n" in text
    assert "Name:\thermes-gateway" in text


def test_pass_read_oom_score_adj(gateway):
    with open(f"/proc/{gateway.pid}/oom_score_adj") as f:
        int(f.read())


def test_pass_read_supervise_status():
    with open(os.path.join(SLOT, "supervise", "status"), "rb") as f:
        assert len(f.read()) >= 35


def test_pass_signal_zero(gateway):
    os.kill(gateway.pid, 0)
    assert_kept(gateway, settle=0)


def test_pass_own_proc_file():
    """Its own /proc/self files are its to write (its OOM score aside:
    door oom)."""
    with open("/proc/self/comm") as f:
        old = f.read().strip()
    with open("/proc/self/comm", "w") as f:
        f.write(old)


@pytest.fixture
def own_sub_cgroup():
    sess = D.session_cgroup()
    assert sess
    sub = os.path.join(sess, f"doors-sub-{os.getpid()}")
    os.mkdir(sub)
    try:
        yield sub
    finally:
        def empty():
            with open(os.path.join(sub, "cgroup.procs")) as f:
                return not f.read().strip()
        D.wait_until(empty, 5)
        os.rmdir(sub)


def test_pass_own_sub_cgroup_files(own_sub_cgroup):
    """A sub-cgroup the member made inside its session holds no protected
    process: its files are the member's to write."""
    with open(os.path.join(own_sub_cgroup, "cgroup.freeze"), "w") as f:
        f.write("0")
    with open(os.path.join(own_sub_cgroup, "cgroup.max.descendants"), "w") as f:
        f.write("max")


@door["cgroup_file"]
def test_move_even_inside_own_session_is_refused(own_sub_cgroup):
    """Members move no process at all, not even within their own session:
    the kernel names no process at the open of cgroup.procs, and a move
    into the session could take a protected process out of its protected
    cgroup (README: Side doors)."""
    p = own_child()
    try:
        assert open_refused(os.path.join(own_sub_cgroup, "cgroup.procs"), os.O_WRONLY)
        assert D.cgroup_of(p.pid) != own_sub_cgroup
    finally:
        reap(p)


def test_pass_ptrace_own_child():
    p = own_child()
    try:
        D.ptrace_attach(p.pid)
    finally:
        reap(p)


def test_pass_sigio_own_child():
    marker = f"doors-sigio-child-{uuid.uuid4().hex}"
    p = own_child(marker)
    a, b = socket.socketpair()
    try:
        wait_exec(p, marker)
        fcntl.fcntl(a, fcntl.F_SETOWN, p.pid)
        fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
        b.send(b"x")
        assert p.wait(10) == -signal.SIGIO
    finally:
        a.close()
        b.close()
        reap(p)


def test_pass_connect_own_unix_socket(tmp_path):
    path = str(tmp_path / "sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(path)
    c.close()
    srv.close()


def test_pass_list_pins():
    assert "link_lg_task_kill" in os.listdir(PIN_DIR)


# =============================================================================
# task_kill: signals, whatever sends them.
# =============================================================================

@door["task_kill"]
def test_kill_os_kill(gateway):
    with pytest.raises(PermissionError):
        os.kill(gateway.pid, signal.SIGTERM)
    assert_kept(gateway)


@door["task_kill"]
def test_kill_os_killpg(gateway):
    pgid = gateway.pgid
    assert pgid != os.getpgrp()
    with pytest.raises(PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    assert_kept(gateway)


@door["task_kill"]
def test_kill_pidfd_send_signal(gateway):
    fd = os.pidfd_open(gateway.pid)
    try:
        with pytest.raises(PermissionError):
            signal.pidfd_send_signal(fd, signal.SIGKILL)
    finally:
        os.close(fd)
    assert_kept(gateway)


@door["task_kill"]
def test_kill_sigstop(gateway):
    try:
        os.kill(gateway.pid, signal.SIGSTOP)
    except PermissionError:
        assert_kept(gateway)
        return
    time.sleep(0.2)
    os.kill(gateway.pid, signal.SIGCONT)
    pytest.fail("SIGSTOP was delivered to the gateway")


@door["task_kill"]
def test_kill_from_shell(gateway):
    res = via("subprocess.run", ["sh", "-c", f"kill -TERM {gateway.pid}"])
    assert res.rc != 0, describe(res)
    assert_kept(gateway)


@door["task_kill"]
def test_kill_ps_grep_xargs_kill(gateway):
    res = via("subprocess.getstatusoutput",
              "ps -eo pid,args | grep '[h]ermes-gateway' | awk '{print $1}' | xargs -r kill")
    assert res.rc != 0, describe(res)
    assert_kept(gateway)


@door["task_kill"]
@pytest.mark.parametrize("argv", [
    ["pkill", "-f", "hermes-gateway"],
    ["pkill", "-9", "-f", "gateway"],
    ["pkill", "hermes-gateway"],
    ["killall", "-r", "hermes"],
    ["killall", "-9", "hermes-gateway"],
], ids=" ".join)
def test_kill_by_pattern(gateway, argv):
    via("subprocess.run", argv)
    assert_kept(gateway)


@door["task_kill"]
def test_kill_pattern_via_os_system(gateway):
    via("os.system", "pkill -TERM -f 'hermes-gatewa[y]'")
    assert_kept(gateway)


@door["task_kill"]
def test_kill_minus_one_as_gateway_user(gateway):
    """kill(-1) from a member running as nobody, the gateway's user: every
    process of that user but the sender, and only the gateway runs as it."""
    with open(f"/proc/{gateway.pid}/status") as f:
        assert "Uid:\t65534\t" in f.read(), "the gateway should run as nobody"
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            try:
                os.kill(-1, signal.SIGTERM)
                code = 0
            except PermissionError:
                code = 1
            except ProcessLookupError:
                code = 3
        finally:
            os._exit(code)
    _, st = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(st) in (0, 1, 3)
    assert_kept(gateway)


@door["task_kill"]
def test_membership_sticks_to_a_daemonized_grandchild(gateway, tmp_path):
    """fork, setsid, fork again, parent exits, grandchild daemonizes: still
    a member, still refused."""
    result = tmp_path / "result"
    gw = gateway.pid
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() > 0:
                os._exit(0)
            os.chdir("/")
            os.umask(0)
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            time.sleep(0.3)  # the middle process is gone: reparented
            try:
                os.kill(gw, signal.SIGTERM)
                r = "delivered"
            except PermissionError:
                r = "EPERM"
            except OSError as e:
                r = f"errno {e.errno}"
            tmp = str(result) + ".tmp"
            with open(tmp, "w") as f:
                f.write(f"{r} ppid={os.getppid()} sid={os.getsid(0)}")
            os.rename(tmp, str(result))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert D.wait_until(result.exists, 10), "the daemonized grandchild reported nothing"
    text = result.read_text()
    assert text.startswith("EPERM "), text
    assert_kept(gateway)


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@door["task_kill"]
def test_kill_parent_of_pdeathsig_service(gateway):
    """The child asked for SIGKILL when its parent dies (before anything
    protected it): killing the unprotected parent would kill it through the
    kernel, past every check. The parent is protected as its keeper."""
    child = D.wait_until(lambda: _read_pid(CFG["pdeath_child"]), 20)
    parent = _read_pid(CFG["pdeath_parent"])
    assert child and parent, "the PDEATHSIG pair did not start"
    assert D.wait_until(lambda: D.listed_protected(child), 20), f"pdeath child {child} never protected"
    with pytest.raises(PermissionError):
        os.kill(parent, signal.SIGKILL)
    time.sleep(0.3)
    assert D.proc_stat(child) is not None, "the PDEATHSIG child died"
    assert D.proc_stat(parent) is not None, "its parent died"
    assert_kept(gateway, settle=0)


@door["task_kill"]
def test_kill_reader_of_service_output_pipe(gateway):
    """A service not under s6 writes its stdout into a pipe: killing the
    process reading it would kill the service by SIGPIPE at its next
    write. Whoever reads a protected service's output is protected."""
    service = D.wait_until(lambda: _read_pid(CFG["piped_service"]), 20)
    reader = D.wait_until(lambda: _read_pid(CFG["piped_reader"]), 20)
    assert service and reader, "the piped service did not start"
    assert D.wait_until(lambda: D.listed_protected(reader), 20), f"pipe reader {reader} never protected"
    with pytest.raises(PermissionError):
        os.kill(reader, signal.SIGKILL)
    time.sleep(0.5)  # the service writes every 0.2 s

    def running(pid):  # nobody reaps either at once: a zombie is dead
        st = D.proc_stat(pid)
        return st is not None and st.state != "Z"
    assert running(reader), "the reader died"
    assert running(service), "the service died (SIGPIPE)"
    assert_kept(gateway, settle=0)


def test_pass_reading_service_output_does_not_protect_a_member(tmp_path):
    """A member that holds the read end of a protected service's output pipe
    (handed over by the reader) is not made protected: that would put it
    out of its own session's reach. The watcher says why instead."""
    service = D.wait_until(lambda: _read_pid(CFG["piped_service"]), 20)
    assert service, "the piped service did not start"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.connect(CFG["piped_reader_sock"])
        _, fds, _, _ = socket.recv_fds(c, 16, 1)
    assert fds, "the reader sent no descriptor"
    try:
        # A change in the PID file's directory makes the watcher resolve
        # the target again, and look for readers.
        nudge = os.path.join(CFG["hermes_home"], f"nudge-{os.getpid()}")
        open(nudge, "w").close()
        os.unlink(nudge)
        warning = f"pid {os.getpid()} is a reader of the stdout of pid {service}"
        seen = D.wait_until(lambda: warning in json.dumps(D.status_json() or {}), 30)
        assert seen, "the watcher never reported the member reader"
        assert not D.listed_protected(os.getpid()), "a session member was protected"
        assert D.in_session()
    finally:
        os.close(fds[0])


@door["task_kill"]
def test_kill_s6_svscan(gateway):
    """SIGTERM to the scan directory's s6-svscan tears down every service
    it supervises."""
    sv = _read_pid(CFG["svscan_pidfile"])
    assert sv and D.proc_stat(sv), "s6-svscan is not running"
    with pytest.raises(PermissionError):
        os.kill(sv, signal.SIGTERM)
    assert D.proc_stat(sv) is not None
    assert_kept(gateway)


@door["task_kill"]
def test_kill_log_service(gateway):
    """The gateway's log service reads its output: with the reader gone,
    the gateway's next write brings SIGPIPE, sent by the kernel."""
    log = D.wait_until(lambda: D.s6_pid(os.path.join(SLOT, "log")), 20)
    assert log, "the gateway's log service is not up"
    with pytest.raises(PermissionError):
        os.kill(log, signal.SIGTERM)
    assert D.s6_pid(os.path.join(SLOT, "log")) == log
    assert_kept(gateway)


def _run_process():
    """The `liveguard-bpf run` this session was started by (outside it)."""
    pid = os.getppid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "liveguard-bpf":
                    return pid
        except OSError:
            return None
        st = D.proc_stat(pid)
        if not st:
            return None
        pid = st.ppid
    return None


@door["ptrace"]
def test_ptrace_own_run():
    """A root member tracing the `run` that started its session could make
    it send any kill; run protects itself as the watcher does."""
    run_pid = _run_process()
    assert run_pid, "no liveguard-bpf run among this test's ancestors"
    with pytest.raises(PermissionError):
        D.ptrace_attach(run_pid)


# =============================================================================
# exec: service-control commands naming a protected service.
# =============================================================================

SYSTEMCTL_BY_PRIMITIVE = {
    "subprocess.run": ["systemctl", "restart", "hermes-gateway"],
    "subprocess.Popen": ["systemctl", "--user", "restart", "hermes-gateway"],
    "subprocess.call": ["systemctl", "stop", "hermes-gateway.service"],
    "subprocess.check_call": ["systemctl", "kill", "hermes-gateway"],
    "subprocess.check_output": ["systemctl", "--user", "stop", "hermes-gateway.service"],
    "subprocess.getoutput": ["systemctl", "restart", "hermes-gateway"],
    "subprocess.getstatusoutput": ["systemctl", "--user", "kill", "hermes-gateway.service"],
    "os.system": ["systemctl", "restart", "hermes-gateway.service"],
    "os.popen": ["systemctl", "stop", "hermes-gateway"],
    "pty.spawn": ["systemctl", "restart", "hermes-gateway"],
    "asyncio.create_subprocess_exec": ["systemctl", "kill", "--user", "hermes-gateway"],
    "asyncio.create_subprocess_shell": ["systemctl", "restart", "hermes-gateway"],
}


@door["exec"]
@pytest.mark.parametrize("primitive", D.PRIMITIVES)
def test_exec_systemctl_via(gateway, primitive):
    argv = SYSTEMCTL_BY_PRIMITIVE[primitive]
    res = via(primitive, argv)
    assert_exec_refused(res, f"{primitive}: {' '.join(argv)}")
    assert_kept(gateway)


MUTATING_VERBS = ["restart", "start", "stop", "kill", "reload", "reset-failed", "enable", "disable",
                  "mask", "unmask", "daemon-reload", "try-restart", "reload-or-restart"]


@door["exec"]
@pytest.mark.parametrize("verb", MUTATING_VERBS)
def test_exec_systemctl_verb(gateway, verb):
    argv = ["systemctl", verb, "hermes-gateway"]
    assert_exec_refused(via("subprocess.run", argv), " ".join(argv))
    assert_kept(gateway)


# Verbs systemd 252 also accepts that stop, restart, freeze or re-limit a
# unit: aliases of the listed ones and a few more.
UNLISTED_VERBS = [
    ["condrestart", "hermes-gateway"],          # alias of try-restart
    ["force-reload", "hermes-gateway"],         # alias of try-reload-or-restart
    ["try-reload-or-restart", "hermes-gateway"],
    ["reload-or-try-restart", "hermes-gateway"],
    ["condreload", "hermes-gateway"],
    ["condstop", "hermes-gateway"],             # alias of stop
    ["freeze", "hermes-gateway"],               # SIGSTOP through the cgroup freezer
    ["set-property", "hermes-gateway", "MemoryMax=1"],
    ["reenable", "hermes-gateway"],
    ["clean", "--what=all", "hermes-gateway"],
    ["isolate", "hermes-gateway"],
]


@door["exec"]
@pytest.mark.parametrize("args", UNLISTED_VERBS, ids=lambda a: a[0])
def test_exec_systemctl_unlisted_verb(gateway, args):
    argv = ["systemctl", *args]
    assert_exec_refused(via("subprocess.run", argv), " ".join(argv))
    assert_kept(gateway)


WRAPPERS = {
    "absolute path": ["/usr/bin/systemctl", "restart", "hermes-gateway"],
    "sudo": ["sudo", "systemctl", "restart", "hermes-gateway"],
    "sudo -u root abs --user": ["sudo", "-u", "root", "/usr/bin/systemctl", "--user", "stop",
                                "hermes-gateway.service"],
    "env": ["env", "systemctl", "stop", "hermes-gateway"],
    "env -i": ["env", "-i", "/usr/bin/systemctl", "kill", "hermes-gateway"],
    "setsid": ["setsid", "-w", "systemctl", "restart", "hermes-gateway"],
    "nohup": ["nohup", "systemctl", "restart", "hermes-gateway"],
    "timeout": ["timeout", "5", "systemctl", "restart", "hermes-gateway"],
    "sh -c": ["sh", "-c", "systemctl restart hermes-gateway"],
    "bash -c": ["bash", "-c", "systemctl restart hermes-gateway"],
    "xargs": ["sh", "-c", "echo hermes-gateway | xargs systemctl restart"],
}


@door["exec"]
@pytest.mark.parametrize("name", list(WRAPPERS))
def test_exec_systemctl_wrapped(gateway, name):
    argv = WRAPPERS[name]
    assert_exec_refused(via("subprocess.run", argv), " ".join(argv))
    assert_kept(gateway)


@door["exec"]
def test_exec_systemctl_python_execvp(gateway):
    """A Python child exec'ing systemctl itself gets PermissionError (errno 1)."""
    code = ("import os, sys\n"
            "try:\n"
            "    os.execvp('systemctl', ['systemctl', 'restart', 'hermes-gateway'])\n"
            "except OSError as e:\n"
            "    print(type(e).__name__, e.errno); sys.exit(3)\n")
    r = run([sys.executable, "-c", code])
    assert r.returncode == 3 and r.stdout.strip() == "PermissionError 1", (r.returncode, r.stdout, r.stderr)
    assert_kept(gateway)


@door["exec"]
@pytest.mark.parametrize("unit", ["hermes-*", "hermes-gateway*.service", "*gateway*"])
def test_exec_systemctl_glob(gateway, unit):
    argv = ["systemctl", "restart", unit]
    assert_exec_refused(via("subprocess.run", argv), " ".join(argv))
    assert_kept(gateway)


@door["exec"]
def test_exec_systemctl_unit_after_many_arguments(gateway):
    """The protected unit named after 40 others."""
    argv = ["systemctl", "restart"] + [f"filler-{i}.service" for i in range(40)] + ["hermes-gateway"]
    assert_exec_refused(via("subprocess.run", argv), "systemctl restart <40 units> hermes-gateway")
    assert_kept(gateway)


S6_CASES = [
    ("subprocess.run", ["s6-svc", "-d", SLOT], None),
    ("subprocess.run", ["s6-svc", "-t", SLOT], None),
    ("subprocess.run", ["s6-svc", "-k", SLOT], None),
    ("subprocess.run", ["s6-svc", "-t", "gateway-default"], SCAN),
    ("subprocess.run", ["s6-svscanctl", "-an", SCAN], None),
    ("os.system", ["s6-svc", "-k", SLOT], None),
    ("subprocess.Popen", ["s6-svscanctl", "-an", SCAN], None),
    ("subprocess.run", ["sudo", "s6-svc", "-t", SLOT], None),
    ("subprocess.run", ["timeout", "5", "s6-svc", "-d", SLOT], None),
    ("subprocess.run", ["sh", "-c", "s6-svc -t gateway-default"], SCAN),
    ("asyncio.create_subprocess_exec", ["/usr/bin/s6-svc", "-k", SLOT], None),
]


@door["exec"]
@pytest.mark.parametrize("primitive,argv,cwd", S6_CASES,
                         ids=[f"{p}: {' '.join(a)}" + (f" (cwd {c})" if c else "") for p, a, c in S6_CASES])
def test_exec_s6(gateway, primitive, argv, cwd):
    assert_exec_refused(via(primitive, argv, cwd=cwd), " ".join(argv))
    assert_kept(gateway)


@door["exec"]
@door["control_fifo"]
@pytest.mark.parametrize("spelling", ["./gateway-default/", "//run/service/gateway-default", "symlink"])
def test_s6_svc_other_spellings(gateway, tmp_path, spelling):
    """The service directory spelled another way: whether the exec or the
    control FIFO refuses it, s6-svc fails and the gateway stays."""
    target = spelling
    if spelling == "symlink":
        target = str(tmp_path / "gw-link")
        os.symlink(SLOT, target)
    res = via("subprocess.run", ["s6-svc", "-k", target], cwd=SCAN)
    assert isinstance(res, OSError) or res.rc != 0, describe(res)
    assert_kept(gateway)


@door["control_fifo"]
def test_s6_svc_copied_binary(gateway, tmp_path):
    """A copy of s6-svc is another file: the control FIFO still refuses it."""
    copy = str(tmp_path / "my-svc")
    shutil.copy2("/usr/bin/s6-svc", copy)
    res = via("subprocess.run", [copy, "-k", SLOT])
    assert isinstance(res, OSError) or res.rc != 0, describe(res)
    assert_kept(gateway)


# =============================================================================
# control_fifo: s6's control FIFOs opened for writing.
# =============================================================================

@door["control_fifo"]
@pytest.mark.parametrize("path,flags", [
    (os.path.join(SLOT, "supervise", "control"), os.O_WRONLY | os.O_NONBLOCK),
    (os.path.join(SLOT, "supervise", "control"), os.O_RDWR | os.O_NONBLOCK),
    (os.path.join(SCAN, ".s6-svscan", "control"), os.O_WRONLY | os.O_NONBLOCK),
], ids=["supervise/control O_WRONLY", "supervise/control O_RDWR", ".s6-svscan/control O_WRONLY"])
def test_control_fifo_open(gateway, path, flags):
    assert open_refused(path, flags), f"{path} opened for writing"
    assert_kept(gateway)


@door["control_fifo"]
def test_control_fifo_through_symlink(gateway, tmp_path):
    link = str(tmp_path / "control")
    os.symlink(os.path.join(SLOT, "supervise", "control"), link)
    assert open_refused(link, os.O_WRONLY | os.O_NONBLOCK), "control FIFO opened through a symlink"
    assert_kept(gateway)


@door["control_fifo"]
def test_control_fifo_shell_write(gateway):
    res = via("subprocess.run", ["sh", "-c", f"printf t > {SLOT}/supervise/control"])
    assert res.rc != 0, describe(res)
    assert_kept(gateway)


# =============================================================================
# cgroup_file: the files of cgroups that hold or contain protected processes;
# moves out of the session.
# =============================================================================

CG_FILES = ["cgroup.kill", "cgroup.freeze", "cgroup.procs", "memory.max", "pids.max"]


def cg_dir(gateway, which):
    return {"gateway": gateway.cgroup, "ancestor": os.path.dirname(gateway.cgroup),
            "supervisor": D.cgroup_of(D.proc_stat(gateway.pid).ppid)}[which]


@door["cgroup_file"]
@pytest.mark.parametrize("name", CG_FILES)
@pytest.mark.parametrize("which", ["gateway", "ancestor", "supervisor"])
def test_cgroup_file_open(gateway, which, name):
    d = cg_dir(gateway, which)
    assert d and d != CFG["cgroup_mount"], f"{which} cgroup is {d}"
    path = os.path.join(d, name)
    assert os.path.exists(path), f"{path} missing (the runner enables the memory and pids controllers)"
    assert open_refused(path, os.O_WRONLY), f"{path} opened for writing"
    assert_kept(gateway)


@door["cgroup_file"]
@pytest.mark.parametrize("name", ["cgroup.subtree_control", "cgroup.procs", "cgroup.threads"])
def test_cgroup_root_file_open(gateway, name):
    path = os.path.join(CFG["cgroup_mount"], name)
    assert open_refused(path, os.O_WRONLY), f"{path} opened for writing"
    assert_kept(gateway)


@door["cgroup_file"]
@pytest.mark.parametrize("what", ["cgroup.kill", "cgroup.freeze"])
def test_cgroup_shell_write(gateway, what):
    path = os.path.join(gateway.cgroup, what)
    res = via("subprocess.run", ["sh", "-c", f"echo 1 > {path}"])
    if res.rc == 0 and what == "cgroup.freeze":
        with open(path, "w") as f:
            f.write("0")
    assert res.rc != 0, describe(res)
    assert_kept(gateway)


def escape_from_child(dest, filename="cgroup.procs"):
    """A forked child writes its own id to dest/filename. 0: moved (escaped),
    1: refused with EPERM at open, 2: refused at write, 3: other error."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            try:
                fd = os.open(os.path.join(dest, filename), os.O_WRONLY)
            except PermissionError:
                code = 1
            else:
                try:
                    os.write(fd, str(os.getpid() if filename == "cgroup.procs" else
                                     __import__("threading").get_native_id()).encode())
                    code = 0
                except OSError:
                    code = 2
        finally:
            os._exit(code)
    _, st = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(st)


@door["cgroup_file"]
@pytest.mark.parametrize("where", ["root", "elsewhere", "session parent"])
def test_cgroup_escape(where):
    dest = {"root": CFG["cgroup_mount"], "elsewhere": CFG["elsewhere_cg"],
            "session parent": os.path.dirname(D.session_cgroup())}[where]
    assert os.path.isdir(dest), dest
    code = escape_from_child(dest)
    assert code == 1, f"moving into {dest}: child reported {code} (0 = escaped)"


@door["cgroup_file"]
def test_cgroup_escape_threads():
    code = escape_from_child(CFG["elsewhere_cg"], "cgroup.threads")
    assert code == 1, f"cgroup.threads of {CFG['elsewhere_cg']}: child reported {code}"


# =============================================================================
# proc_file: /proc/<gateway>/oom_score_adj, oom_adj, mem for writing.
# =============================================================================

@door["proc_file"]
@pytest.mark.parametrize("rel", ["oom_score_adj", "oom_adj", "task/{pid}/oom_score_adj"])
def test_proc_file_open(gateway, rel):
    path = f"/proc/{gateway.pid}/" + rel.format(pid=gateway.pid)
    assert open_refused(path, os.O_WRONLY), f"{path} opened for writing"
    assert_kept(gateway)


@door["proc_file"]
def test_proc_sysrq_trigger():
    """SysRq e/i signal every process with no kill check; opening the
    trigger for writing is refused (nothing is written either way)."""
    assert open_refused("/proc/sysrq-trigger", os.O_WRONLY), "/proc/sysrq-trigger opened for writing"


# =============================================================================
# limits: a CPU-time limit kills (SIGKILL at the hard limit); priority,
# scheduling policy and I/O priority can starve.
# =============================================================================

@door["limits"]
def test_limits_prlimit_cpu(gateway):
    import resource
    with pytest.raises(PermissionError):
        resource.prlimit(gateway.pid, resource.RLIMIT_CPU, (1, 1))
    assert_kept(gateway)


@door["limits"]
def test_limits_setpriority(gateway):
    with pytest.raises(PermissionError):
        os.setpriority(os.PRIO_PROCESS, gateway.pid, 19)
    assert os.getpriority(os.PRIO_PROCESS, gateway.pid) != 19
    assert_kept(gateway)


@door["limits"]
def test_limits_sched_idle(gateway):
    with pytest.raises(PermissionError):
        os.sched_setscheduler(gateway.pid, os.SCHED_IDLE, os.sched_param(0))
    assert_kept(gateway)


@door["limits"]
def test_limits_ioprio_idle(gateway):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    IOPRIO_WHO_PROCESS, IOPRIO_CLASS_IDLE = 1, 3
    rc = libc.syscall(D._NR["ioprio_set"], IOPRIO_WHO_PROCESS, gateway.pid, IOPRIO_CLASS_IDLE << 13)
    assert rc == -1 and ctypes.get_errno() == errno.EPERM, f"ioprio_set returned {rc}"
    assert_kept(gateway)


def test_pass_limits_own_child():
    import resource
    p = own_child()
    try:
        resource.prlimit(p.pid, resource.RLIMIT_NOFILE, (64, 64))
        os.setpriority(os.PRIO_PROCESS, p.pid, 10)
    finally:
        reap(p)


@door["proc_file"]
@door["ptrace"]
def test_proc_mem_write(gateway):
    path = f"/proc/{gateway.pid}/mem"
    try:
        fd = os.open(path, os.O_RDWR)
    except PermissionError:
        assert_kept(gateway)
        return
    try:
        n = os.pwrite(fd, b"doors was here", gateway.scratch_address)
    finally:
        os.close(fd)
    pytest.fail(f"{path} opened for writing; wrote {n} bytes at the scratch buffer")


# =============================================================================
# ptrace: attach, seize, process_vm_*, /proc/<pid>/mem, pidfd_getfd.
# =============================================================================

@door["ptrace"]
@pytest.mark.parametrize("seize", [False, True], ids=["PTRACE_ATTACH", "PTRACE_SEIZE"])
def test_ptrace_attach(gateway, seize):
    with pytest.raises(PermissionError):
        D.ptrace_attach(gateway.pid, seize=seize)
    assert_kept(gateway)


@door["ptrace"]
def test_process_madvise_pageout(gateway):
    """process_madvise asks only for the ptrace read check, as ps does."""
    err = D.process_madvise_pageout(gateway.pid, gateway.scratch_address)
    # mm_access() answers a refused check with EACCES.
    assert err in (errno.EPERM, errno.EACCES), f"process_madvise: {'paged out' if err == 0 else os.strerror(err)}"
    assert_kept(gateway)


def test_pass_process_madvise_own_child():
    p = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        assert D.process_madvise_pageout(p.pid) == 0
    finally:
        p.kill()
        p.wait(10)


@door["ptrace"]
def test_process_vm_writev(gateway):
    with pytest.raises(PermissionError):
        D.process_vm_writev(gateway.pid, gateway.scratch_address, b"doors was here")
    assert_kept(gateway)


@door["ptrace"]
def test_process_vm_readv(gateway):
    with pytest.raises(PermissionError):
        D.process_vm_readv(gateway.pid, gateway.scratch_address, 16)
    assert_kept(gateway)


@door["ptrace"]
def test_proc_mem_read(gateway):
    assert open_refused(f"/proc/{gateway.pid}/mem", os.O_RDONLY), "/proc/<gw>/mem opened"


@door["ptrace"]
def test_pidfd_getfd(gateway):
    with pytest.raises(PermissionError):
        fd = D.pidfd_getfd(gateway.pid, 0)
        os.close(fd)
    assert_kept(gateway)


# =============================================================================
# sigio: SIGIO/SIGURG aimed at the gateway with F_SETOWN.
# =============================================================================

F_SETSIG = 10
F_SETOWN_EX = 15
F_OWNER_PID = 1
F_OWNER_PGRP = 2


@door["sigio"]
@pytest.mark.parametrize("how", ["F_SETOWN pid", "F_SETOWN -pgid", "F_SETOWN_EX pid", "F_SETSIG SIGTERM"])
def test_sigio(gateway, how):
    a, b = socket.socketpair()
    try:
        try:
            if how == "F_SETOWN pid":
                fcntl.fcntl(a, fcntl.F_SETOWN, gateway.pid)
            elif how == "F_SETOWN -pgid":
                fcntl.fcntl(a, fcntl.F_SETOWN, -gateway.pgid)
            elif how == "F_SETOWN_EX pid":
                fcntl.fcntl(a, F_SETOWN_EX, struct.pack("ii", F_OWNER_PID, gateway.pid))
            else:
                fcntl.fcntl(a, F_SETSIG, signal.SIGTERM)
                fcntl.fcntl(a, fcntl.F_SETOWN, gateway.pid)
        except PermissionError:
            pass  # refusing the owner is a refusal too
        fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
        b.send(b"x")
        assert_kept(gateway)
    finally:
        a.close()
        b.close()


@door["sigio"]
def test_sigurg_oob(gateway):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname())
    s, _ = srv.accept()
    try:
        before = D.sigurg_count(gateway.pid)
        try:
            fcntl.fcntl(s, fcntl.F_SETOWN, gateway.pid)
        except PermissionError:
            pass
        c.send(b"!", socket.MSG_OOB)
        time.sleep(0.5)
        assert D.sigurg_count(gateway.pid) == before, "SIGURG reached the gateway"
        assert_kept(gateway)
    finally:
        for x in (s, c, srv):
            x.close()


# =============================================================================
# service_socket: systemd's private sockets (and the buses, when the policy
# closes them: [sessions] refuse_service_manager_sockets).
# =============================================================================

@door["service_socket"]
@pytest.mark.parametrize("path", CFG["sockets"] + ["symlink"])
def test_service_socket_connect(tmp_path, path):
    if path == "symlink":
        path = str(tmp_path / "bus")
        os.symlink(CFG["sockets"][0], path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with pytest.raises(PermissionError):
            s.connect(path)
    finally:
        s.close()


# =============================================================================
# service_bus: the buses stay open, but no call that has systemd or logind
# change the machine's services (systemd-run, start, stop, kill) or power.
# =============================================================================

def _bus_calls():
    unit = D.SYSTEMD + "/unit/hermes_2dgateway_2eservice"
    return {
        "systemd-run": [D.transient_unit_call("/bin/kill -TERM 1")],
        "StopUnit": [D.bus_message(D.SYSTEMD, "StopUnit", D.SYSTEMD_IFACE, signature="ss",
                                   body=D.bus_strings("hermes-gateway.service", "replace"))],
        "unit Kill, no interface": [D.bus_message(unit, "Kill", signature="si",
                                                  body=D.bus_strings("all") + b"\0\0\0\x0f")],
        "Properties.Set": [D.bus_message(unit, "Set", "org.freedesktop.DBus.Properties")],
        "logind PowerOff": [D.bus_message("/org/freedesktop/login1", "PowerOff",
                                          "org.freedesktop.login1.Manager",
                                          destination="org.freedesktop.login1", signature="b",
                                          body=b"\0\0\0\0")],
        "to systemd's unique name": [D.bus_message(D.SYSTEMD, "StopUnit", D.SYSTEMD_IFACE,
                                                   destination=":1.0", signature="ss",
                                                   body=D.bus_strings("hermes-gateway.service", "replace"))],
        "big-endian": [D.bus_message(D.SYSTEMD, "StopUnit", D.SYSTEMD_IFACE, signature="ss", big=True,
                                     body=D.bus_strings("hermes-gateway.service", "replace", big=True))],
        "after a harmless call, one write": [
            D.bus_message("/org/freedesktop/DBus", "Hello", "org.freedesktop.DBus",
                          destination="org.freedesktop.DBus") + D.transient_unit_call()],
        "header cut between writes": [D.transient_unit_call()[:20], D.transient_unit_call()[20:]],
        # Cancelling a protected unit's start or restart job leaves it down.
        "CancelJob": [D.bus_message(D.SYSTEMD, "CancelJob", D.SYSTEMD_IFACE, signature="u",
                                    body=b"\x01\0\0\0")],
    }


@door["service_bus"]
@pytest.mark.parametrize("how", list(_bus_calls()))
def test_service_bus_manager_call(gateway, how):
    writes = _bus_calls()[how]
    s = D.bus_connect(CFG["bus_sockets"][0])
    try:
        with pytest.raises(PermissionError):
            for w in writes:
                s.sendall(w)
    finally:
        s.close()
    assert_kept(gateway)


@door["service_bus"]
def test_service_bus_pipelined_with_begin():
    """BEGIN and the first call in one write, as a client may send them."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(CFG["bus_sockets"][1])
        with pytest.raises(PermissionError):
            s.sendall(b"\0AUTH EXTERNAL 30\r\nBEGIN\r\n" + D.transient_unit_call())
    finally:
        s.close()


@door["service_bus"]
@pytest.mark.parametrize("how", ["header before BEGIN", "BEGIN with a descriptor", "body across writes",
                                 "sendto an address", "MSG_OOB"])
def test_service_bus_stream_out_of_step(gateway, how):
    """What would put the door's reading of the stream out of step with
    the bus daemon's is refused: a message header while the daemon still
    reads authentication lines (to it a bad line, and what the door would
    skip as its body is read as lines, BEGIN and a call), a message whose
    body runs on into a later write, a send that fails after the hook, and
    out-of-band data the daemon never reads in line."""
    call = D.transient_unit_call()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(CFG["bus_sockets"][0])
        if how == "BEGIN with a descriptor":
            # Were the descriptor refused after the hook (a bad one), the
            # daemon would still read lines where the door reads messages.
            s.sendall(b"\0AUTH EXTERNAL 30\r\n")
            with pytest.raises(PermissionError):
                s.sendmsg([b"BEGIN\r\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", 0))])
            return
        if how == "header before BEGIN":
            tail = b"\r\nBEGIN\r\n" + call
            fake = D.bus_message("/x", "x", kind=2, destination=None)
            fake = fake[:4] + struct.pack("<I", len(tail)) + fake[8:]
            with pytest.raises(PermissionError):
                s.sendall(b"\0AUTH EXTERNAL 30\r\n" + fake + tail)
            return
        s.sendall(b"\0AUTH EXTERNAL 30\r\nBEGIN\r\n")
        with pytest.raises(PermissionError):
            if how == "body across writes":
                hello = D.bus_message("/org/freedesktop/DBus", "Hello", "org.freedesktop.DBus",
                                      destination="org.freedesktop.DBus", signature="s",
                                      body=D.bus_strings("x" * 64))
                s.sendall(hello[:-16])
            elif how == "sendto an address":
                s.sendto(D.bus_message("/org/freedesktop/DBus", "Hello", "org.freedesktop.DBus",
                                       destination="org.freedesktop.DBus"), CFG["bus_sockets"][0])
            else:
                s.send(D.bus_message("/org/freedesktop/DBus", "Hello", "org.freedesktop.DBus",
                                     destination="org.freedesktop.DBus"), socket.MSG_OOB)
    finally:
        s.close()
    assert_kept(gateway)


def test_pass_service_bus_reads_and_other_services():
    """What suites do over the bus goes through: reading systemd's state
    and logind's (Can*), calls to other services, signals, a large body."""
    unit = D.SYSTEMD + "/unit/hermes_2dgateway_2eservice"
    big = D.bus_message("/org/example/Store", "Put", "org.example.Store",
                        destination="org.example.Store", signature="s",
                        body=D.bus_strings("x" * 100000))
    writes = [
        D.bus_message("/org/freedesktop/DBus", "Hello", "org.freedesktop.DBus", destination="org.freedesktop.DBus"),
        D.bus_message(D.SYSTEMD, "GetUnit", D.SYSTEMD_IFACE, signature="s",
                      body=D.bus_strings("hermes-gateway.service")),
        D.bus_message(D.SYSTEMD, "ListUnits", D.SYSTEMD_IFACE),
        D.bus_message(unit, "Get", "org.freedesktop.DBus.Properties", signature="ss",
                      body=D.bus_strings("org.freedesktop.systemd1.Unit", "ActiveState")),
        D.bus_message(D.SYSTEMD, "Introspect", "org.freedesktop.DBus.Introspectable"),
        D.bus_message("/org/freedesktop/login1", "CanPowerOff", "org.freedesktop.login1.Manager",
                      destination="org.freedesktop.login1"),
        D.bus_message("/org/freedesktop/systemd1x", "StopUnit", destination="org.example.Other"),
        D.bus_message("/org/example/Thing", "Changed", "org.example.Thing", destination=None, kind=4),
        big,
        D.bus_message(D.SYSTEMD, "GetUnit", D.SYSTEMD_IFACE, signature="s",
                      body=D.bus_strings("hermes-gateway.service")),
    ]
    for path in CFG["bus_sockets"]:
        s = D.bus_connect(path)
        try:
            for w in writes:
                s.sendall(w)
        finally:
            s.close()
    # godbus sends its credentials with the first byte.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(CFG["bus_sockets"][0])
        s.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS,
                             struct.pack("iII", os.getpid(), os.getuid(), os.getgid()))])
        s.sendall(b"AUTH EXTERNAL 30\r\n")
        s.sendall(b"BEGIN\r\n")
        s.sendall(writes[1])
    finally:
        s.close()


# =============================================================================
# mapped: what a protected process maps (a database, a plugin library),
# outside every protected tree, is not written, truncated or locked under
# it; replacing it by rename is allowed.
# =============================================================================

def _mapped_acts():
    def open_for_writing(path):
        os.close(os.open(path, os.O_WRONLY))

    def truncate(path):
        os.truncate(path, 0)

    def truncate_through_open(path):
        os.close(os.open(path, os.O_WRONLY | os.O_TRUNC))

    def lock(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)

    return {"open for writing": open_for_writing, "truncate": truncate,
            "O_TRUNC": truncate_through_open, "flock": lock}


@door["mapped"]
@pytest.mark.parametrize("which", ["mapped_db", "mapped_plugin"])
@pytest.mark.parametrize("act", list(_mapped_acts()))
def test_mapped_file_of_protected_process(which, act):
    path = CFG[which]
    size = os.stat(path).st_size
    with pytest.raises(PermissionError):
        _mapped_acts()[act](path)
    assert os.stat(path).st_size == size
    assert D.ask_watching_service() == "ok"


# A descriptor for writing of the mapped database, opened by
# tests/vm/doors/run before the session (so before the guard could refuse
# the open) and inherited here.
MAPPED_DB_FD = 10


@door["mapped"]
@pytest.mark.parametrize("how", ["mmap", "mprotect"])
def test_mapped_file_shared_writable_mapping(how):
    """Writes through a shared mapping pass no hook, so the mapping itself
    is refused: made writable at once, or read-only and then made
    writable."""
    with pytest.raises(PermissionError):
        D.map_shared(MAPPED_DB_FD, 4096, writable=(how == "mmap"), then_writable=(how == "mprotect"))
    assert D.ask_watching_service() == "ok"


# Each taken through a read-only descriptor, by `nobody`: enough for a
# shared lock, which blocks the service's exclusive one.
_HELD_OPEN_LOCKS = {
    "flock": "fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
    "fcntl read lock": "fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
    "OFD read lock": "fcntl.fcntl(fd, 37, struct.pack('hhqqixxxx', fcntl.F_RDLCK, 0, 0, 0, 0))",
}


@door["mapped"]
@pytest.mark.parametrize("lock", list(_HELD_OPEN_LOCKS))
def test_lock_on_file_protected_process_holds_open(lock):
    """The watching service holds its lock file open (outside every
    protected tree, not mapped) and locks it on each request."""
    code = (f"import fcntl, os, struct, sys\n"
            f"fd = os.open({CFG['held_lock']!r}, os.O_RDONLY)\n"
            f"try:\n    {_HELD_OPEN_LOCKS[lock]}\n"
            f"except PermissionError:\n    sys.exit(13)\n")
    r = subprocess.run([sys.executable, "-c", code], user=65534, group=65534, capture_output=True, text=True)
    assert r.returncode == 13, f"{lock} as nobody was not refused: exit {r.returncode} {r.stderr}"
    assert D.ask_watching_service() == "ok"


@door["mapped"]
def test_lock_on_file_protected_process_opened_late():
    """A file the service opens while it runs (no event says so): its
    lock is refused once the watcher has looked again (every two seconds)."""
    late = CFG["held_lock"] + ".late"
    open(late, "a").close()
    assert D.ask_watching_service() == "ok"  # it opens the file now
    deadline = time.monotonic() + 10
    while True:
        fd = os.open(late, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except PermissionError:
            break
        finally:
            os.close(fd)
        assert time.monotonic() < deadline, "a member could still lock it 10 s after the service opened it"
        time.sleep(0.2)
    assert D.ask_watching_service() == "ok"


def test_pass_mapped_file_replaced_by_rename_and_unmapped_written(tmp_path):
    """Replacing a mapped file by rename, as package managers and pip do,
    is allowed (the service keeps the old inode), and so is writing a file
    nothing protected maps."""
    path = CFG["mapped_db"]
    keep = path + ".kept"
    os.link(path, keep)
    try:
        with open(path + ".new", "wb") as f:
            f.write(b"\2" * 4096)
        os.replace(path + ".new", path)
        assert os.stat(path).st_size == 4096
        assert D.ask_watching_service() == "ok"
    finally:
        os.replace(keep, path)
    with open(CFG["unmapped_copy"], "r+b") as f:
        f.write(b"\3")
    os.truncate(CFG["unmapped_copy"], 65536)


# =============================================================================
# The watcher is protected too.
# =============================================================================

@door["ptrace"]
def test_ptrace_watcher():
    w = D.watcher_pid()
    assert w and D.proc_stat(w), "no watcher"
    with pytest.raises(PermissionError):
        D.ptrace_attach(w)


@door["task_kill"]
def test_kill_watcher():
    w = D.watcher_pid()
    st = D.proc_stat(w) if w else None
    assert st, "no watcher"
    with pytest.raises(PermissionError):
        os.kill(w, signal.SIGTERM)
    time.sleep(0.3)
    after = D.proc_stat(w)
    assert after and after.start_time == st.start_time and after.state not in "ZXx", "the watcher died"


# =============================================================================
# The ways around the guard that need no signal at all: children born in
# another cgroup, writes through files opened before the session, a full
# file-owner map, mounts, sysctls, BPF programs, perf sigtrap, fanotify
# permission marks, realtime scheduling, and moving a control FIFO.
# =============================================================================

@door["clone_into_cgroup"]
@pytest.mark.parametrize("where", ["elsewhere", "the gateway's cgroup"])
def test_clone3_into_cgroup(gateway, where):
    """A child born outside the session cgroup would outlive the session; one
    born in the gateway's cgroup could exhaust its memory limit."""
    target = CFG["elsewhere_cg"] if where == "elsewhere" else gateway.cgroup
    with pytest.raises(PermissionError):
        D.clone3_into(target)
    assert_kept(gateway)


def held_fd(name):
    """A descriptor the fd holder (outside every session) opened for
    writing before this session started, taken with pidfd_getfd."""
    with open(CFG["held"]) as f:
        held = json.load(f)
    return D.pidfd_getfd(held["pid"], held["fds"][name])


HELD = [
    pytest.param("control", marks=door["control_fifo"]),
    pytest.param("freeze", marks=door["cgroup_file"]),
    pytest.param("core_pattern", marks=door["sysctl"]),
]
# Descriptors tests/vm/doors/run opens before `liveguard-bpf run`, which
# this session inherits.
INHERITED = {"control": 7, "freeze": 8, "core_pattern": 9}


@pytest.mark.parametrize("name", HELD)
def test_write_through_fd_passed_in(gateway, name):
    """A descriptor for writing, opened by a process outside the session and
    taken here (pidfd_getfd; SCM_RIGHTS is the same hook): refused as it
    arrives, or at the write. Zero bytes: nothing is written even where the
    guard is gone."""
    try:
        fd = held_fd(name)
    except PermissionError:
        assert_kept(gateway)
        return
    try:
        with pytest.raises(PermissionError):
            os.write(fd, b"")
    finally:
        os.close(fd)
    assert_kept(gateway)


@pytest.mark.parametrize("name", HELD)
def test_write_through_inherited_fd(gateway, name):
    """Opened before the session started and inherited: only the write is
    left to check."""
    fd = INHERITED[name]
    try:
        os.fstat(fd)
    except OSError:
        pytest.fail(f"fd {fd} ({name}) was not inherited from tests/vm/doors/run")
    with pytest.raises(PermissionError):
        os.write(fd, b"")
    assert_kept(gateway)


@door["sigio"]
def test_fowners_map_cannot_be_flooded(gateway):
    """F_SETOWN on tens of thousands of other files used to evict the record
    that a member aimed a socket at the gateway; now the flood is refused
    once the map is full, and the record stays."""
    import resource
    a, b = socket.socketpair()
    files = []
    refused = 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        try:
            fcntl.fcntl(a, fcntl.F_SETOWN, gateway.pid)
        except PermissionError:
            pass
        resource.setrlimit(resource.RLIMIT_NOFILE, (40100, max(hard, 40100)))
        for _ in range(40000):
            fd = os.open("/dev/null", os.O_RDONLY)
            files.append(fd)
            try:
                fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
            except PermissionError:
                refused += 1
                break
        fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
        b.send(b"x")
        assert_kept(gateway)
        assert refused, f"{len(files)} F_SETOWN calls, none refused: the map never filled"
    finally:
        for fd in files:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        a.close()
        b.close()
    # Closed files leave the map: F_SETOWN works again.
    fd = os.open("/dev/null", os.O_RDONLY)
    try:
        assert D.wait_until(lambda: _setown_ok(fd), 10), "F_SETOWN still refused after the files closed"
    finally:
        os.close(fd)


def _setown_ok(fd):
    try:
        fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
        return True
    except PermissionError:
        return False


@door["mount"]
def test_umount_in_machine_namespace(gateway):
    """A lazy unmount in the machine's mount namespace (`umount -l /sys`
    took bpffs with it); tried on a mount made for the test."""
    target = CFG["host_mount"]
    with pytest.raises(PermissionError):
        D.umount2(target, 2)  # MNT_DETACH
    assert D.is_mountpoint(target)
    assert_kept(gateway)


@door["mount"]
def test_mount_in_machine_namespace(tmp_path, gateway):
    with pytest.raises(PermissionError):
        D.mount("doors", str(tmp_path), "tmpfs")
        D.umount2(str(tmp_path))
    assert_kept(gateway)


@door["mount"]
@pytest.mark.parametrize("how", ["mount -o remount", "fspick + fsconfig"])
def test_reconfigure_superblock(gateway, how):
    """A superblock reconfigured (remounted read-only, a tmpfs shrunk to
    nothing) is so in every namespace, whichever namespace asked. fsconfig
    is refused at its filesystem parameters: the kernel takes flags like
    `ro` before any LSM sees them (see the README)."""
    target = CFG["host_mount"]
    if how == "mount -o remount":
        with pytest.raises(PermissionError):
            D.mount("none", target, None, D.MS_REMOUNT | D.MS_RDONLY)
    else:
        fd = D.fspick(target)
        try:
            with pytest.raises(PermissionError):
                D.fsconfig_set_string(fd, "size", "1")
        finally:
            os.close(fd)
    assert_kept(gateway)


@door["mount"]
@pytest.mark.parametrize("where", ["machine namespace", "private namespace"])
def test_mount_cgroup_v1_freezer(tmp_path, gateway, where):
    """A v1 freezer hierarchy freezes whatever is moved into it; its
    release_agent runs a helper outside every session."""
    if where == "machine namespace":
        with pytest.raises(PermissionError):
            D.mount("cgroup", str(tmp_path), "cgroup", 0, "freezer")
            D.umount2(str(tmp_path))
    else:
        r = run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                 f"mount -t cgroup -o freezer cgroup {tmp_path} && umount {tmp_path}"])
        out = r.stderr + r.stdout
        assert r.returncode != 0 and ("ermission denied" in out or "not permitted" in out), describe(r)
    assert_kept(gateway)


@door["sysctl"]
@pytest.mark.parametrize("name", ["kernel/core_pattern", "kernel/modprobe", "kernel/sched_rt_runtime_us"])
def test_sysctl_open_for_writing(gateway, name):
    """A core_pattern or modprobe helper runs outside every session; realtime
    throttling off lets spinners starve everything else."""
    assert open_refused(f"/proc/sys/{name}", os.O_WRONLY), f"/proc/sys/{name} opened for writing"
    assert_kept(gateway)


@door["bpf_load"]
def test_bpf_prog_load(gateway):
    """Any program: one could call bpf_send_signal, or write liveguard's
    maps through a read-only fd."""
    with pytest.raises(PermissionError):
        os.close(D.bpf_prog_load_trivial())
    assert_kept(gateway)


@door["perf_event"]
def test_perf_event_sigtrap(gateway):
    with pytest.raises(PermissionError):
        os.close(D.perf_event_open_sigtrap(gateway.pid))
    assert_kept(gateway)


@door["fanotify"]
def test_fanotify_permission_mark(gateway):
    """A permission mark nobody answers blocks every open of the file."""
    with pytest.raises(PermissionError):
        D.fanotify_open_perm_mark(CFG["pidfile"])
    assert_kept(gateway)


@door["realtime"]
@pytest.mark.parametrize("how", ["sched_setscheduler", "chrt"])
def test_realtime_policy(gateway, how):
    if how == "chrt":
        r = run(["chrt", "-f", "1", "true"])
        assert r.returncode != 0 and "not permitted" in r.stderr + r.stdout, describe(r)
    else:
        try:
            with pytest.raises(PermissionError):
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    assert_kept(gateway)


def test_pass_scheduler_batch_own_process():
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def test_pass_mount_in_private_namespace(tmp_path):
    r = run(["unshare", "-m", "--propagation", "private", "sh", "-c",
             f"mount -t tmpfs doors {tmp_path} && umount {tmp_path}"])
    assert r.returncode == 0, describe(r)


@door["control_fifo"]
@pytest.mark.parametrize("how", ["rename", "unlink", "link"])
def test_control_fifo_moved(gateway, how):
    """The watcher follows a control FIFO's name; moving the FIFO took its
    guard away from the inode s6-supervise still reads."""
    control = os.path.join(SLOT, "supervise", "control")
    other = control + ".doors"
    try:
        with pytest.raises(PermissionError):
            if how == "rename":
                os.rename(control, other)
            elif how == "unlink":
                os.unlink(control)
            else:
                os.link(control, other)
    finally:
        if how == "rename" and os.path.exists(other) and not os.path.exists(control):
            os.rename(other, control)
        elif how == "link" and os.path.exists(other):
            os.unlink(other)
    assert os.path.exists(control)
    assert_kept(gateway)


# =============================================================================
# The machine: what only the machine's own capabilities allow (reboot,
# kexec, modules, the clock, raw I/O), its power state and securityfs.
# Each act is one the kernel refuses before doing anything when the guard
# is there, and a harmless one when it is not (the control run).
# =============================================================================

def _machine_case(name):
    door_name, act = D.machine_acts()[name]
    return pytest.param(name, act, marks=door[door_name], id=name)


@pytest.mark.parametrize("name, act", [_machine_case(n) for n in [
    "reboot CAD_OFF", "kexec_load", "finit_module", "delete_module", "clock_settime", "ioperm",
    "/dev/mem", "/dev/port", "sethostname", "setdomainname", "swapon", "swapoff"]])
def test_machine_capability(gateway, name, act):
    err = act()
    assert err == errno.EPERM, f"{name}: {'done' if err == 0 else os.strerror(err)}, not refused"
    assert_kept(gateway)


@door["power"]
@pytest.mark.parametrize("name", ["state", "mem_sleep", "pm_freeze_timeout"])
def test_power_file_open_for_writing(gateway, name):
    """`echo freeze > /sys/power/state` freezes every task on the machine."""
    path = f"/sys/power/{name}"
    assert os.path.exists(path), f"{path} does not exist on this kernel"
    assert open_refused(path, os.O_WRONLY), f"{path} opened for writing"
    assert_kept(gateway)


@door["securityfs"]
def test_securityfs_lockdown(gateway):
    """Lockdown cannot be lifted until a reboot, and the guard cannot be
    loaded again under it."""
    path = "/sys/kernel/security/lockdown"
    assert os.path.exists(path), f"{path}: securityfs not mounted"
    assert open_refused(path, os.O_WRONLY), f"{path} opened for writing"
    assert_kept(gateway)


def test_pass_own_namespace_hostname_and_clock_reads():
    """A member's own UTS namespace is its own: sethostname there works."""
    r = run(["unshare", "--uts", "sh", "-c", "hostname liveguard-own-uts && hostname"])
    assert r.returncode == 0 and "liveguard-own-uts" in r.stdout, describe(r)
    r = run(["unshare", "--uts", sys.executable, "-c",
             "import ctypes, os; n = b'liveguard-own-uts'; libc = ctypes.CDLL(None, use_errno=True); "
             "assert libc.sethostname(n, len(n)) == 0, os.strerror(ctypes.get_errno()); "
             "assert libc.setdomainname(n, len(n)) == 0, os.strerror(ctypes.get_errno()); "
             "print(os.uname().nodename)"])
    assert r.returncode == 0 and "liveguard-own-uts" in r.stdout, describe(r)
    time.clock_gettime(time.CLOCK_REALTIME)


# =============================================================================
# network: the machine's network namespace (links, addresses, routes,
# netfilter) is every service's; one of the member's own is its own.
# =============================================================================

@door["network"]
@pytest.mark.parametrize("how", ["rtnetlink", "ip link", "netfilter"])
def test_network_change_in_machine_namespace(gateway, how):
    if how == "rtnetlink":
        err = D.rtnetlink_set_link_up("lo")
        assert err == errno.EPERM, f"RTM_NEWLINK lo up: {'done' if err == 0 else os.strerror(err)}"
    elif how == "ip link":
        r = run(["ip", "link", "set", "lo", "up"])
        assert r.returncode != 0 and "not permitted" in (r.stderr + r.stdout).lower(), describe(r)
    else:
        err = D.netfilter_batch_begin()
        assert err == errno.EPERM, f"nfnetlink batch: {'sent' if err == 0 else os.strerror(err)}"
    assert_kept(gateway)


@door["network"]
@pytest.mark.parametrize("name", sorted(D.network_admin_acts()))
def test_network_admin_in_machine_namespace(gateway, name):
    """Whatever needs CAP_NET_ADMIN in the machine's network namespace: an
    interface ioctl (ifconfig) and a /sys/class/net file here."""
    err = D.network_admin_acts()[name]()
    assert err == errno.EPERM, f"{name}: {'done' if err == 0 else os.strerror(err)}, not refused"
    assert_kept(gateway)


def test_pass_network_own_namespace_and_reads():
    """lo down in a network namespace of its own; reading the machine's links."""
    r = run(["unshare", "-n", "sh", "-c", "ip link set lo up && ip link set lo down && ip link show lo"])
    assert r.returncode == 0 and "DOWN" in r.stdout, describe(r)
    r = run(["ip", "link", "show", "lo"])
    assert r.returncode == 0, describe(r)
    # The same CAP_NET_ADMIN acts in a namespace of its own.
    code = ("import sys; sys.path.insert(0, %r); import doorlib; "
            "errs = {n: a() for n, a in doorlib.network_admin_acts().items() if 'sys/class' not in n}; "
            "print(errs); assert not any(errs.values())" % os.path.dirname(D.__file__))
    r = run(["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", sys.executable, "-c", code])
    assert r.returncode == 0, describe(r)


def test_pass_list_sockets_of_the_machine():
    """ss, and whatever else lists sockets through sock_diag, works (the
    kernel's CAP_NET_ADMIN check for adding the sockets' marks is refused:
    they come without them)."""
    err, listed = D.tcp_dump()
    assert err == 0 and listed > 0, f"sock_diag dump: {os.strerror(err)}, {listed} sockets"
    r = run(["ss", "-tln"])
    assert r.returncode == 0 and str(D.GATEWAY_PORT) in r.stdout, describe(r)


# =============================================================================
# handoff: work left for a runner outside the session, in a spool the
# policy names (as the built-in at and cron spools are) or a job FIFO.
# =============================================================================

@door["path"]
def test_handoff_spool_entry(gateway):
    path = os.path.join(CFG["handoff_spool"], "crontabs", f"lg-{uuid.uuid4().hex[:8]}")
    with pytest.raises(PermissionError):
        with open(path, "w") as f:
            f.write("* * * * * root kill -TERM $(cat /run/hermes/gateway.pid)\n")
    assert not os.path.exists(path)
    assert_kept(gateway)


@door["path"]
def test_handoff_at_job(gateway, tmp_path):
    """`at now` with atd running outside the session: the job would run
    outside it, so the queue (the built-in hand-off spool) takes nothing."""
    ran = f"{CFG['at_ran']}-{uuid.uuid4().hex[:8]}"
    job = tmp_path / "job"
    job.write_text(f"touch {ran}\n")
    r = run(["at", "-f", str(job), "now"])
    assert r.returncode != 0, f"at took the job: {describe(r)}"
    time.sleep(2)  # long enough for atd to have run a queued job
    assert not os.path.exists(ran), "atd ran the member's job"
    assert_kept(gateway)


@door["control_fifo"]
def test_handoff_fifo_open_for_writing(gateway):
    with pytest.raises(PermissionError):
        os.close(os.open(CFG["handoff_fifo"], os.O_WRONLY | os.O_NONBLOCK))
    assert_kept(gateway)


# =============================================================================
# port: the gateway's listening port, learned from its socket, and a port
# the policy names that nothing listens on (as while the service restarts).
# =============================================================================

@door["port"]
@pytest.mark.parametrize("port, kind, family", [
    (D.GATEWAY_PORT, socket.SOCK_STREAM, socket.AF_INET),
    (D.POLICY_PORT, socket.SOCK_STREAM, socket.AF_INET),
    (D.POLICY_PORT, socket.SOCK_DGRAM, socket.AF_INET),
    (D.POLICY_PORT, socket.SOCK_STREAM, socket.AF_INET6),
], ids=["learned tcp", "policy tcp", "policy udp", "policy tcp6"])
def test_bind_protected_port(gateway, port, kind, family):
    err = D.bind_errno(port, kind, family)
    assert err == errno.EPERM, f"bind port {port}: {'bound' if err == 0 else os.strerror(err)}, not refused"
    assert_kept(gateway)


@door["port"]
@pytest.mark.every_lane
def test_bind_learned_port_across_s6_restart(gateway):
    """The port the gateway listens on stays its own while it restarts:
    asked to exit (as a crash would end it), it is down until s6 has
    started it again, and a member that binds the port in that gap would
    make the new gateway fail to listen and crash-loop."""
    with socket.create_connection(("127.0.0.1", D.GATEWAY_PORT), timeout=5) as c:
        c.sendall(b"exit\n")
    in_gap, bound, new = 0, False, None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        probe = socket.socket()
        nobody_listens = probe.connect_ex(("127.0.0.1", D.GATEWAY_PORT)) == errno.ECONNREFUSED
        probe.close()
        err = D.bind_errno(D.GATEWAY_PORT)
        if err == 0:
            bound = True
            break
        if nobody_listens:
            # The gap: s6 starts the gateway again at once (it ran for
            # more than a second), so it lasts as long as its start.
            in_gap += err == errno.EPERM
            time.sleep(0.005)
            continue
        pid = D.s6_pid()
        if pid not in (None, gateway.pid):
            new = pid
            break
        time.sleep(0.02)
    assert not bound, (f"a member bound port {D.GATEWAY_PORT} while the gateway restarted "
                       f"({in_gap} binds refused before)")
    assert new, f"the gateway did not come back listening on port {D.GATEWAY_PORT} within 30 s"
    assert in_gap, "the gateway restarted with no moment without a listener: the gap was not tried"
    back, why = D.wait_gateway(timeout=20)
    assert back and back.pid != gateway.pid, why


def test_pass_bind_other_port_and_own_namespace():
    assert D.bind_errno(D.POLICY_PORT + 1) == 0
    r = run(["unshare", "-n", sys.executable, "-c",
             "import socket; s = socket.socket(); s.bind(('127.0.0.1', %d)); print('bound')" % D.POLICY_PORT])
    assert r.returncode == 0 and "bound" in r.stdout, describe(r)


# =============================================================================
# tasks: a fork storm stops at the session's limit ([sessions] max_tasks),
# with EAGAIN, and the session can fork again once its children are gone.
# =============================================================================

@door["tasks"]
def test_fork_storm_stops_at_session_limit(gateway):
    forked, err = D.fork_storm()
    assert err == errno.EAGAIN and forked <= D.SESSION_MAX_TASKS, (
        f"{forked} children forked of {D.STORM_TASKS}, then "
        f"{os.strerror(err) if err else 'no failure'}; the session's limit is {D.SESSION_MAX_TASKS}")
    assert_kept(gateway)
    # The children are reaped: the session has room again.
    forked, err = D.fork_storm(8)
    assert (forked, err) == (8, 0), f"after the storm: {forked} forked, {os.strerror(err) if err else ''}"


# =============================================================================
# multiplexer: a tmux or screen server outside the session runs nothing a
# member sends it (send-keys, -X stuff); a server the member started is
# its own.
# =============================================================================

@door["multiplexer"]
@pytest.mark.parametrize("tool", ["tmux", "screen"])
def test_multiplexer_outside_the_session_takes_nothing(tool):
    marker = f"/run/doors/{tool}-ran-{uuid.uuid4().hex[:8]}"
    r = D.send_to_multiplexer(tool, f"touch {marker}")
    time.sleep(1.5)
    assert not os.path.exists(marker), f"the {tool} server outside the session ran what a member sent: {describe(r)}"
    assert r.returncode != 0, f"{tool} said it delivered: {describe(r)}"


def test_pass_own_multiplexer_server(tmp_path):
    sock = str(tmp_path / "own.sock")
    marker = tmp_path / "own-ran"
    r = run(["tmux", "-S", sock, "new-session", "-d", "-s", "own", "sh"])
    assert r.returncode == 0, describe(r)
    try:
        r = D.send_to_multiplexer("tmux", f"touch {marker}", tmux_socket=sock, session="own")
        assert r.returncode == 0, describe(r)
        assert D.wait_until(marker.exists, 10), "the member's own tmux server ran nothing"
    finally:
        run(["tmux", "-S", sock, "kill-server"])


# =============================================================================
# fs_space: a member cannot fill a filesystem a protected service keeps
# its files on past the policy's reserve ([sessions] fs_reserve): the
# watching service keeps its journal on a small tmpfs, in a protected
# tree; the member fills the rest of it, outside that tree, write by
# write or in one call larger than the filesystem.
# =============================================================================

@door["fs_space"]
@pytest.mark.parametrize("way", D.FILL_WAYS)
def test_member_leaves_the_reserve_of_the_services_filesystem(way):
    fill = os.path.join(CFG["smallfs"], f"fill-{uuid.uuid4().hex[:8]}")
    try:
        written, err = D.fill_filesystem(fill, way)
        st = os.statvfs(CFG["smallfs"])
        left = st.f_bavail * st.f_frsize
        reply = D.ask_watching_service()
    finally:
        os.unlink(fill)
    assert err == errno.ENOSPC, f"wrote {written} bytes, then {os.strerror(err)}"
    assert reply == "ok", (f"a member filled {written} bytes ({left} left); then the protected service could not "
                           f"write its journal: {reply}")


COPY_WAYS = ("cp (copy_file_range)", "shutil.copyfile (sendfile)", "splice from a pipe",
             "fallocate", "writev")


@pytest.mark.parametrize("how", COPY_WAYS)
def test_member_copies_onto_the_services_filesystem_while_it_has_room(how):
    """Calls that name more than they write (cp asks copy_file_range for
    8 EiB, shutil sendfile for at least 8 MiB, each chunk of 64 KiB on
    6.1) are not charged by what they name: a member copies onto the
    service's filesystem, round after round, while it is far from its
    reserve. The calls that are charged (fallocate, writev) are charged
    when made, and a file removed is given back only at the watcher's next
    measurement: the rounds stay within half the room above the reserve,
    for a watcher that a loaded machine leaves waiting for a CPU."""
    d = os.path.join(CFG["smallfs"], f"copies-{uuid.uuid4().hex[:8]}")
    os.mkdir(d)
    src, dst = os.path.join(d, "src"), os.path.join(d, "dst")
    block = b"\x05" * (2 << 20)
    try:
        with open(src, "wb") as f:
            f.write(block)
        for _ in range(8):
            if how.startswith("cp"):
                r = run(["cp", src, dst])
                assert r.returncode == 0, describe(r)
            elif how.startswith("shutil"):
                shutil.copyfile(src, dst)
            elif how.startswith("splice"):
                rp, wp = os.pipe()
                fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    left = len(block)
                    while left:
                        os.write(wp, block[:min(left, 65536)])
                        left -= os.splice(rp, fd, 1 << 30)
                finally:
                    for x in (rp, wp, fd):
                        os.close(x)
            elif how == "fallocate":
                fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    os.posix_fallocate(fd, 0, len(block))
                finally:
                    os.close(fd)
            else:
                fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    half = len(block) // 2
                    assert os.writev(fd, [block[:half], block[half:]]) == len(block)
                finally:
                    os.close(fd)
            assert os.path.getsize(dst) >= len(block)
            os.unlink(dst)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# =============================================================================
# user_counts: what the kernel counts per user (inotify instances and
# watches, fanotify groups and marks) keeps a reserve a member cannot take:
# the protected watching service, running as the same user (root), can
# still make new ones while a member holds all it was allowed.
# =============================================================================

@door["user_counts"]
@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.every_lane) if "32-bit" in k else k
                                  for k in D.USER_COUNTS])
def test_user_count_keeps_a_reserve_for_the_service(kind):
    limit = D.user_count_limit(kind)
    count, err, release = D.take_user_count(kind)
    try:
        reply = D.ask_watching_service()
    finally:
        release()
    assert err == D.USER_COUNTS[kind][1], (
        f"the member took {count} {kind} of {limit}, then {os.strerror(err) if err else 'ran out of inodes'}")
    assert reply == "ok", (
        f"a member took {count} {kind} (limit {limit}); then the protected service, "
        f"as the same user, could not make its own: {reply}")
    os.kill(int(open(CFG["watching_service"]).read().split()[0]), 0)


# =============================================================================
# oom: members are the OOM killer's first choice (oom_score_adj 1000, set
# by `run` before the session's command runs, by the watcher for automatic
# sessions); no member writes an OOM score. The in-session run lives in the
# doors' OOM arena, whose memory limit it shares with a protected service
# that holds much of it (tests/vm/doors/run).
# =============================================================================

JOURNAL = "/var/log/liveguard/events.jsonl"


def _journal_events():
    try:
        with open(JOURNAL) as f:
            lines = f.readlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


@door["oom"]
def test_oom_killer_takes_members_before_the_service():
    svc = int(open(CFG["oom_service"]).read().split()[0])
    before = D.proc_stat(svc)
    assert before, f"the memory service {svc} is not running"
    with open("/proc/self/oom_score_adj") as f:
        assert f.read().strip() == "1000", "the session's processes are not the OOM killer's first choice"
    # A root member cannot write itself (or its children) out of that order.
    with pytest.raises(PermissionError):
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-1000")
    # Four children, each filling 40% of what the service leaves: the
    # arena runs out, and the OOM killer chooses.
    room = CFG["oom_arena_max_mb"] - CFG["oom_service_mb"]
    killed, alive, hold = D.memory_hogs(4, room * 2 // 5)
    D.end_hogs(alive, hold)
    assert D.proc_stat(svc) == before, "the OOM killer took the protected service"
    assert killed, f"no child was OOM-killed ({len(alive)} of 4 filled their share): the arena did not run out"
    # The event names the member taken.
    def reported():
        return [e for e in _journal_events()
                if e.get("hook") == "oom" and e.get("verdict") == "killed" and e.get("target_pid") in killed]
    assert D.wait_until(lambda: reported(), timeout=15), f"no oom event names a killed child {killed}"


def test_pass_oom_score_inherited_by_children():
    """Ranked at the session's start, and every child inherits it."""
    r = D.run(["cat", "/proc/self/oom_score_adj"])
    assert r.returncode == 0 and r.stdout.strip() == "1000", D.describe(r)


# =============================================================================
# terminal: a protected service that runs in a terminal (tty-service, a
# session leader with a pty as its controlling terminal).
# =============================================================================

def _tty_service():
    pid = int(open(CFG["tty_service"]).read().split()[0])
    return pid, open(CFG["tty_service_tty"]).read().strip()


@door["terminal"]
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.every_lane) if "32-bit" in n else n
                                  for n in sorted(D.terminal_acts())])
def test_terminal_of_protected_process(name):
    pid, tty = _tty_service()
    fd = D.open_terminal(tty)
    try:
        err = D.terminal_acts()[name](fd, pid)
    finally:
        os.close(fd)
    assert err == errno.EPERM, f"{name} on {tty}: {'done' if err == 0 else os.strerror(err)}, not refused"
    os.kill(pid, 0)


def test_pass_terminal_of_its_own():
    """A pty the member made: every act works (TIOCSPGRP: not its
    controlling terminal, so the kernel says ENOTTY)."""
    master, slave = os.openpty()
    try:
        for name, act in D.terminal_acts().items():
            err = act(slave, os.getpgrp())
            assert err == (errno.ENOTTY if name == "TIOCSPGRP" else 0), f"{name}: {os.strerror(err)}"
    finally:
        os.close(master)
        os.close(slave)


# =============================================================================
# proc_file, every file: each writable file of the gateway's /proc/<pid>/
# and /proc/<pid>/task/<tid>/ (and their attr/ directories), as the running
# kernel lists them.
# =============================================================================

@door["proc_file"]
def test_proc_every_writable_file(gateway):
    files = D.writable_proc_files(gateway.pid)
    assert len(files) >= 10, f"only {files} found writable under /proc/{gateway.pid}"
    opened, other = [], []
    for path in files:
        try:
            os.close(os.open(path, os.O_WRONLY))
            opened.append(path)
        except PermissionError:
            pass
        except OSError as e:
            other.append(f"{path}: {e.strerror}")
    assert not opened and not other, \
        f"of {len(files)} writable files, opened for writing: {opened}; failed otherwise: {other}"
    assert_kept(gateway)


def test_pass_own_proc_files():
    """A member's own /proc/self files stay its own."""
    with open("/proc/self/comm") as f:
        comm = f.read().strip()
    with open("/proc/self/comm", "w") as f:
        f.write("lg-own-comm")
    with open("/proc/self/comm", "w") as f:
        f.write(comm)
    with open("/proc/self/timerslack_ns", "w") as f:
        f.write("50000")


# =============================================================================
# path, locks: a lock or lease on the gateway's PID file (a protected file)
# blocks the gateway when it takes its own; a read-only descriptor is
# enough, so the member here runs as nobody.
# =============================================================================

@door["path"]
@pytest.mark.parametrize("how", ["flock", "fcntl", "ofd", "lease"])
def test_lock_protected_file(gateway, how):
    """flock, fcntl and OFD locks as nobody through a read-only descriptor;
    a lease (the file's owner or root may take one) as root."""
    err = D.lock_as_nobody(CFG["pidfile"], how)
    assert err == errno.EPERM, f"{how} on {CFG['pidfile']}: {'locked' if err == 0 else os.strerror(err)}"
    assert_kept(gateway)


def test_pass_lock_own_file():
    import tempfile
    fd, path = tempfile.mkstemp(dir="/tmp", prefix="lg-own-lock.")
    os.close(fd)
    try:
        os.chmod(path, 0o644)
        for how in ("flock", "fcntl", "ofd", "lease"):
            err = D.lock_as_nobody(path, how)
            assert err == 0, f"{how} on a file of the test's own: {os.strerror(err)}"
    finally:
        os.unlink(path)


# =============================================================================
# bpf: liveguard's maps, programs and links.
# =============================================================================

def link_info(prog="lg_task_kill"):
    info = D.links().get(prog)
    assert info and info.get("link_id"), f"no recorded link for {prog} in {CFG['links']}"
    return info


@door["bpf"]
@pytest.mark.parametrize("name", ["lg_protected", "lg_sessions", "lg_settings"])
def test_bpf_map_fd_for_writing(name):
    with pytest.raises(PermissionError):
        fd = D.bpf_obj_get(os.path.join(PIN_DIR, name))
        os.close(fd)


@door["bpf"]
def test_bpf_prog_fd_by_id():
    with pytest.raises(PermissionError):
        fd = D.bpf_get_fd_by_id(D.BPF_PROG_GET_FD_BY_ID, link_info()["prog_id"])
        os.close(fd)


@door["bpf"]
def test_bpf_link_fd_by_id():
    with pytest.raises(PermissionError):
        fd = D.bpf_get_fd_by_id(D.BPF_LINK_GET_FD_BY_ID, link_info()["link_id"])
        os.close(fd)


@door["bpf"]
def test_bpf_link_detach_pinned():
    """BPF_LINK_DETACH on the pinned link: refused with EPERM (without the
    door, an LSM link answers EOPNOTSUPP, which is not a refusal)."""
    with pytest.raises(PermissionError):
        fd = D.bpf_obj_get(os.path.join(PIN_DIR, "link_lg_task_kill"))
        try:
            D.bpf_link_detach(fd)
        finally:
            os.close(fd)


@door["bpf"]
@pytest.mark.parametrize("how", ["id", "pinned"])
def test_bpftool_link_detach(how):
    ref = [str(link_info()["link_id"])] if how == "id" else [os.path.join(PIN_DIR, "link_lg_task_kill")]
    r = run(["bpftool", "link", "detach", how, *ref])
    assert r.returncode != 0 and "Operation not permitted" in r.stdout + r.stderr, (r.returncode, r.stdout, r.stderr)
    assert os.path.exists(os.path.join(PIN_DIR, "link_lg_task_kill"))


@door["bpf"]
def test_lg_unprotect(gateway):
    r = D.lg("unprotect", "--pid", str(gateway.pid))
    assert r.returncode != 0, f"unprotect worked: {r.stdout}"
    assert D.still_guarded(gateway.pid), "the gateway is no longer protected"


@door["bpf"]
def test_lg_untag(gateway):
    sess = D.session_cgroup()
    r = D.lg("untag", sess)
    if r.returncode == 0:
        D.lg("tag", sess)  # put it back for the tests that follow
    assert r.returncode != 0, f"untag worked: {r.stdout}"
    assert D.still_guarded(gateway.pid), "no longer a session member"


@door["bpf"]
@door["pins"]
@door["task_kill"]
def test_lg_unload(gateway):
    """`unload` stops the watcher (a signal), removes the pins (unlink) and
    opens the maps (bpf): any of the three doors stops it."""
    pins = sorted(os.listdir(PIN_DIR))
    w = D.watcher_pid()
    r = D.lg("unload")
    assert r.returncode != 0, f"unload worked: {r.stdout}"
    assert sorted(os.listdir(PIN_DIR)) == pins, "pins changed"
    assert w and D.proc_stat(w), "the watcher stopped"
    assert_kept(gateway, settle=0)


# =============================================================================
# pins: liveguard's bpffs directory, and bpffs itself. Last: a door that lets
# these through removes the guard for whatever runs after.
# =============================================================================

@door["pins"]
@pytest.mark.parametrize("how", ["symlink", "mkdir", "hard link"])
def test_pins_new_names(how):
    """Names made in the pin directory would keep links alive after `unload`."""
    path = os.path.join(PIN_DIR, "doors_" + how.replace(" ", "_"))
    try:
        with pytest.raises(PermissionError):
            if how == "symlink":
                os.symlink("link_lg_task_kill", path)
            elif how == "mkdir":
                os.mkdir(path)
            else:
                os.link(os.path.join(PIN_DIR, "link_lg_task_kill"), path)
    finally:
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        elif os.path.lexists(path):
            os.unlink(path)


@door["pins"]
def test_pins_create():
    path = os.path.join(PIN_DIR, "doors_probe")
    r = run(["bpftool", "map", "create", path, "type", "array", "key", "4", "value", "4",
             "entries", "1", "name", "doors_probe"])
    created = os.path.exists(path)
    if created:
        os.unlink(path)
    assert not created, "a new pin was created in the pin directory"
    assert r.returncode != 0 and "Operation not permitted" in r.stdout + r.stderr, (r.stdout, r.stderr)


@door["pins"]
def test_pins_rename_link():
    src = os.path.join(PIN_DIR, "link_lg_task_kill")
    dst = os.path.join(PIN_DIR, "link_doors_moved")
    try:
        os.rename(src, dst)
    except PermissionError:
        assert os.path.exists(src)
        return
    os.rename(dst, src)
    pytest.fail("a link pin was renamed")


@door["pins"]
def test_pins_rename_dir():
    dst = os.path.join(CFG["bpffs"], "liveguard-doors-moved")
    try:
        os.rename(PIN_DIR, dst)
    except PermissionError:
        assert os.path.isdir(PIN_DIR)
        return
    os.rename(dst, PIN_DIR)
    pytest.fail("the pin directory was renamed")


@door["pins"]
def test_pins_rmdir():
    with pytest.raises(PermissionError):
        os.rmdir(PIN_DIR)


@door["pins"]
def test_pins_rm_link():
    path = os.path.join(PIN_DIR, "link_lg_task_kill")
    r = run(["rm", "-f", path])
    assert os.path.exists(path), "rm removed the task_kill link pin"
    assert r.returncode != 0 and "Operation not permitted" in r.stderr, r.stderr


@door["pins"]
def test_pins_unlink_map():
    path = os.path.join(PIN_DIR, "lg_events")
    with pytest.raises(PermissionError):
        os.unlink(path)
    assert os.path.exists(path)


@door["pins"]
@pytest.mark.parametrize("how", ["tmpfs over the pin directory", "bind mount over bpffs"])
def test_pins_mount_over(tmp_path, how):
    target = PIN_DIR if how.startswith("tmpfs") else CFG["bpffs"]
    try:
        if how.startswith("tmpfs"):
            D.mount("none", target, "tmpfs")
        else:
            D.mount(str(tmp_path), target, None, D.MS_BIND)
    except PermissionError:
        assert os.path.exists(os.path.join(PIN_DIR, "link_lg_task_kill"))
        return
    D.umount2(target)
    pytest.fail(f"mounted over {target}")


@door["pins"]
def test_pins_umount_bpffs(gateway):
    bpffs = CFG["bpffs"]
    with pytest.raises(PermissionError):
        D.umount2(bpffs, 0)
    assert D.is_mountpoint(bpffs)
    r = run(["umount", bpffs])
    assert r.returncode != 0, "umount(8) unmounted bpffs"
    assert D.is_mountpoint(bpffs) and os.path.exists(os.path.join(PIN_DIR, "link_lg_task_kill"))
    assert_kept(gateway, settle=0)


@door["path"]
@pytest.mark.parametrize("what", ["run script", "down file", "pid file", "pid file removed"])
def test_path_service_files(gateway, what):
    """What the next start runs (the s6 service directory is protected
    with its service) and the PID file the gateway's own tooling reads
    (`hermes gateway stop`, `--replace`): a test may read them, not
    change them."""
    run, down, pidfile = os.path.join(SLOT, "run"), os.path.join(SLOT, "down"), CFG["pidfile"]
    before = {p: open(p, "rb").read() for p in (run, pidfile)}
    try:
        if what == "run script":
            assert open_refused(run, os.O_WRONLY | os.O_APPEND), f"{run} opened for writing"
        elif what == "down file":
            assert open_refused(down, os.O_WRONLY | os.O_CREAT), f"{down} created"
        elif what == "pid file":
            assert open_refused(pidfile, os.O_WRONLY | os.O_TRUNC), f"{pidfile} opened for writing"
        else:
            with pytest.raises(PermissionError):
                os.unlink(pidfile)
    finally:
        if os.path.exists(down):
            os.unlink(down)
    assert {p: open(p, "rb").read() for p in (run, pidfile)} == before
    assert_kept(gateway)
