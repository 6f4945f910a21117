"""Helpers shared by the door tests: where things are, the stand-in gateway,
how a refusal looks, and the raw system calls the tests make.

Paths come from the config the runner (tests/vm/doors/run) writes to
$DOORS_CONFIG (default /run/doors/config.json); the defaults below are the
same paths, so the tests can be collected without it.
"""
import asyncio
import ctypes
import errno
import fcntl
import json
import os
import pty
import re
import shlex
import signal
import socket
import stat
import struct
import subprocess
import tempfile
import termios
import time
from typing import NamedTuple, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

# Door name -> the BPF programs whose pinned links implement it.
DOORS = {
    "task_kill": ["lg_task_kill"],
    "exec": ["lg_bprm_check", "lg_exec_argv_entry", "lg_execveat_argv_entry"],
    "control_fifo": ["lg_file_open", "lg_file_permission", "lg_file_receive", "lg_inode_rename",
                     "lg_inode_unlink", "lg_inode_link"],
    "cgroup_file": ["lg_file_open", "lg_file_permission", "lg_file_receive"],
    "proc_file": ["lg_file_open", "lg_file_permission", "lg_file_receive"],
    "ptrace": ["lg_ptrace", "lg_capable"],
    "sigio": ["lg_sigio", "lg_set_fowner", "lg_file_fcntl", "lg_file_ioctl", "lg_file_ioctl_compat"],
    "service_socket": ["lg_unix_connect"],
    "bpf": ["lg_bpf", "lg_bpf_map", "lg_bpf_prog"],
    "pins": ["lg_inode_unlink", "lg_inode_rmdir", "lg_inode_rename", "lg_inode_create",
             "lg_inode_link", "lg_inode_symlink", "lg_inode_mkdir", "lg_inode_mknod",
             "lg_sb_umount", "lg_sb_mount", "lg_move_mount"],
    "limits": ["lg_setrlimit", "lg_setnice", "lg_setscheduler", "lg_setioprio"],
    "clone_into_cgroup": ["lg_task_alloc"],
    "mount": ["lg_sb_mount", "lg_sb_umount", "lg_move_mount", "lg_sb_pivotroot", "lg_fs_param"],
    "sysctl": ["lg_file_open", "lg_file_permission", "lg_file_receive"],
    "bpf_load": ["lg_bpf"],
    "perf_event": ["lg_perf_event_alloc"],
    "fanotify": ["lg_path_notify"],
    "realtime": ["lg_setscheduler"],
    "hostname": ["lg_capable"],
    "swap": ["lg_capable"],
    "reboot": ["lg_capable"],
    "module": ["lg_capable"],
    "clock": ["lg_capable"],
    "raw_io": ["lg_capable"],
    "power": ["lg_file_open", "lg_file_permission", "lg_file_receive"],
    "securityfs": ["lg_file_open", "lg_file_permission", "lg_file_receive"],
    "network": ["lg_netlink_send", "lg_capable"],
    "terminal": ["lg_file_ioctl", "lg_file_ioctl_compat"],
    "port": ["lg_socket_bind"],
    "tasks": ["lg_task_alloc"],
    "oom": ["lg_file_open", "lg_file_permission", "lg_file_receive", "lg_oom_victim"],
    "user_counts": ["lg_file_alloc", "lg_path_notify"],
    "multiplexer": ["lg_unix_connect"],
    "fs_space": ["lg_file_permission"],
    "service_bus": ["lg_socket_sendmsg"],
    "mapped": ["lg_file_open", "lg_file_permission", "lg_file_receive", "lg_inode_setattr", "lg_file_lock",
               "lg_mmap_file", "lg_file_mprotect"],
    # Last: its control run lets a test rewrite the gateway's PID file and
    # run script, which a later reload would find stale.
    "path": ["lg_file_open", "lg_file_permission", "lg_file_receive", "lg_inode_create", "lg_inode_unlink",
             "lg_inode_rmdir", "lg_inode_link", "lg_inode_symlink", "lg_inode_mkdir", "lg_inode_mknod",
             "lg_inode_rename", "lg_inode_setattr", "lg_inode_setxattr", "lg_inode_removexattr",
             "lg_inode_set_acl", "lg_inode_remove_acl", "lg_file_lock", "lg_mmap_file", "lg_file_mprotect"],
}

_DEFAULTS = {
    "lg": os.environ.get("LG_BIN") or os.path.join(REPO, "build", "liveguard-bpf"),
    "scan": "/run/service",
    "slot": "/run/service/gateway-default",
    "other_slot": "/run/service/other-service",
    "hermes_home": "/run/hermes",
    "pidfile": "/run/hermes/gateway.pid",
    "scratch": "/run/hermes/gateway.scratch",
    "sigurg": "/run/hermes/gateway.sigurg",
    "cgroup_mount": "/sys/fs/cgroup",
    "services_cg": "/sys/fs/cgroup/services",
    "gateway_cg": "/sys/fs/cgroup/services/gateway",
    "svscan_cg": "/sys/fs/cgroup/services/svscan",
    "elsewhere_cg": "/sys/fs/cgroup/doors-elsewhere",
    "links": "/run/doors/links.json",
    "status": "/run/doors/status.json",
    "sockets": ["/run/systemd/private", "/run/user/0/systemd/private"],
    "bus_sockets": ["/run/dbus/system_bus_socket", "/run/user/0/bus"],
    "at_ran": "/run/doors/at-ran",
    "mapped_db": "/run/doors/mapped/db",
    "mapped_plugin": "/run/doors/mapped/plugin.so",
    "unmapped_copy": "/run/doors/mapped/db.copy",
    "pin_dir": "/sys/fs/bpf/liveguard",
    "bpffs": "/sys/fs/bpf",
    "watcher_pidfile": "/run/liveguard/watcher.pid",
}


def _load_config():
    cfg = dict(_DEFAULTS)
    path = os.environ.get("DOORS_CONFIG", "/run/doors/config.json")
    try:
        with open(path) as f:
            cfg.update(json.load(f))
    except (OSError, ValueError):
        pass
    if os.environ.get("LG_BIN"):
        cfg["lg"] = os.environ["LG_BIN"]
    return cfg


CFG = _load_config()
LG = CFG["lg"]
SCAN = CFG["scan"]
SLOT = CFG["slot"]
OTHER_SLOT = CFG["other_slot"]
PIDFILE = CFG["pidfile"]
PIN_DIR = CFG["pin_dir"]

# --- processes ---------------------------------------------------------------


class ProcStat(NamedTuple):
    state: str
    ppid: int
    pgrp: int
    start_time: int


def proc_stat(pid) -> Optional[ProcStat]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = stat[stat.rindex(")") + 2:].split()
    # rest[0] is field 3 (state).
    return ProcStat(rest[0], int(rest[1]), int(rest[2]), int(rest[22 - 3]))


