"""Fixtures and hooks of the door suite. Run through tests/vm/doors/run,
inside the VM, as root."""
import json
import os

import pytest

import doorlib
from doorlib import DOORS, assert_kept, exec_refused  # noqa: F401  (re-exported for tests)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "every_lane: a case a subset runs too (its own program, such as the compat ioctl hook)")
    config.addinivalue_line(
        "markers", "full_only: an outside check a subset leaves out (another way to end the gateway, "
                   "each a wait for its restart)")
    for door, progs in DOORS.items():
        config.addinivalue_line(
            "markers", f"door_{door}: a refusal the {door} door makes ({', '.join(progs)})")


def doors_of(item):
    return sorted(m.name[len("door_"):] for m in item.iter_markers() if m.name.startswith("door_"))


def pytest_collection_modifyitems(config, items):
    """With $DOORS_SCOPE=subset (a second kernel or form in `make test`):
    each door once, not every way into it. In session, the first test of
    each door that tests that door alone (one that tests several only for
    a door no such test has), the cases marked every_lane (a program of
    their own behind a door), and the first case of each pass-through;
    outside, the first case of each test not marked full_only. The whole
    suite runs in the full lane and in `make test-matrix`.
    On a machine other than x86-64, the cases that make x86-only calls
    (the 32-bit ABI through int $0x80, I/O ports) are deselected, by name:
    not collected, they are no case of the control run either, which
    requires every case it runs to go red without its door, and a case
    skipped there would not."""
    if not doorlib.HAS_SYSCALL32:
        x86_only = [it for it in items if "32-bit" in it.name or "[ioperm]" in it.name]
        if x86_only:
            config.hook.pytest_deselected(items=x86_only)
            items[:] = [it for it in items if it not in x86_only]
    if os.environ.get("DOORS_SCOPE") != "subset":
        return
    taken_doors, taken_functions, kept = set(), set(), set()
    for single in (True, False):
        for i, item in enumerate(items):
            doors = set(doors_of(item))
            function = (item.path.name, getattr(item, "originalname", item.name))
            if item.get_closest_marker("full_only") or item.get_closest_marker("skip"):
                wanted = False
            elif single and item.get_closest_marker("every_lane"):
                wanted = True
            elif not doors:
                wanted = single and function not in taken_functions
            else:
                wanted = (len(doors) == 1) == single and not doors <= taken_doors
            if wanted:
                taken_doors |= doors
                taken_functions.add(function)
                kept.add(i)
    drop = [item for i, item in enumerate(items) if i not in kept]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for i, item in enumerate(items) if i in kept]


def pytest_collection_finish(session):
    """With $DOORS_COLLECT_OUT set: write every collected test and its door
    markers there (the runner builds the control run from it)."""
    out = os.environ.get("DOORS_COLLECT_OUT")
    if not out:
        return
    with open(out, "w") as f:
        json.dump([{"nodeid": it.nodeid, "doors": doors_of(it)} for it in session.items], f)


def pytest_runtest_logreport(report):
    """With $DOORS_RESULTS set: append each phase's outcome there, one JSON
    line (the runner counts from it)."""
    out = os.environ.get("DOORS_RESULTS")
    if not out:
        return
    if report.when != "call" and report.passed:
        return
    with open(out, "a") as f:
        f.write(json.dumps({"nodeid": report.nodeid, "when": report.when,
                            "outcome": report.outcome}) + "\n")


_gateway_gave_up = False


@pytest.fixture
def gateway():
    """The stand-in gateway, once it is up and protected (up to 10 s): s6's
    pid (`s6-svstat -o pid`), which the PID file names with a matching
    start_time."""
    global _gateway_gave_up
    # In the control run some link pins are gone on purpose, and `status`
    # then reports liveguard as not loaded: the gateway's marks are still
    # there (the runner saw it protected before removing the pins), so
    # being up is what counts.
    control = os.environ.get("DOORS_CONTROL") == "1"
    # After one timeout, do not spend 10 s on every following test.
    gw, why = doorlib.wait_gateway(timeout=3.0 if _gateway_gave_up else 10.0,
                                   require_protected=not control)
    if gw is None:
        _gateway_gave_up = True
        pytest.fail(f"gateway not up and protected: {why}", pytrace=False)
    _gateway_gave_up = False
    yield gw

