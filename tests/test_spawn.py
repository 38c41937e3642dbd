"""sandbox/spawn.py: a child started without the interpreter's lock gets what Popen gives it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from lastexam.sandbox import spawn

pytestmark = pytest.mark.skipif(not spawn.available(), reason="glibc before 2.34")

PROBE = ("ls /proc/self/fd; grep -E '^Sig(Blk|Ign)' /proc/self/status; "
         "ps -o sid= -p $$; echo $$; cat <&0; echo read-stdin; exit 7")


def _run(tmp_path: Path, pass_fds: tuple[int, ...] = ()) -> tuple[int, int, list[str]]:
    out = tmp_path / "out"
    with open(out, "wb") as o, open(tmp_path / "err", "wb") as e:
        proc = spawn.spawn(["/bin/sh", "-c", PROBE], {"PATH": "/usr/bin:/bin"}, o.fileno(),
                           e.fileno(), pass_fds)
    return proc.wait(), proc.pid, out.read_text().split()


def test_only_the_listed_descriptors_reach_the_child(tmp_path: Path) -> None:
    r, w = os.pipe()
    stray = os.open("/dev/null", os.O_RDONLY)
    os.set_inheritable(stray, True)  # would survive an exec: the spawn must close it
    try:
        code, _, seen = _run(tmp_path, pass_fds=(w,))
    finally:
        os.close(stray)
        os.close(w)
    fds = {int(x) for x in seen[:seen.index("SigBlk:")]}
    assert code == 7
    assert w in fds and stray not in fds
    assert fds <= {0, 1, 2, 3, w}  # 3: ls's own listing of the folder
    assert os.read(r, 10) == b""  # the child's copy is gone with it
    os.close(r)


def test_signals_session_and_stdin_are_fresh(tmp_path: Path) -> None:
    old = signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        code, pid, seen = _run(tmp_path)
    finally:
        signal.signal(signal.SIGUSR2, old)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
    status = dict(zip(seen[seen.index("SigBlk:")::2], seen[seen.index("SigBlk:") + 1::2], strict=False))
    assert code == 7
    assert int(status["SigBlk:"], 16) == 0 and int(status["SigIgn:"], 16) == 0
    sid, shell = seen[seen.index("SigIgn:") + 2:seen.index("SigIgn:") + 4]
    assert sid == shell == str(pid)  # a session of its own, led by the child
    assert seen[-1] == "read-stdin"  # stdin is /dev/null: nothing to read, no wait


def test_a_program_that_cannot_start_raises(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot run"):
        spawn.spawn([str(tmp_path / "absent")], {}, 1, 2)
    with pytest.raises(ValueError):
        spawn.spawn(["/bin/true"], {}, 1, 2, pass_fds=(1,))


def test_strings_popen_would_refuse_are_refused(tmp_path: Path) -> None:
    for argv, env in ((["/bin/echo", "a\0--more"], {}), (["/bin/true"], {"V": "1\0W=2"}),
                      (["/bin/true"], {"X=Y": "z"})):
        with pytest.raises(ValueError):
            spawn.spawn(argv, env, 1, 2)


def test_streams_opened_where_a_closed_standard_stream_was(tmp_path: Path) -> None:
    """A harness started with stdin closed opens the sandbox's stdout file as descriptor 0."""
    out = tmp_path / "out"
    child = os.fork()
    if child == 0:
        code = 1
        try:
            os.close(0)
            fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o644)  # takes 0
            code = 2 if fd != 0 else spawn.spawn(["/bin/echo", "written"], {}, fd, fd).wait()
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert out.read_text() == "written\n"
