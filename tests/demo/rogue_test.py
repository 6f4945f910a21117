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
attempt("os.kill(pid, 0) (existence probe, allowed)", lambda: os.kill(pid, 0) or "allowed")
