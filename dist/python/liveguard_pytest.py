# liveguard-bpf's pytest plugin: names the running test for liveguard, and
# tells each test what liveguard refused it, in pytest's own report.
#
# Which test: `liveguard-bpf run` loads the plugin (on PYTHONPATH, by its
# entry point) and names its session's log directory in
# LIVEGUARD_TEST_LOG_DIR; installed (the pytest11 entry point
# "liveguard"), pytest loads it by itself, and in an automatic session,
# which no `run` started, it logs to /run/liveguard/tests/pid/<pid> when
# that directory is there. Each line is "<CLOCK_BOOTTIME ns>\t<test id>
# (<phase>)", the clock events carry too, so an event names the test that
# was running when it happened. Without the plugin, liveguard reads
# pytest's own PYTEST_CURRENT_TEST from the pytest process's memory (its
# libc's environ; /proc/<pid>/environ, the environment at exec, never
# shows it): that names the test running when the event is collected,
# which may be a later one.
#
# What was refused: as each test's call and teardown end, the plugin asks
# the watcher to journal what the kernel refused so far (its socket's
# "sync"), reads the new lines of the event journal, and keeps those of
# this process and its children. A test during which something was
# refused gets a "liveguard" report section and a LiveguardRefusal
# warning (-W error::liveguard_pytest.LiveguardRefusal makes it an error),
# or fails with --liveguard-strict (ini: liveguard_strict = true); the
# terminal summary counts refusals per test.
#
# The plugin never fails a test run of its own accord: a missing journal,
# an unreachable watcher or no guard loaded is one line in the summary.
import json
import os
import socket
import sys
import threading
import time
import warnings

import pytest

_BY_PID_DIR = "/run/liveguard/tests/pid"
_JOURNAL = "/var/log/liveguard/events.jsonl"
_RUN_SOCKET = "/run/liveguard/run.sock"

_dir = os.environ.get("LIVEGUARD_TEST_LOG_DIR")
# The pid whose by-pid log this process has started: the first write of a
# process truncates what a dead process with the same pid left; a forked
# child has a pid of its own and starts its own log.
_started_pid = None


class LiveguardRefusal(UserWarning):
    """liveguard-bpf refused something a test did (kill a protected
    process, write a protected file, ...)."""


def _append(path, line):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        data = line.encode("utf-8", "backslashreplace")
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _write_by_pid(line):
    global _started_pid
    pid = os.getpid()
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_APPEND if _started_pid == pid else os.O_TRUNC
    # The directory is sticky and world-writable: never follow a link there.
    fd = os.open(os.path.join(_BY_PID_DIR, str(pid)), flags, 0o644)
    try:
        _started_pid = pid
        data = line.encode("utf-8", "backslashreplace")
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _log(item, when):
    try:
        line = "%d\t%s (%s)\n" % (time.clock_gettime_ns(time.CLOCK_BOOTTIME), item.nodeid, when)
        if _dir:
            _append(os.path.join(_dir, str(os.getpid())), line)
        else:
            _write_by_pid(line)
    except Exception:
        pass


# --- the Python calls that can be refused -------------------------------

# Audit events (sys.addaudithook) of the calls that signal or start
# processes: the line of the test that made one is what the report shows.
_SIGNALS = frozenset(("os.kill", "os.killpg", "signal.pthread_kill"))
_SPAWNS = frozenset(("subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "pty.spawn",
                     "os.fork", "os.forkpty"))
_FOREIGN = frozenset(("ctypes.call_function",))
_WATCHED = _SIGNALS | _SPAWNS | _FOREIGN


