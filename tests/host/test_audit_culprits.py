"""Run by tests/host/audit inside `liveguard-bpf run`: acts the guard must
report (audit-only) or refuse and report (enforce, in the VM), each against
the disposable stand-in named by $STANDIN (a process the harness started;
it ignores SIGWINCH and survives it either way)."""
import os
import signal
import subprocess


def test_kills_the_stand_in():
    # SIGWINCH: reported like any signal, and the stand-in survives it.
    try:
        os.kill(int(os.environ["STANDIN"]), signal.SIGWINCH)
    except PermissionError:
        assert os.environ["LIVEGUARD_MODE"] == "enforce"


def test_three_deep():
    # The culprit is the innermost shell; its parents are two shells and pytest.
    r = subprocess.run(["sh", "-c", "sh -c 'sh -c \"kill -WINCH $STANDIN\"'"])
    assert (r.returncode != 0) == (os.environ["LIVEGUARD_MODE"] == "enforce")


def test_harmless():
    os.kill(int(os.environ["STANDIN"]), 0)
