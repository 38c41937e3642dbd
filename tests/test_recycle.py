"""A trial's folders kept for the next trial (run/recycle.py): kept only when nothing tells
them from folders just made, so that nothing the agent leaves on them reaches the next trial."""

from __future__ import annotations

import fcntl
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL
from lastexam.run import recycle
from lastexam.run.workspace import AGENT_FOLDERS, TrialWorkspace
from lastexam.task.load import load_task

FS_IOC_SETFLAGS = 0x40086602
NOATIME = 0x80
DAX = 0x02000000


def _workspace(tmp_path: Path, name: str) -> TrialWorkspace:
    return TrialWorkspace(tmp_path / "trials" / name, None, tmp_path / "spare")


def _inodes(ws: TrialWorkspace) -> dict[str, int]:
    return {d: os.stat(ws.root / d).st_ino for d in AGENT_FOLDERS}


def _end(ws: TrialWorkspace) -> None:
    """As a trial ends: the agent's folders emptied at collection, then the workspace removed."""
    ws.free_agent_areas()
    ws.remove(reuse=True)


def test_emptied_folders_serve_the_next_trial_empty(tmp_path: Path) -> None:
    task = load_task(COLUMN_TOTAL)
    first = _workspace(tmp_path, "a")
    first.stage(task, None)
    before = _inodes(first)
    (first.home / "notes.txt").write_text("the answer is 42")
    (first.output / "deep" / "er").mkdir(parents=True)
    (first.inputs / "data.csv").write_text("tampered")
    (first.grade / "scratch").mkdir(parents=True)  # as a grading leaves it
    (first.grade / "scratch" / "left.txt").write_text("x")
    first.grade.chmod(recycle.PRIVATE_MODE)
    _end(first)
    assert not first.root.exists() and len(os.listdir(tmp_path / "spare")) == 1

    second = _workspace(tmp_path, "b")
    second.stage(task, None)
    assert _inodes(second) == before  # the same folders, renamed into place
    assert os.listdir(second.home) == [] and os.listdir(second.output) == []
    assert os.listdir(second.inputs) == ["data.csv"]
    assert (second.inputs / "data.csv").read_bytes() == (COLUMN_TOTAL / "inputs" / "data.csv").read_bytes()
    assert os.listdir(second.grade / "scratch") == []
    assert os.listdir(tmp_path / "spare") == []


def _chmod(ws: TrialWorkspace) -> None:
    ws.home.chmod(0o777)


def _xattr(ws: TrialWorkspace) -> None:
    os.setxattr(ws.output, "user.note", b"for the next trial")


def _set_flag(folder: Path, flag: int) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("=i", flag))
    except OSError as e:
        pytest.skip(f"no such inode flag here: {e}")
    finally:
        os.close(fd)


def _flag(ws: TrialWorkspace) -> None:
    _set_flag(ws.inputs, NOATIME)


def _dax(ws: TrialWorkspace) -> None:
    _set_flag(ws.output, DAX)  # inherited by the files made in the folder


def _grown(ws: TrialWorkspace) -> None:
    for i in range(400):  # a folder that held many entries keeps its size once emptied
        (ws.home / f"{i:0>200}").touch()


def _scratch_mode(ws: TrialWorkspace) -> None:
    (ws.grade / "scratch").mkdir(parents=True)
    ws.grade.chmod(recycle.PRIVATE_MODE)
    (ws.grade / "scratch").chmod(0o700)


@pytest.mark.parametrize("leave", [_chmod, _xattr, _flag, _dax, _grown, _scratch_mode],
                         ids=["mode", "xattr", "inode-flag", "dax-flag", "grown", "scratch-mode"])
def test_a_folder_left_changed_is_removed_not_kept(tmp_path: Path,
                                                   leave: Callable[[TrialWorkspace], None]) -> None:
    task = load_task(COLUMN_TOTAL)
    first = _workspace(tmp_path, "a")
    first.stage(task, None)
    leave(first)
    _end(first)
    assert not first.root.exists()
    assert not (tmp_path / "spare").exists() or os.listdir(tmp_path / "spare") == []  # not kept
    second = _workspace(tmp_path, "b")
    second.stage(task, None)
    for d in AGENT_FOLDERS:
        assert recycle.as_made(second.root / d, recycle.FOLDER_MODE, holding=()) or d == "inputs"
        assert os.listxattr(second.root / d) == []
        assert (os.stat(second.root / d).st_mode & 0o777) == recycle.FOLDER_MODE
    assert os.stat(second.home).st_size <= recycle.EMPTY_DIR_BYTES


def test_without_reuse_nothing_is_kept(tmp_path: Path) -> None:
    """After survivors (or any end but a sandbox that ended with every process gone)."""
    ws = _workspace(tmp_path, "a")
    ws.stage(load_task(COLUMN_TOTAL), None)
    ws.free_agent_areas()
    ws.remove()
    assert not ws.root.exists() and not (tmp_path / "spare").exists()


def test_times_left_on_a_kept_folder_do_not_reach_the_next_trial(tmp_path: Path) -> None:
    """A folder's access and change times, set by its last user (in the future, they survive
    every listing), would carry some 60 bits each to the next trial: they are renewed."""
    task = load_task(COLUMN_TOTAL)
    first = _workspace(tmp_path, "a")
    first.stage(task, None)
    message = 2_082_758_400.336574281  # 2036-01-01, its fraction the message
    for d in AGENT_FOLDERS:
        os.utime(first.root / d, (message, message))
    (first.grade / "scratch").mkdir(parents=True)
    first.grade.chmod(recycle.PRIVATE_MODE)
    os.utime(first.grade / "scratch", (message, message))
    before = _inodes(first)
    _end(first)
    second = _workspace(tmp_path, "b")
    second.stage(task, None)
    assert _inodes(second) == before  # kept: the times are not a reason to make them again
    now = time.time()
    for d in AGENT_FOLDERS:
        st = os.stat(second.root / d)
        assert abs(st.st_atime - now) < 60 and abs(st.st_mtime - now) < 60, d
