# liveguard-bpf's pytest plugin, installed by `run`: tells liveguard which test is running.
import os
import time

_dir = os.environ.get("LIVEGUARD_TEST_LOG_DIR")


def _log(item, when):
    if not _dir:
        return
    try:
        with open(os.path.join(_dir, str(os.getpid())), "a") as f:
            f.write("%d\t%s (%s)\n" % (time.clock_gettime_ns(time.CLOCK_BOOTTIME), item.nodeid, when))
    except OSError:
        pass


def pytest_runtest_setup(item):
    _log(item, "setup")


def pytest_runtest_call(item):
    _log(item, "call")


def pytest_runtest_teardown(item):
    _log(item, "teardown")