def cgroup_of(pid="self") -> Optional[str]:
    """The cgroup v2 directory of a process."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    rel = line[3:].strip()
                    return os.path.normpath(CFG["cgroup_mount"] + rel)
    except OSError:
        return None
    return None


def cgroup_frozen(path) -> bool:
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            return any(line.split() == ["frozen", "1"] for line in f)
    except OSError:
        return False


def in_session() -> bool:
    return session_cgroup() is not None


def session_cgroup() -> Optional[str]:
    """The session cgroup (`liveguard-bpf run` creates <parent>/run-<pid>:
    the OOM arena in the in-session run, <mount>/liveguard in the control
    run)."""
    cg = cgroup_of()
    if not cg:
        return None
    m = re.match(r"(.*/run-\d+(?:-\d+)?)(?:/|$)", cg)
    return m.group(1) if m else None


def watcher_pid() -> Optional[int]:
    try:
        with open(CFG["watcher_pidfile"]) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def run(argv, timeout=30, **kw):
    """subprocess.run with text output captured."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(argv, timeout=timeout, **kw)


def lg(*args, timeout=60):
    return run([LG, *args], timeout=timeout)


# --- the liveguard status, as the runner publishes it ------------------------


def status_json(max_age=3.0, live=False):
    """`liveguard-bpf status --json`. A session member may be refused the
    maps it reads, so the runner's restorer loop publishes it in a file every
    ~0.3 s; that copy is used while it is fresh (unless live), else the
    command is run."""
    path = CFG["status"]
    member = not live and in_session()
    if member:
        # The command would be refused (and logged as a bpf refusal): wait
        # for the restorer instead, which can lag under emulation.
        max_age = max(max_age, 15.0)
    try:
        if not live and time.time() - os.stat(path).st_mtime <= max_age:
            with open(path) as f:
                return json.load(f)
    except (OSError, ValueError):
        pass
    if member:
        return None
    try:
        r = lg("status", "--json", timeout=20)
        if r.returncode == 0:
            return json.loads(r.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return None


def listed_protected(pid, status=None) -> bool:
    status = status if status is not None else status_json()
    if not status or not status.get("loaded"):
        return False
    return any(p.get("pid") == pid and p.get("alive", True) for p in status.get("protected", []))


def wait_until(pred, timeout=10.0, step=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            return v
        time.sleep(step)


# --- the stand-in gateway ----------------------------------------------------


class Gateway(NamedTuple):
    pid: int
    start_time: int
    scratch_address: int
    scratch_size: int
    cgroup: str

    @property
    def pgid(self):
        st = proc_stat(self.pid)
        return st.pgrp if st else self.pid


def s6_pid(slot=SLOT) -> Optional[int]:
    try:
        r = run(["s6-svstat", "-o", "pid", slot], timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        pid = int(r.stdout.strip())
    except ValueError:
        return None
    return pid if pid > 0 else None


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_gateway(require_protected=True, live=False):
    """The gateway as s6 and its PID file agree on it, or (None, why)."""
    pid = s6_pid()
    if not pid:
        return None, "s6 reports the gateway down"
    rec = _read_json(PIDFILE)
    if not rec or rec.get("pid") != pid:
        return None, f"PID file {PIDFILE} does not name s6's pid {pid}: {rec}"
    st = proc_stat(pid)
    if not st or st.start_time != rec.get("start_time"):
        return None, f"start_time of {pid} does not match the PID file"
    if st.state in "ZXxTt":
        return None, f"gateway {pid} is in state {st.state}"
    scratch = _read_json(CFG["scratch"])
    if not scratch or scratch.get("pid") != pid:
        return None, "scratch file not written yet"
    cg = cgroup_of(pid) or ""
    if cgroup_frozen(cg):
        return None, f"gateway cgroup {cg} is frozen"
    if require_protected and not listed_protected(pid, status_json(live=live)):
        return None, f"gateway {pid} is not listed protected"
    return Gateway(pid, st.start_time, scratch["address"], scratch["size"], cg), ""


def wait_gateway(timeout=10.0, require_protected=True, live=False):
    why = ""
    deadline = time.monotonic() + timeout
    while True:
        gw, why = read_gateway(require_protected, live)
        if gw:
            return gw, ""
        if time.monotonic() >= deadline:
            return None, why
        time.sleep(0.1)


def kept(gw: Gateway):
    """Whether the gateway is still the same running process: (ok, why)."""
    st = proc_stat(gw.pid)
    if st is None:
        return False, f"gateway pid {gw.pid} is gone"
    if st.start_time != gw.start_time:
        return False, f"pid {gw.pid} is now another process (start_time changed)"
    if st.state in "ZXx":
        return False, f"gateway {gw.pid} is dead (state {st.state})"
    if st.state in "Tt":
        return False, f"gateway {gw.pid} is stopped (state {st.state})"
    cg = cgroup_of(gw.pid)
    if cg != gw.cgroup:
        return False, f"gateway {gw.pid} moved from {gw.cgroup} to {cg}"
    if cgroup_frozen(cg):
        return False, f"gateway cgroup {cg} is frozen"
    if s6_pid() not in (None, gw.pid):
        return False, f"s6 now supervises another pid ({s6_pid()})"
    return True, ""


def assert_kept(gw: Gateway, settle=0.3):
    """After a short settle: same pid, alive, same start_time, not stopped or frozen."""
    time.sleep(settle)
    ok, why = kept(gw)
    assert ok, why


def sigurg_count(pid) -> int:
    try:
        with open(CFG["sigurg"]) as f:
            return sum(1 for line in f if line.strip() == str(pid))
    except FileNotFoundError:
        return 0


def still_guarded(pid) -> bool:
    """Whether a signal from here to pid is refused: pid is protected and
    this process is a session member. Probes with SIGCONT, which does
    nothing to a running process when it gets through."""
    try:
        os.kill(pid, signal.SIGCONT)
    except PermissionError:
        return True
    return False


# --- commands and how an exec refusal looks ----------------------------------


class Result(NamedTuple):
    rc: Optional[int]
    out: str

    def __str__(self):
        return f"exit {self.rc}: {self.out.strip()[-600:]!r}"


DASH_REFUSAL = re.compile(r"^(/bin/|/usr/bin/)?(sh|dash): \d+: [^\n]*: Operation not permitted$", re.M)


def exec_refused(res) -> bool:
    """An exec refused with EPERM, as each way of running a command shows it:
    PermissionError (errno 1) from a direct exec; exit 126 with "Operation not
    permitted" from a wrapper (bash, env, nohup, timeout, setsid, xargs); exit 2
    with dash's "sh: N: CMD: Operation not permitted"; sudo's "unable to
    execute ...: Operation not permitted" with exit 1; from pty.spawn's child,
    the marker written by via()."""
    if isinstance(res, BaseException):
        return isinstance(res, PermissionError) and res.errno == errno.EPERM
    out = res.out or ""
    if "Operation not permitted" not in out and "EXEC-FAILED errno=1" not in out:
        return False
    if res.rc == 126:
        return True
    if res.rc == 2 and DASH_REFUSAL.search(out):
        return True
    if res.rc == 1 and re.search(r"unable to execute [^\n]*: Operation not permitted", out):
        return True
    if res.rc == 99 and "EXEC-FAILED errno=1" in out:
        return True
    return False


def describe(res) -> str:
    if isinstance(res, BaseException):
        return f"{type(res).__name__}: {res}"
    return str(res)


PRIMITIVES = [
    "subprocess.run",
    "subprocess.Popen",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "os.system",
    "os.popen",
    "pty.spawn",
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
]


def via(primitive, cmd, cwd=None, timeout=30):
    """Runs cmd (an argv list, or a shell string for the shell primitives)
    through one of the primitives a userspace guard would wrap. Returns a
    Result, or the OSError the primitive raised."""
    argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    shell_cmd = cmd if isinstance(cmd, str) else shlex.join(cmd)
    old_cwd = None
    try:
        if primitive == "subprocess.run":
            r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout,
                               stdin=subprocess.DEVNULL)
            return Result(r.returncode, r.stdout + r.stderr)
        if primitive == "subprocess.Popen":
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 cwd=cwd, stdin=subprocess.DEVNULL)
            out, _ = p.communicate(timeout=timeout)
            return Result(p.returncode, out)
        if primitive in ("subprocess.call", "subprocess.check_call"):
            with tempfile.TemporaryFile("w+") as f:
                try:
                    fn = subprocess.call if primitive == "subprocess.call" else subprocess.check_call
                    rc = fn(argv, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, timeout=timeout,
                            stdin=subprocess.DEVNULL)
                except subprocess.CalledProcessError as e:
                    rc = e.returncode
                f.seek(0)
                return Result(rc, f.read())
        if primitive == "subprocess.check_output":
            try:
                out = subprocess.check_output(argv, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                              timeout=timeout, stdin=subprocess.DEVNULL)
                return Result(0, out)
            except subprocess.CalledProcessError as e:
                return Result(e.returncode, e.output)
        if primitive == "subprocess.getoutput":
            # getoutput gives no status: the shell reports it after the output.
            if cwd:
                shell_cmd = f"cd {shlex.quote(cwd)} && {shell_cmd}"
            out = subprocess.getoutput(f"{shell_cmd}; echo DOORS_RC=$?")
            m = re.search(r"DOORS_RC=(\d+)\s*$", out)
            return Result(int(m.group(1)) if m else None, out)
        if primitive == "subprocess.getstatusoutput":
            if cwd:
                shell_cmd = f"cd {shlex.quote(cwd)} && {shell_cmd}"
            rc, out = subprocess.getstatusoutput(shell_cmd)
            return Result(rc, out)
        if primitive in ("os.system", "os.popen"):
            if cwd:
                old_cwd = os.getcwd()
                os.chdir(cwd)
            if primitive == "os.system":
                with tempfile.NamedTemporaryFile("r") as f:
                    st = os.system(f"exec >{shlex.quote(f.name)} 2>&1 </dev/null; {shell_cmd}")
                    return Result(os.waitstatus_to_exitcode(st), f.read())
            p = os.popen(f"exec 2>&1 </dev/null; {shell_cmd}")
            out = p.read()
            st = p.close()
            return Result(0 if st is None else os.waitstatus_to_exitcode(st), out)
        if primitive == "pty.spawn":
            return _pty_spawn(argv, cwd)
        if primitive == "asyncio.create_subprocess_exec":
            return asyncio.run(_async_exec(argv, cwd, timeout))
        if primitive == "asyncio.create_subprocess_shell":
            return asyncio.run(_async_shell(shell_cmd, cwd, timeout))
        raise ValueError(f"unknown primitive {primitive}")
    except OSError as e:
        return e
    finally:
        if old_cwd:
            os.chdir(old_cwd)


def _pty_spawn(argv, cwd):
    chunks = []

    def reader(fd):
        # What this returns goes to our stdout (captured by pytest); an
        # empty return would mean EOF to pty.spawn, which would then close
        # the master and hang up the child before it exits.
        data = os.read(fd, 4096)
        chunks.append(data)
        return data

    me = os.getpid()
    old_cwd = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        status = pty.spawn(argv, master_read=reader)
    except BaseException as e:
        if os.getpid() != me:
            # pty.spawn's child: its exec failed and the exception is
            # unwinding through the test in a forked copy of pytest. Report
            # and leave at once.
            os.write(2, f"EXEC-FAILED errno={getattr(e, 'errno', None)}: {e}\n".encode())
            os._exit(99)
        raise
    finally:
        if os.getpid() == me:
            os.chdir(old_cwd)
    return Result(os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace"))


async def _async_exec(argv, cwd, timeout):
    p = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                             stderr=asyncio.subprocess.STDOUT,
                                             stdin=asyncio.subprocess.DEVNULL, cwd=cwd)
    out, _ = await asyncio.wait_for(p.communicate(), timeout)
    return Result(p.returncode, out.decode(errors="replace"))


async def _async_shell(cmd, cwd, timeout):
    p = await asyncio.create_subprocess_shell(cmd, stdout=asyncio.subprocess.PIPE,
                                              stderr=asyncio.subprocess.STDOUT,
                                              stdin=asyncio.subprocess.DEVNULL, cwd=cwd)
    out, _ = await asyncio.wait_for(p.communicate(), timeout)
    return Result(p.returncode, out.decode(errors="replace"))


# --- raw system calls --------------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)

PTRACE_ATTACH = 16
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
__WALL = 0x40000000

libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long


def _check(ret):
    if ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret


def ptrace_attach(pid, seize=False):
    """PTRACE_ATTACH (or PTRACE_SEIZE) pid; raises OSError when refused. On
    success the tracee is stopped and detached again before returning."""
    req = PTRACE_SEIZE if seize else PTRACE_ATTACH
    _check(libc.ptrace(req, pid, None, None))
    try:
        if seize:
            libc.ptrace(PTRACE_INTERRUPT, pid, None, None)
        try:
            os.waitpid(pid, __WALL)
        except ChildProcessError:
            pass
    finally:
        libc.ptrace(PTRACE_DETACH, pid, None, None)


PROT_READ, PROT_WRITE, MAP_SHARED = 1, 2, 1
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def map_shared(fd, length, writable, then_writable=False):
    """Maps length bytes of fd shared (for writing, or read-only and then
    made writable with mprotect) and unmaps them again without touching
    them; raises OSError where either is refused."""
    addr = libc.mmap(None, length, PROT_READ | (PROT_WRITE if writable else 0), MAP_SHARED, fd, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    try:
        if then_writable:
            _check(libc.mprotect(addr, length, PROT_READ | PROT_WRITE))
    finally:
        libc.munmap(addr, length)


class iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


libc.process_vm_writev.restype = ctypes.c_ssize_t
libc.process_vm_readv.restype = ctypes.c_ssize_t
_PVM_ARGS = [ctypes.c_int, ctypes.POINTER(iovec), ctypes.c_ulong, ctypes.POINTER(iovec),
             ctypes.c_ulong, ctypes.c_ulong]
libc.process_vm_writev.argtypes = _PVM_ARGS
libc.process_vm_readv.argtypes = _PVM_ARGS


def process_vm_writev(pid, address, data: bytes):
    buf = ctypes.create_string_buffer(data, len(data))
    local = iovec(ctypes.cast(buf, ctypes.c_void_p), len(data))
    remote = iovec(address, len(data))
    return _check(libc.process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))


def process_vm_readv(pid, address, size):
    buf = ctypes.create_string_buffer(size)
    local = iovec(ctypes.cast(buf, ctypes.c_void_p), size)
    remote = iovec(address, size)
    n = _check(libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
    return buf.raw[:n]


# The calls made by number, on the machine the suite runs on (x86-64 or
# arm64); numbers from 424 on are the same everywhere. arm64 has no I/O
# port calls: raw I/O is /dev/mem and /dev/port there.
MACHINE = os.uname().machine
_NR = {
    "x86_64": {"bpf": 321, "perf_event_open": 298, "fanotify_init": 300, "fanotify_mark": 301,
               "iopl": 172, "ioperm": 173, "reboot": 169, "delete_module": 176, "clock_settime": 227,
               "kexec_load": 246, "finit_module": 313, "swapon": 167, "swapoff": 168,
               "sethostname": 170, "setdomainname": 171, "ioprio_set": 251},
    "aarch64": {"bpf": 280, "perf_event_open": 241, "fanotify_init": 262, "fanotify_mark": 263,
                "reboot": 142, "delete_module": 106, "clock_settime": 112, "kexec_load": 104,
                "finit_module": 273, "swapon": 224, "swapoff": 225, "sethostname": 161,
                "setdomainname": 162, "ioprio_set": 30},
}[MACHINE]
# Calls made through the 32-bit ABI from this 64-bit process (int $0x80):
# x86-64 only; an AArch32 call needs a 32-bit program.
HAS_SYSCALL32 = MACHINE == "x86_64"

SYS_bpf = _NR["bpf"]
SYS_pidfd_getfd = 438
BPF_OBJ_GET = 7
BPF_PROG_GET_FD_BY_ID = 13
BPF_MAP_GET_FD_BY_ID = 14
BPF_LINK_GET_FD_BY_ID = 30
BPF_LINK_DETACH = 34
BPF_F_RDONLY = 1 << 3


def bpf(cmd, attr: bytes):
    buf = ctypes.create_string_buffer(attr, 128)
    return _check(libc.syscall(ctypes.c_long(SYS_bpf), ctypes.c_int(cmd), buf, ctypes.c_uint(128)))


def bpf_obj_get(path, flags=0):
    """A file descriptor for a pinned object (flags 0: read-write)."""
    p = ctypes.create_string_buffer(path.encode())
    attr = ctypes.c_uint64(ctypes.addressof(p)).value.to_bytes(8, "little")
    attr += (0).to_bytes(4, "little") + flags.to_bytes(4, "little")
    return bpf(BPF_OBJ_GET, attr)


def bpf_get_fd_by_id(cmd, obj_id, open_flags=0):
    attr = obj_id.to_bytes(4, "little") + (0).to_bytes(4, "little") + open_flags.to_bytes(4, "little")
    return bpf(cmd, attr)


def bpf_link_detach(fd):
    return bpf(BPF_LINK_DETACH, fd.to_bytes(4, "little"))


def pidfd_getfd(pid, targetfd):
    pidfd = os.pidfd_open(pid)
    try:
        return _check(libc.syscall(ctypes.c_long(SYS_pidfd_getfd), ctypes.c_int(pidfd),
                                   ctypes.c_int(targetfd), ctypes.c_uint(0)))
    finally:
        os.close(pidfd)


SYS_clone3 = 435
CLONE_INTO_CGROUP = 0x200000000


def clone3_into(cgroup_dir):
    """clone3(CLONE_INTO_CGROUP) into cgroup_dir; the child exits at once.
    Raises OSError when refused."""
    cgfd = os.open(cgroup_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        args = struct.pack("11Q", CLONE_INTO_CGROUP, 0, 0, 0, signal.SIGCHLD, 0, 0, 0, 0, 0, cgfd)
        buf = ctypes.create_string_buffer(args, len(args))
        pid = _check(libc.syscall(ctypes.c_long(SYS_clone3), buf, ctypes.c_size_t(len(args))))
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    finally:
        os.close(cgfd)


def umount2(path, flags=0):
    return _check(libc.umount2(path.encode(), ctypes.c_int(flags)))


MS_BIND = 4096
MS_RDONLY = 1
MS_REMOUNT = 32
SYS_fsconfig = 431
SYS_fspick = 433
FSCONFIG_SET_FLAG = 0
FSCONFIG_SET_STRING = 1


def fspick(path):
    return _check(libc.syscall(ctypes.c_long(SYS_fspick), ctypes.c_int(-100), ctypes.c_char_p(path.encode()),
                               ctypes.c_uint(0)))


def fsconfig_set_string(fd, key, value):
    return _check(libc.syscall(ctypes.c_long(SYS_fsconfig), ctypes.c_int(fd), ctypes.c_uint(FSCONFIG_SET_STRING),
                               ctypes.c_char_p(key.encode()), ctypes.c_char_p(value.encode()), ctypes.c_int(0)))


def mount(source, target, fstype, flags=0, data=None):
    return _check(libc.mount(source.encode(), target.encode(),
                             fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                             data.encode() if data else None))


BPF_PROG_LOAD = 5
BPF_PROG_TYPE_SOCKET_FILTER = 1


def bpf_prog_load_trivial():
    """Loads `r0 = 0; exit` as a socket filter; returns its fd."""
    insns = ctypes.create_string_buffer(bytes.fromhex("b700000000000000" "9500000000000000"), 16)
    license_ = ctypes.create_string_buffer(b"GPL")
    attr = (BPF_PROG_TYPE_SOCKET_FILTER.to_bytes(4, "little") + (2).to_bytes(4, "little") +
            ctypes.addressof(insns).to_bytes(8, "little") + ctypes.addressof(license_).to_bytes(8, "little"))
    return bpf(BPF_PROG_LOAD, attr)


SYS_perf_event_open = _NR["perf_event_open"]
PERF_TYPE_SOFTWARE = 1
PERF_COUNT_SW_DUMMY = 9
PERF_ATTR_REMOVE_ON_EXEC = 1 << 36
PERF_ATTR_SIGTRAP = 1 << 37


def perf_event_open_sigtrap(pid):
    """A dummy software event on pid that would send SIGTRAP on overflow;
    returns its fd."""
    attr = bytearray(128)
    struct.pack_into("IIQ", attr, 0, PERF_TYPE_SOFTWARE, len(attr), PERF_COUNT_SW_DUMMY)
    struct.pack_into("Q", attr, 16, 1)  # sample_period
    struct.pack_into("Q", attr, 40, PERF_ATTR_REMOVE_ON_EXEC | PERF_ATTR_SIGTRAP)
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    return _check(libc.syscall(ctypes.c_long(SYS_perf_event_open), buf, ctypes.c_int(pid),
                               ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0)))


SYS_fanotify_init = _NR["fanotify_init"]
SYS_fanotify_mark = _NR["fanotify_mark"]
FAN_CLASS_CONTENT = 0x4
FAN_MARK_ADD = 0x1
FAN_OPEN_PERM = 0x10000
AT_FDCWD = -100


def fanotify_open_perm_mark(path):
    """Places a FAN_OPEN_PERM mark on path and drops it at once (closing the
    group answers every pending event)."""
    fd = _check(libc.syscall(ctypes.c_long(SYS_fanotify_init), ctypes.c_uint(FAN_CLASS_CONTENT),
                             ctypes.c_uint(os.O_RDONLY)))
    try:
        _check(libc.syscall(ctypes.c_long(SYS_fanotify_mark), ctypes.c_int(fd), ctypes.c_uint(FAN_MARK_ADD),
                            ctypes.c_uint64(FAN_OPEN_PERM), ctypes.c_int(AT_FDCWD),
                            ctypes.c_char_p(path.encode())))
    finally:
        os.close(fd)


def links():
    """{program: {"link_id": N, "prog_id": M}} as the runner recorded them
    (a session member may be refused the bpf() calls that list them)."""
    return _read_json(CFG["links"]) or {}


def is_mountpoint(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


# --- the machine's acts, /proc files, locks (test_in_session and test_outside) ---

_libc = ctypes.CDLL(None, use_errno=True)
_SYS = dict(_NR, process_madvise=440)


def _syscall_errno(name, *args):
    """0 when the call worked, its errno when it failed."""
    ctypes.set_errno(0)
    rc = _libc.syscall(ctypes.c_long(_SYS[name]), *args)
    return 0 if rc != -1 else ctypes.get_errno()


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def machine_acts():
    """name -> a callable that does the act and returns its errno (0: done)."""
    def clock_settime_now():
        t = time.clock_gettime_ns(time.CLOCK_REALTIME)
        ts = _Timespec(t // 10**9, t % 10**9)
        return _syscall_errno("clock_settime", ctypes.c_int(0), ctypes.byref(ts))

    def open_errno(path, flags=os.O_RDWR):
        try:
            os.close(os.open(path, flags))
            return 0
        except OSError as e:
            return e.errno

    return {
        # LINUX_REBOOT_CMD_CAD_OFF: only Ctrl-Alt-Del changes, when it works.
        "reboot CAD_OFF": ("reboot", lambda: _syscall_errno(
            "reboot", ctypes.c_uint(0xfee1dead), ctypes.c_uint(672274793), ctypes.c_uint(0),
            ctypes.c_void_p(0))),
        # No segments: unloads a kexec kernel, of which there is none.
        "kexec_load": ("reboot", lambda: _syscall_errno(
            "kexec_load", ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_void_p(0), ctypes.c_ulong(0))),
        # fd -1: EBADF once the capability check has passed.
        "finit_module": ("module", lambda: _syscall_errno(
            "finit_module", ctypes.c_int(-1), ctypes.c_char_p(b""), ctypes.c_int(0))),
        "delete_module": ("module", lambda: _syscall_errno(
            "delete_module", ctypes.c_char_p(b"liveguard_no_such_module"), ctypes.c_uint(os.O_NONBLOCK))),
        # The clock set to what it already says.
        "clock_settime": ("clock", clock_settime_now),
        "ioperm": ("raw_io", lambda: _syscall_errno(
            "ioperm", ctypes.c_ulong(0x80), ctypes.c_ulong(1), ctypes.c_int(1))),
        "/dev/mem": ("raw_io", lambda: open_errno("/dev/mem")),
        "/dev/port": ("raw_io", lambda: open_errno("/dev/port")),
        # The names set to what they already are.
        "sethostname": ("hostname", lambda: _set_name("sethostname", os.uname().nodename)),
        "setdomainname": ("hostname", lambda: _set_name("setdomainname", _domainname())),
        # No such file: ENOENT once the capability check has passed.
        "swapon": ("swap", lambda: _syscall_errno(
            "swapon", ctypes.c_char_p(b"/liveguard-no-such-swap"), ctypes.c_int(0))),
        "swapoff": ("swap", lambda: _syscall_errno("swapoff", ctypes.c_char_p(b"/liveguard-no-such-swap"))),
    }


# int $0x80 from a 64-bit process takes the 32-bit ABI's syscall table, so
# the kernel handles the call as a 32-bit program's (in_compat_syscall()):
# what a 32-bit binary would do, without one.
_INT80_CODE = bytes([
    0x53,              # push %rbx
    0x89, 0xf8,        # mov %edi,%eax   number
    0x89, 0xf3,        # mov %esi,%ebx   first argument
    0x49, 0x89, 0xc9,  # mov %rcx,%r9    third, kept
    0x89, 0xd1,        # mov %edx,%ecx   second
    0x44, 0x89, 0xca,  # mov %r9d,%edx   third
    0xcd, 0x80,        # int $0x80
    0x5b,              # pop %rbx
    0xc3,              # ret
])
_int80 = None


def syscall32(nr, a1=0, a2=0, a3=0):
    """A 32-bit ABI system call with up to three integer arguments; raises
    OSError as os functions do (ENOSYS where this process cannot make one:
    the code below is x86's)."""
    global _int80
    if not HAS_SYSCALL32:
        raise OSError(errno.ENOSYS, f"no 32-bit calls from a 64-bit process on {MACHINE}")
    if _int80 is None:
        import mmap
        mem = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        mem.write(_INT80_CODE)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(mem))
        fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint)(addr)
        _int80 = (mem, fn)
    r = _int80[1](nr, a1, a2, a3)
    if r < 0 and r > -4096:
        raise OSError(-r, os.strerror(-r))
    return r


IA32_IOCTL = 54


def terminal_acts():
    """name -> a callable taking a terminal's descriptor and its foreground
    group that does an act changing nothing when it works (settings, size
    and foreground group set to what they are; input pushed that nobody
    reads); returns its errno (0: done)."""
    def attempt(fn):
        def run_on(fd, pgrp):
            try:
                fn(fd, pgrp)
            except OSError as e:
                return e.errno
            except termios.error as e:
                return e.args[0]
            return 0
        return run_on

    def set_pgrp(fd, pgrp):
        # Not the caller's controlling terminal: ENOTTY when it gets through.
        fcntl.ioctl(fd, termios.TIOCSPGRP, struct.pack("i", pgrp))

    acts = {
        "TIOCSTI": attempt(lambda fd, _: fcntl.ioctl(fd, termios.TIOCSTI, b"#")),
        "TCSETS": attempt(lambda fd, _: termios.tcsetattr(fd, termios.TCSANOW, termios.tcgetattr(fd))),
        "TIOCSWINSZ": attempt(lambda fd, _: fcntl.ioctl(fd, termios.TIOCSWINSZ,
                                                        fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))),
        "TCFLSH": attempt(lambda fd, _: termios.tcflush(fd, termios.TCIFLUSH)),
        # The compat ioctl path (a hook of its own since 6.8).
        "TCFLSH 32-bit": attempt(lambda fd, _: syscall32(IA32_IOCTL, fd, termios.TCFLSH, termios.TCIFLUSH)),
        "TIOCSPGRP": attempt(set_pgrp),
    }
    if not HAS_SYSCALL32:
        del acts["TCFLSH 32-bit"]
    return acts


# [sessions] max_tasks in the doors' policy: a session may hold this many
# tasks at once, and a storm of STORM_TASKS children must stop short.
SESSION_MAX_TASKS = 200
STORM_TASKS = 2 * SESSION_MAX_TASKS


def fork_storm(n=STORM_TASKS):
    """Forks up to n children that wait on a pipe, until a fork fails.
    Returns (children forked, errno of the fork that failed or 0); every
    child is released and reaped before it returns."""
    r, w = os.pipe()
    children, err = [], 0
    try:
        for _ in range(n):
            try:
                pid = os.fork()
            except OSError as e:
                err = e.errno
                break
            if pid == 0:
                os.close(w)
                os.read(r, 1)
                os._exit(0)
            children.append(pid)
    finally:
        os.close(w)
        os.close(r)
        for pid in children:
            os.waitpid(pid, 0)
    return len(children), err


# The user's counts the user_counts door keeps a reserve of: the sysctl
# that limits each, and the errno the kernel gives at that limit. The
# "32-bit" kinds make them through the ia32 system calls.
USER_COUNTS = {
    "inotify_instances": ("fs/inotify/max_user_instances", errno.EMFILE),
    "inotify_watches": ("fs/inotify/max_user_watches", errno.ENOSPC),
    "fanotify_groups": ("fs/fanotify/max_user_groups", errno.EMFILE),
    "fanotify_marks": ("fs/fanotify/max_user_marks", errno.ENOSPC),
    "inotify_instances 32-bit": ("fs/inotify/max_user_instances", errno.EMFILE),
    "inotify_watches 32-bit": ("fs/inotify/max_user_watches", errno.ENOSPC),
    "fanotify_groups 32-bit": ("fs/fanotify/max_user_groups", errno.EMFILE),
}
NOBODY = 65534
IA32_INOTIFY_INIT1 = 332
IA32_INOTIFY_ADD_WATCH = 292
IA32_FANOTIFY_INIT = 338


def user_count_limit(kind):
    with open("/proc/sys/" + USER_COUNTS[kind][0]) as f:
        return int(f.read())


def _take_user_count(kind, out):
    """In a child: takes `kind` until a call fails; writes "count errno"."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
    in_attrib, fan_mark_add, fan_modify, at_fdcwd = 0x4, 0x1, 0x2, -100
    # Without root, fanotify reports file handles only (FAN_REPORT_FID).
    fan_flags = 0 if os.geteuid() == 0 else 0x200
    compat = kind.endswith(" 32-bit")

    def native(ret):
        if ret < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return ret

    if compat:
        import mmap
        # A path an ia32 call can point at: below 4 GiB (MAP_32BIT).
        low = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40)
        low_addr = ctypes.addressof(ctypes.c_char.from_buffer(low))

        def low_path(p):
            low.seek(0)
            low.write(p[:mmap.PAGESIZE - 1] + b"\0")
            return low_addr
        new_instance = lambda: syscall32(IA32_INOTIFY_INIT1, 0)
        new_group = lambda: syscall32(IA32_FANOTIFY_INIT, fan_flags, os.O_RDONLY)
        add_watch = lambda fd, p: syscall32(IA32_INOTIFY_ADD_WATCH, fd, low_path(p), in_attrib)
    else:
        new_instance = lambda: native(libc.inotify_init1(0))
        new_group = lambda: native(libc.fanotify_init(fan_flags, os.O_RDONLY))
        add_watch = lambda fd, p: native(libc.inotify_add_watch(fd, p, in_attrib))
    add_mark = lambda fd, p: native(libc.fanotify_mark(fd, fan_mark_add, fan_modify, at_fdcwd, p))

    def inodes():
        # Files made for this on a tmpfs (quick to watch), then /usr.
        for top in (CFG.get("inodes_dir"), "/usr"):
            for parent, dirs, files in os.walk(top) if top else ():
                for name in dirs + files:
                    yield os.path.join(parent, name).encode()

    count, err = 0, 0
    try:
        if kind.startswith("inotify_instances") or kind.startswith("fanotify_groups"):
            make = new_instance if kind.startswith("inotify") else new_group
            while True:
                make()
                count += 1
        watching = kind.startswith("inotify")
        fd = new_instance() if watching else new_group()
        add = add_watch if watching else add_mark
        for path in inodes():
            try:
                add(fd, path)
                count += 1
            except OSError as e:
                if e.errno not in (errno.EACCES, errno.ENOENT, errno.ELOOP, errno.EPERM, errno.EXDEV,
                                   errno.ENODEV, errno.ENAMETOOLONG):
                    raise
    except OSError as e:
        err = e.errno
    os.write(out, f"{count} {err}".encode())


def take_user_count(kind, uid=0):
    """A child running as `uid` takes `kind` (USER_COUNTS) until the kernel
    refuses one more, and holds what it took. Returns (count, errno,
    release); release() ends the child, which frees them."""
    res_r, res_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(res_r)
            os.close(hold_w)
            if uid:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            _take_user_count(kind, res_w)
            os.read(hold_r, 1)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(res_w)
    os.close(hold_r)
    got = os.read(res_r, 64).decode().split()
    os.close(res_r)

    def release():
        os.close(hold_w)
        os.waitpid(pid, 0)
    if len(got) != 2:
        release()
        raise AssertionError(f"the {kind} child (uid {uid}) reported nothing")
    return int(got[0]), int(got[1]), release


def send_to_multiplexer(tool, command, tmux_socket=None, session="outside"):
    """Types `command` and Enter into the shell a tmux or screen session
    runs (the doors' servers outside every session by default); returns
    the client's CompletedProcess."""
    if tool == "tmux":
        argv = ["tmux", "-S", tmux_socket or CFG["tmux_socket"], "send-keys", "-t", session, command, "Enter"]
    else:
        argv = ["screen", "-S", session, "-X", "stuff", command + "\n"]
    return run(argv, env=dict(os.environ, SCREENDIR=CFG["screen_dir"], TERM="xterm"))


FILL_WAYS = ("1 MiB writes", "one write larger than the filesystem", "one writev larger than the filesystem")


def fill_filesystem(path, way=FILL_WAYS[0]):
    """Writes `path` until a write fails, in 1 MiB writes or, with a single
    call, at once: more than the filesystem holds, so the watcher's
    measurements cannot see it coming. Returns (bytes written, errno)."""
    st = os.statvfs(os.path.dirname(path))
    whole = st.f_blocks * st.f_frsize + (1 << 20)
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while True:
            if way == FILL_WAYS[0]:
                written += os.write(fd, b"\x02" * (1 << 20))
            elif way == FILL_WAYS[1]:
                written += os.write(fd, b"\x02" * whole)
            else:
                written += os.writev(fd, [b"\x02" * (whole // 2), b"\x03" * (whole - whole // 2)])
    except OSError as e:
        return written, e.errno
    finally:
        os.close(fd)


def ask_watching_service(timeout=10.0):
    """What the protected watching service says when asked to make a new
    inotify instance and watch, fanotify group and mark: "ok", or the call
    that failed."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(CFG["watching_socket"])
        return s.recv(256).decode()


def memory_hogs(n, mb, timeout=120.0):
    """Forks n children that each fill mb MiB, more than the arena has
    room for beside its service, and wait. Once each has filled its share
    or died: (children killed by SIGKILL, children alive, the pipe end that
    holds them), the live ones the caller's to end (end_hogs)."""
    r, w = os.pipe()       # children block on it: the caller ends them
    rr, rw = os.pipe()     # each child writes its index once it is full
    children = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.close(rr)
            block = b"\x01" * (mb << 20)  # every page written
            try:
                os.write(rw, bytes([i]))
            except BrokenPipeError:  # the caller stopped waiting
                os._exit(1)
            os.read(r, 1)
            del block
            os._exit(0)
        children.append(pid)
    os.close(r)
    os.close(rw)
    os.set_blocking(rr, False)
    # A full child can still be killed while another fills: by child, so
    # that none counts twice and the wait ends only when each is one or
    # the other.
    ready, killed, done = set(), [], set()
    deadline = time.monotonic() + timeout
    while len(ready | done) < n and time.monotonic() < deadline:
        try:
            ready |= {children[i] for i in os.read(rr, n)}
        except BlockingIOError:
            pass
        for pid in children:
            if pid in done:
                continue
            got, st = os.waitpid(pid, os.WNOHANG)
            if got:
                done.add(pid)
                if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL:
                    killed.append(pid)
        time.sleep(0.05)
    os.close(rr)
    alive = [p for p in children if p not in done]
    return killed, alive, w


def end_hogs(alive, w):
    os.close(w)
    for pid in alive:
        os.waitpid(pid, 0)


GATEWAY_PORT = 18642  # the stand-in gateway listens here
POLICY_PORT = 18643   # named in the policy; nothing listens


def bind_errno(port, kind=socket.SOCK_STREAM, family=socket.AF_INET):
    """Binds `port` on the loopback with SO_REUSEADDR and SO_REUSEPORT (a
    share of a listener's connections where the listener allows it).
    Returns the errno (0: bound; the socket is closed again)."""
    with socket.socket(family, kind) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            s.bind(("127.0.0.1" if family == socket.AF_INET else "::1", port))
        except OSError as e:
            return e.errno
    return 0


def open_terminal(path):
    """The terminal at `path`, opened without becoming anyone's controlling
    terminal."""
    return os.open(path, os.O_RDWR | os.O_NOCTTY)


def _domainname():
    with open("/proc/sys/kernel/domainname") as f:
        return f.read().strip()


def _set_name(call, name):
    raw = name.encode()
    return _syscall_errno(call, ctypes.c_char_p(raw), ctypes.c_size_t(len(raw)))


def network_admin_acts():
    """name -> a callable doing an act that needs CAP_NET_ADMIN in this
    process's network namespace and changes nothing when it works;
    returns its errno (0: done)."""
    def set_lo_flags():
        SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            req = fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sh14x", b"lo", 0))
            try:
                fcntl.ioctl(s, SIOCSIFFLAGS, req)
            except OSError as e:
                return e.errno
        return 0

    def write_lo_mtu():
        path = "/sys/class/net/lo/mtu"
        with open(path) as f:
            mtu = f.read()
        try:
            with open(path, "w") as f:
                f.write(mtu)
        except OSError as e:
            return e.errno
        return 0

    def destroy_own_listener():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            return sock_destroy(s.getsockname()[1])

    return {"SIOCSIFFLAGS lo": set_lo_flags, "/sys/class/net/lo/mtu": write_lo_mtu,
            "SOCK_DESTROY": destroy_own_listener}


NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY, SOCK_DESTROY = 20, 21
NLMSG_ERROR, NLMSG_DONE = 2, 3
_INET_DIAG_NOCOOKIE = 0xFFFFFFFF


def _inet_diag_req(port=0, src=b"\0" * 16):
    """struct inet_diag_req_v2 for TCP over IPv4: every state, the socket
    bound to src:port (for a dump: any)."""
    return (struct.pack("=BBBxI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0xFFFFFFFF)
            + struct.pack("!HH", port, 0) + src + b"\0" * 16
            + struct.pack("=III", 0, _INET_DIAG_NOCOOKIE, _INET_DIAG_NOCOOKIE))


def _sock_diag(msg_type, flags, payload):
    """Sends one sock_diag request; returns (errno, [(type, body)]) of the
    replies up to NLMSG_DONE or the error/ack."""
    out = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as s:
        s.sendall(struct.pack("=IHHII", 16 + len(payload), msg_type, flags, 1, 0) + payload)
        while True:
            data = s.recv(65536)
            if not data:
                raise OSError(errno.EPROTO, "sock_diag: the socket closed before the reply ended")
            off = 0
            while off + 16 <= len(data):
                length, typ, _, _, _ = struct.unpack_from("=IHHII", data, off)
                if length < 16:
                    raise OSError(errno.EPROTO, f"sock_diag: a reply of {length} bytes")
                body = data[off + 16:off + length]
                if typ == NLMSG_DONE:
                    return 0, out
                if typ == NLMSG_ERROR:
                    return -struct.unpack_from("=i", body)[0], out
                out.append((typ, body))
                off += (length + 3) & ~3


def sock_destroy(port):
    """SOCK_DESTROY (ss -K) of the IPv4 TCP listener on 127.0.0.1:port;
    returns the errno (0: closed)."""
    try:
        return _sock_diag(SOCK_DESTROY, 0x1 | 0x4, _inet_diag_req(port, socket.inet_aton("127.0.0.1") + b"\0" * 12))[0]
    except OSError as e:
        return e.errno


def tcp_dump():
    """A sock_diag dump of IPv4 TCP sockets, as ss reads them: (errno,
    sockets listed)."""
    err, msgs = _sock_diag(SOCK_DIAG_BY_FAMILY, 0x1 | 0x300, _inet_diag_req())
    return err, len(msgs)


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def process_madvise_pageout(pid, address=None):
    """process_madvise(MADV_PAGEOUT) on one page of `pid` (its stack's
    first page unless `address` is given): the kernel pages it out, which
    only costs the process a fault. Returns the errno (0: done)."""
    MADV_PAGEOUT = 21
    if address is None:
        with open(f"/proc/{pid}/maps") as f:
            address = next(int(line.split("-")[0], 16) for line in f if line.rstrip().endswith("[stack]"))
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as e:
        return e.errno
    try:
        vec = _Iovec(address & ~0xfff, 4096)
        return _syscall_errno("process_madvise", ctypes.c_int(pidfd), ctypes.byref(vec), ctypes.c_size_t(1),
                              ctypes.c_int(MADV_PAGEOUT), ctypes.c_uint(0))
    finally:
        os.close(pidfd)


def writable_proc_files(pid):
    """Paths of the regular files under /proc/<pid>/ the kernel marks
    writable, one level of subdirectories down (attr/, task/<tid>/)."""
    found = []

    def scan(d, depth):
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            try:
                if e.is_symlink():
                    continue
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth < 3 and e.name not in ("fd", "fdinfo", "map_files", "ns", "net", "cwd", "root"):
                    scan(e.path, depth + 1)
            elif st.st_mode & 0o222:
                found.append(e.path)

    scan(f"/proc/{pid}", 0)
    return sorted(found)


def lock_as_nobody(path, how):
    """In a child running as nobody: open `path` read-only and lock it.
    Returns the errno (0: locked)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 0
        try:
            if how != "lease":
                os.setgid(65534)
                os.setuid(65534)
            fd = os.open(path, os.O_RDONLY)
            if how == "flock":
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            elif how == "fcntl":
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            elif how == "ofd":
                F_OFD_SETLK = 37
                fcntl.fcntl(fd, F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
            elif how == "lease":
                F_SETLEASE = 1024
                fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
        except OSError as e:
            code = e.errno or 255
        os.write(w, str(code).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 16)
    os.close(r)
    os.waitpid(pid, 0)
    return int(out or b"255")


def rtnetlink_set_link_up(ifname="lo"):
    """RTM_NEWLINK setting IFF_UP on `ifname` in this process's network
    namespace (lo is up already: nothing changes when it works). Returns
    the errno of the send or of the kernel's answer (0: done)."""
    NETLINK_ROUTE, RTM_NEWLINK, NLM_F_REQUEST, NLM_F_ACK, IFF_UP = 0, 16, 1, 4, 1
    index = socket.if_nametoindex(ifname)
    body = struct.pack("BxHiII", 0, 0, index, IFF_UP, IFF_UP)
    msg = struct.pack("IHHII", 16 + len(body), RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE) as s:
        try:
            s.send(msg)
        except OSError as e:
            return e.errno
        answer = s.recv(4096)
    # NLMSG_ERROR (2) with error 0 is the ack.
    length, kind = struct.unpack_from("IH", answer)
    if kind == 2:
        return -struct.unpack_from("i", answer, 16)[0]
    return 0


def netfilter_batch_begin():
    """An nfnetlink batch that begins and never ends (nothing changes when
    it is sent: the kernel drops an unfinished batch). The errno of the
    send (0: sent)."""
    NETLINK_NETFILTER, NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, NFNL_SUBSYS_NFTABLES = 12, 0x10, 1, 10
    body = struct.pack("BB", 0, 0) + struct.pack(">H", NFNL_SUBSYS_NFTABLES)
    msg = struct.pack("IHHII", 16 + len(body), NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER) as s:
        try:
            s.send(msg)
        except OSError as e:
            return e.errno
    return 0


# --- D-Bus, as its client libraries write it ---------------------------------

SYSTEMD = "/org/freedesktop/systemd1"
SYSTEMD_IFACE = "org.freedesktop.systemd1.Manager"


def _pad(buf: bytearray, to: int):
    buf.extend(b"\0" * (-len(buf) % to))


def bus_message(path, member, interface=None, destination="org.freedesktop.systemd1",
                signature="", body=b"", serial=1, big=False, kind=1):
    """A D-Bus message (kind 1: a method call; 4: a signal), header fields
    and body as sd-bus and libdbus lay them out."""
    order = ">" if big else "<"
    fields = bytearray()

    def field(code, sig, value: bytes):
        # Fields start 8-aligned; the fixed header before them is 16 bytes.
        _pad(fields, 8)
        fields.extend(bytes([code, 1, ord(sig), 0]))
        if sig == "g":
            fields.extend(bytes([len(value)]) + value + b"\0")
        else:
            fields.extend(struct.pack(order + "I", len(value)) + value + b"\0")

    field(1, "o", path.encode())
    if interface:
        field(2, "s", interface.encode())
    field(3, "s", member.encode())
    if destination:
        field(6, "s", destination.encode())
    if signature:
        field(8, "g", signature.encode())
    msg = bytearray((b"B" if big else b"l") + bytes([kind, 0, 1]))
    msg.extend(struct.pack(order + "III", len(body), serial, len(fields)))
    msg.extend(fields)
    _pad(msg, 8)
    return bytes(msg) + body


def bus_strings(*values, big=False) -> bytes:
    """A body of D-Bus strings ("ss...")."""
    order = ">" if big else "<"
    out = bytearray()
    for v in values:
        _pad(out, 4)
        out.extend(struct.pack(order + "I", len(v)) + v.encode() + b"\0")
    return bytes(out)


def transient_unit_call(command="/bin/true"):
    """StartTransientUnit as `systemd-run` sends it: a name, a mode, the
    properties (a Description: the command), no auxiliary units."""
    body = bytearray(bus_strings("run-lg-doors.service", "fail"))
    # a(sv) with one property: ("Description", <"s" command>)
    _pad(body, 4)
    at = len(body)
    body.extend(b"\0\0\0\0")
    _pad(body, 8)
    start = len(body)
    body.extend(struct.pack("<I", len("Description")) + b"Description\0")
    body.extend(b"\x01s\0")
    _pad(body, 4)
    body.extend(struct.pack("<I", len(command)) + command.encode() + b"\0")
    body[at:at + 4] = struct.pack("<I", len(body) - start)
    _pad(body, 4)
    body.extend(b"\0\0\0\0")  # a(sa(sv)): empty
    return bus_message(SYSTEMD, "StartTransientUnit", SYSTEMD_IFACE,
                       signature="ssa(sv)a(sa(sv))", body=bytes(body))


def bus_connect(path):
    """A client connection past authentication, as sd-bus starts one (it
    sends its lines without waiting for the answers)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        s.sendall(b"\0AUTH EXTERNAL 30\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n")
    except BaseException:
        s.close()
        raise
    return s