class _Calls:
    """What the running test called, as audit events, with where."""

    def __init__(self):
        self.item_path = None
        self.calls = []  # (ns since the epoch, event, args, "file:line: code")
        self.lock = threading.Lock()

    def start(self, item):
        with self.lock:
            self.item_path = str(getattr(item, "path", None) or getattr(item, "fspath", ""))
            self.calls = []

    def hook(self, event, args):
        if event not in _WATCHED or self.item_path is None:
            return
        try:
            where = self._where(sys._getframe(1))
            if event == "ctypes.call_function":
                args = args[1] if len(args) > 1 else ()
            summary = _summarize(event, args)
            with self.lock:
                if len(self.calls) < 1000:
                    self.calls.append((time.time_ns(), event, summary, where))
        except Exception:
            pass

    def _where(self, frame):
        """The innermost frame in the test's own file, else the innermost
        one outside the standard library and installed packages."""
        fallback = None
        stdlib = os.path.dirname(os.__file__)
        while frame is not None:
            name = frame.f_code.co_filename
            if name == self.item_path:
                return _line_of(frame)
            if fallback is None and not name.startswith(stdlib) and "-packages" not in name \
                    and not name.startswith("<") and name != __file__:
                fallback = _line_of(frame)
            frame = frame.f_back
        return fallback or ""


def _line_of(frame):
    import linecache
    name = frame.f_code.co_filename
    code = linecache.getline(name, frame.f_lineno).strip()
    try:
        shown = os.path.relpath(name)
        if shown.startswith(".."):
            shown = name
    except ValueError:
        shown = name
    return "%s:%d: %s" % (shown, frame.f_lineno, code) if code else "%s:%d" % (shown, frame.f_lineno)


def _summarize(event, args):
    try:
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            if isinstance(argv, (list, tuple)):
                return "subprocess.Popen(%s)" % " ".join(str(a) for a in argv)[:200]
            return "subprocess.Popen(%s)" % str(argv or executable)[:200]
        return "%s%s" % (event, tuple(a if isinstance(a, (int, str)) else type(a).__name__ for a in args))
    except Exception:
        return event


# --- the refusals the journal holds ----------------------------------------

def _event_ns(text):
    """The journal's UTC time ("2026-12-04T22:30:15.123456789Z") in ns
    since the epoch; 0 when it does not read."""
    try:
        import calendar
        whole, _, frac = text.rstrip("Z").partition(".")
        t = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
        return t * 1_000_000_000 + int((frac + "000000000")[:9])
    except Exception:
        return 0


class _Journal:
    """The event journal from where it ended when the run started."""

    def __init__(self, path=_JOURNAL):
        self.path = path
        self.fd = None
        self.offset = 0
        self.partial = b""
        self.problem = None
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            self.offset = os.fstat(self.fd).st_size
        except OSError as e:
            self.problem = "no event journal (%s: %s): is the guard loaded? (liveguard-bpf status)" % (
                path, e.strerror)

    def read_new(self):
        lines = []
        if self.fd is None:
            try:
                self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                self.offset = 0
                self.problem = None
            except OSError:
                return lines
        self._drain(lines)
        # Rotated since: what the held file has is read; go on with the new.
        try:
            now = os.stat(self.path)
            held = os.fstat(self.fd)
            if (now.st_ino, now.st_dev) != (held.st_ino, held.st_dev):
                os.close(self.fd)
                self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                self.offset = 0
                self.partial = b""
                self._drain(lines)
        except OSError:
            pass
        return lines

    def _drain(self, lines):
        while True:
            chunk = os.pread(self.fd, 1 << 16, self.offset)
            if not chunk:
                break
            self.offset += len(chunk)
            self.partial += chunk
        *whole, self.partial = self.partial.split(b"\n")
        for raw in whole:
            try:
                lines.append(json.loads(raw))
            except ValueError:
                pass


