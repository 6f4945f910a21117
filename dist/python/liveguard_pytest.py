# liveguard-bpf's pytest plugin: tells liveguard which test is running.
#
# `liveguard-bpf run` loads it (PYTHONPATH and PYTEST_PLUGINS) and names
# its session's log directory in LIVEGUARD_TEST_LOG_DIR. Installed into a
# site-packages directory with its dist-info, pytest loads it by itself
# (the pytest11 entry point): in an automatic session, which no `run`
# started, it logs to /run/liveguard/tests/pid/<pid> when that directory is
# there. Each line is "<CLOCK_BOOTTIME ns>\t<test id> (<phase>)", the clock
# events carry too, so an event names the test that was running when it
# happened (pytest's own PYTEST_CURRENT_TEST is invisible from outside the
# pytest process). The plugin never fails a test run.
import os
import time

_BY_PID_DIR = "/run/liveguard/tests/pid"

_dir = os.environ.get("LIVEGUARD_TEST_LOG_DIR")
# The pid whose by-pid log this process has started: the first write of a
# process truncates what a dead process with the same pid left; a forked
# child has a pid of its own and starts its own log.
_started_pid = None


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


def pytest_runtest_setup(item):
    _log(item, "setup")


def pytest_runtest_call(item):
    _log(item, "call")


def pytest_runtest_teardown(item):
    _log(item, "teardown")
