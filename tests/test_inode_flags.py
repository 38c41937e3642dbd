"""A run's work area is placed away from the block groups earlier runs churned: the work
folder carries the top-of-hierarchy flag (run/inode_flags.py), which its folders do not inherit
(a kept folder must still look as made, run/recycle.py)."""

from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path

import pytest

from lastexam.run import inode_flags, recycle
from lastexam.run.workspace import RunWorkArea

FS_IOC_SETFLAGS, TOPDIR = 0x40086602, 0x00020000  # set here by hand: the probe is independent


def _flags(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return inode_flags.read(fd)
    finally:
        os.close(fd)


def _topdir_supported(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.mkdir()
    fd = os.open(probe, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("=i", _flags(probe) | TOPDIR) + bytes(4))
    except OSError:
        return False
    finally:
        os.close(fd)
    return bool(_flags(probe) & TOPDIR)


def test_the_work_folder_spreads_the_runs_it_holds(tmp_path: Path) -> None:
    if not _topdir_supported(tmp_path):
        pytest.skip("this file system has no top-of-hierarchy flag (ext2/3/4 have it)")
    area = RunWorkArea(tmp_path / "work" / "run-1")
    area.prepare()
    assert _flags(area.root.parent) & TOPDIR
    # Not inherited: the run's folders, and a trial's kept folders made in them, stay plain.
    assert not _flags(area.root) & TOPDIR
    ws = area.trial("t-1")
    ws.root.mkdir(parents=True)
    (ws.root / "inputs").mkdir(mode=recycle.FOLDER_MODE)
    os.chmod(ws.root / "inputs", recycle.FOLDER_MODE)
    assert recycle.as_made(ws.root / "inputs", recycle.FOLDER_MODE)
    area.remove()