def _sync(timeout=2.0):
    """Asks the watcher to journal what the kernel refused so far. None
    when done, else why not."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        s.settimeout(timeout)
        s.connect(_RUN_SOCKET)
        s.sendall(b'{"op":"sync"}\n')
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        answer = json.loads(reply or b"{}")
        if answer.get("ok") is True:
            return None
        return "the watcher did not sync: %s" % answer.get("error", "no reply")
    except (OSError, ValueError) as e:
        return "the guard's watcher is not reachable at %s (%s)" % (_RUN_SOCKET, e)
    finally:
        s.close()


def _test_of(event):
    test = event.get("test") or ""
    if test.endswith(")") and " (" in test:
        test = test[:test.rindex(" (")]
    return test


class _Refusal:
    def __init__(self, event, count, pid, calls):
        self.event = event
        self.count = count
        self.call = _call_for(event, pid, calls)
        self.text = self._describe(event, count, pid, self.call)

    def warn(self):
        """A LiveguardRefusal at the test's line that made the call, when
        known."""
        message = LiveguardRefusal(self.text.splitlines()[0])
        where = self.call[3] if self.call else ""
        parts = where.split(":", 2)
        if len(parts) >= 2 and parts[1].isdigit():
            warnings.warn_explicit(message, LiveguardRefusal, parts[0], int(parts[1]))
        else:
            warnings.warn(message)

    @staticmethod
    def _describe(e, count, pid, call):
        verdict = "killed" if e.get("verdict") == "killed" else "refused"
        out = ["%s: %s" % (verdict, e.get("act", e.get("hook", "?")))]
        if count > 1:
            out[0] += " (%d times)" % count
        if e.get("target_protected_by"):
            out.append("  protected by: %s" % e["target_protected_by"])
        culprit = "%s[%s]" % (e.get("comm", "?"), e.get("pid", "?"))
        chain = [culprit] + ["%s[%s]" % (p.get("comm", "?"), p.get("pid", "?")) for p in e.get("parents") or []]
        if e.get("pid") == pid:
            out.append("  by: %s, this test's own process" % culprit)
        else:
            out.append("  by: %s, started by this test" % " < ".join(chain))
        if e.get("argv"):
            out.append("  command: %s" % " ".join(e["argv"])[:300])
        if call:
            out.append("  call: %s" % call[2])
            if call[3]:
                out.append("  at: %s" % call[3])
        out.append("  hook: %s, at %s" % (e.get("hook", "?"), e.get("time", "?")))
        return "\n".join(out)


def _call_for(e, pid, calls):
    """The audited call that most likely made the act: a signal to the
    target from this process, else the last start of a process whose
    command names the culprit, else the last start of any."""
    t = _event_ns(e.get("time", "")) or time.time_ns()
    before = [c for c in calls if c[0] <= t + 1_000_000]
    if e.get("pid") == pid:
        target = str(e.get("target_pid", ""))
        for c in reversed(before):
            if c[1] in _SIGNALS and target and ("(%s," % target) in c[2]:
                return c
        for c in reversed(before):
            if c[1] in _SIGNALS or c[1] in _FOREIGN:
                return c
        return None
    comm = e.get("comm", "")
    spawns = [c for c in before if c[1] in _SPAWNS]
    for c in reversed(spawns):
        if comm and comm in c[2]:
            return c
    return spawns[-1] if spawns else None


class _Plugin:
    def __init__(self, config):
        self.config = config
        self.strict = bool(config.getoption("liveguard_strict") or config.getini("liveguard_strict"))
        self.journal = _Journal()
        self.sync_problem = None
        self.calls = _Calls()
        self.pid = os.getpid()
        self.ran = set()  # node ids run by this process
        self.pending = {}  # node id -> refusals of a test not yet reported
        self.later = []  # (node id or "", refusal) found after their test's report
        self.per_test = {}  # node id -> count, from every report (xdist workers' too)
        self.current = None
        try:
            sys.addaudithook(self.calls.hook)
        except Exception:
            pass

    # Which journal lines are this process's: its own acts, its
    # descendants' (the chain of parents names it), and those of
    # processes a test of its left behind (they name the test).
    def _ours(self, e):
        if e.get("pid") == self.pid:
            return True
        if any(p.get("pid") == self.pid for p in e.get("parents") or []):
            return True
        return _test_of(e) in self.ran

    def collect(self):
        # Synced even while the journal is missing: the guard writes it at
        # its first event, and the sync is what makes it do so now.
        problem = _sync()
        if problem and not self.sync_problem:
            self.sync_problem = problem
        for e in self.journal.read_new():
            # Refusals, and members the OOM killer took (verdict "killed").
            if e.get("verdict") not in ("denied", "killed") or not self._ours(e):
                continue
            if e.get("type") == "repeats":
                # The same refusal again within a second, counted.
                self._take(e, int(e.get("count", 1)))
            elif "type" not in e:
                self._take(e, 1)

    def _take(self, e, count):
        test = _test_of(e)
        if not test or test not in self.ran:
            test = self.current or test
        refusal = _Refusal(e, count, self.pid, self.calls.calls if test == self.current else [])
        if test and test == self.current:
            self.pending.setdefault(test, []).append(refusal)
        else:
            self.later.append((test, refusal))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        self.current = item.nodeid
        self.ran.add(item.nodeid)
        self.calls.start(item)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item):
        # Warned here, inside the test's own protocol: pytest records the
        # warning for this test, and -W error turns it into a teardown
        # error of this test. Last: the test's fixtures are torn down
        # first, so an error here leaves the next test's setup intact.
        for refusal in self.pending.get(item.nodeid, []):
            if not getattr(refusal, "warned", False):
                refusal.warned = True
                refusal.warn()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.when == "setup":
            return
        try:
            report = outcome.get_result()
            before = len(self.pending.get(item.nodeid, []))
            self.collect()
            new = self.pending.get(item.nodeid, [])[before:]
            if not new:
                return
            text = "\n\n".join(r.text for r in new)
            report.sections.append(("liveguard refusals (%s)" % call.when, text))
            if self.strict and report.passed:
                report.outcome = "failed"
                report.longrepr = "liveguard-bpf refused what this test did (--liveguard-strict):\n\n" + text
        except Exception as e:
            self.sync_problem = self.sync_problem or "reading refusals failed: %r" % (e,)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid, location):
        if nodeid == self.current:
            self.current = None
            self.calls.item_path = None
            self.pending.pop(nodeid, None)

    def pytest_runtest_logreport(self, report):
        n = sum(section[1].count("\nrefused: ") + section[1].startswith("refused: ")
                for section in report.sections if section[0].startswith("liveguard refusals"))
        if n:
            self.per_test[report.nodeid] = self.per_test.get(report.nodeid, 0) + n

    def pytest_terminal_summary(self, terminalreporter):
        try:
            self.collect()
        except Exception:
            pass
        tr = terminalreporter
        lines = []
        for nodeid, n in sorted(self.per_test.items()):
            lines.append("%s: %d refused" % (nodeid, n))
        for test, refusal in self.later:
            lines.append("%s (after its report):\n%s" % (test or "(no test known)", refusal.text))
        problems = [p for p in (self.journal.problem if self.journal.fd is None else None, self.sync_problem) if p]
        if not lines and not problems:
            return
        tr.write_sep("=", "liveguard-bpf")
        if self.per_test or self.later:
            total = sum(self.per_test.values()) + len(self.later)
            tr.write_line("%d refusal%s in this run; `liveguard-bpf events` has the details" %
                          (total, "" if total == 1 else "s"))
        for line in lines:
            tr.write_line(line)
        # One line: the first problem is the cause of those after it.
        for p in problems[:1]:
            tr.write_line("liveguard: " + p)


def pytest_addoption(parser):
    group = parser.getgroup("liveguard", "liveguard-bpf")
    group.addoption("--liveguard-strict", action="store_true", default=False, dest="liveguard_strict",
                    help="fail a test during which liveguard-bpf refused something (default: the test "
                         "passes with a LiveguardRefusal warning and a report section)")
    parser.addini("liveguard_strict", type="bool", default=False,
                  help="as --liveguard-strict: fail tests during which liveguard-bpf refused something")


def pytest_configure(config):
    try:
        plugin = _Plugin(config)
        # pytest-xdist's controller runs no test: its workers, each with
        # the plugin, report their own, and it counts from their reports.
        if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
            plugin.collect = lambda: None
        config.pluginmanager.register(plugin, "liveguard-reporter")
    except Exception:
        pass


def pytest_runtest_setup(item):
    _log(item, "setup")


def pytest_runtest_call(item):
    _log(item, "call")


def pytest_runtest_teardown(item):
    _log(item, "teardown")
