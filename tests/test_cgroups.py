"""Waiting for a cgroup's processes to leave (sandbox/cgroups.py): woken by each process's
exit, a zombie counted as exited, a live process waited for no longer than asked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from lastexam.sandbox.cgroups import _await_exit


def _pidfds() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


needs_pidfd = pytest.mark.skipif(not _pidfds(), reason="no pidfd_open here (the wait is a plain pause)")


@needs_pidfd
def test_an_exited_process_is_reported_and_a_live_one_is_not() -> None:
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    short = subprocess.Popen(["/bin/true"])
    try:
        # The short one exits (a zombie until reaped: exited all the same); the live one is
        # still running when the wait gives up.
        assert _await_exit({live.pid, short.pid}, 2.0) == {short.pid}
        assert live.poll() is None
    finally:
        live.kill()
        live.wait()
        short.wait()


@needs_pidfd
def test_a_process_killed_during_the_wait_ends_it() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killer = threading.Timer(0.2, os.kill, (proc.pid, signal.SIGKILL))
    killer.start()
    try:
        assert _await_exit({proc.pid}, 30.0) == {proc.pid}
    finally:
        killer.cancel()
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("pids", [set(), {2**22 + 7}])
def test_nothing_to_wait_for_is_a_plain_pause(pids: set[int]) -> None:
    assert _await_exit(pids, 0.01) == set()
