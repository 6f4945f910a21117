"""Run by tests/host/audit inside `liveguard-bpf run`: acts the audit-only
guard must report, each against the disposable stand-in named by $STANDIN
(a process the harness started; it ignores SIGWINCH and survives it)."""
import os
import signal
import subprocess


def test_kills_the_stand_in():
    # SIGWINCH: reported like any signal, and the stand-in survives it.
    os.kill(int(os.environ["STANDIN"]), signal.SIGWINCH)


def test_three_deep():
    # The culprit is the innermost shell; its parents are two shells and pytest.
    subprocess.run(["sh", "-c", "sh -c 'sh -c \"kill -WINCH $STANDIN\"'"], check=True)


def test_harmless():
    os.kill(int(os.environ["STANDIN"]), 0)
