"""A "test" that tries every usual way to stop the live gateway.

Run under `liveguard-bpf run`, each attempt should be refused by the kernel.
"""
import ctypes
import os
import signal
import subprocess
import sys

pidfile = sys.argv[1]


def gateway_pid():
    import json
    with open(pidfile) as f:
        return json.load(f)["pid"]


def attempt(label, fn):
    try:
        result = fn()
        print(f"  {label:<48} -> {result}")
    except OSError as e:
        print(f"  {label:<48} -> refused: {e.strerror}")


pid = gateway_pid()
libc = ctypes.CDLL(None, use_errno=True)


def via_ctypes():
    if libc.kill(pid, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return "sent"


def via_shell(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    msg = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    return f"exit {r.returncode}: {msg}" if r.returncode else "sent"


def via_file(path, text):
    with open(path, "w") as f:
        f.write(text)
    return "written"


def via_ptrace():
    PTRACE_ATTACH, PTRACE_DETACH = 16, 17
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    return "attached"


def via_sigio():
    import fcntl
    import socket
    import time
    a, b = socket.socketpair()
    fcntl.fcntl(a, fcntl.F_SETOWN, pid)
    fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)
    b.send(b"x")
    time.sleep(0.2)
    with open(f"/proc/{pid}/stat") as f:
        alive = f.read().split()[2] != "Z"
    return "not delivered: gateway alive" if alive else "SIGIO delivered"


def gateway_cgroup():
    with open(f"/proc/{pid}/cgroup") as f:
        return "/sys/fs/cgroup" + f.read().strip().split("::", 1)[1]


def via_pidfd():
    fd = os.pidfd_open(pid)
    try:
        signal.pidfd_send_signal(fd, signal.SIGTERM)
    finally:
        os.close(fd)
    return "sent"


print(f"rogue test: trying to stop the gateway (pid {pid}) from inside a session")
attempt("os.kill(pid, SIGTERM)", lambda: os.kill(pid, signal.SIGTERM) or "sent")
attempt("os.killpg(pgid, SIGTERM)", lambda: os.killpg(os.getpgid(pid), signal.SIGTERM) or "sent")
attempt("ctypes: libc.kill(pid, SIGKILL)", via_ctypes)
attempt("pidfd_send_signal(SIGTERM)", via_pidfd)
attempt("subprocess: kill -9 PID", lambda: via_shell(f"kill -9 {pid}"))
attempt("shell: pkill -x hermes-gateway", lambda: via_shell("pkill -x hermes-gateway"))
attempt("shell: ps | grep | xargs kill",
        lambda: via_shell("ps -eo pid,comm | grep '[h]ermes-gateway' | awk '{print $1}' | xargs kill"))
attempt("subprocess: systemctl restart hermes-gateway",
        lambda: via_shell("systemctl restart hermes-gateway"))
attempt("sh -c 'env /usr/bin/systemctl --user stop ...'",
        lambda: via_shell("sh -c 'env /usr/bin/systemctl --user stop hermes-gateway.service'"))
attempt("echo 1 > <gateway's cgroup>/cgroup.kill",
        lambda: via_file(gateway_cgroup() + "/cgroup.kill", "1"))
attempt("echo 1000 > /proc/PID/oom_score_adj",
        lambda: via_file(f"/proc/{pid}/oom_score_adj", "1000"))
attempt("ptrace(PTRACE_ATTACH, PID)", via_ptrace)
attempt("F_SETOWN PID + O_ASYNC, then I/O (SIGIO)", via_sigio)
attempt("leave the session (write own pid to root cgroup)",
        lambda: via_file("/sys/fs/cgroup/cgroup.procs", str(os.getpid())))
if len(sys.argv) > 2:
    attempt("liveguard-bpf unload (switch the guard off)", lambda: via_shell(f"{sys.argv[2]} unload"))
attempt("os.kill(pid, 0) (existence probe, allowed)", lambda: os.kill(pid, 0) or "allowed")
attempt("systemctl status hermes-gateway (read-only, allowed)",
        lambda: "ran (exit %d)" % subprocess.run(["systemctl", "status", "hermes-gateway"],
                                                 capture_output=True).returncode)
