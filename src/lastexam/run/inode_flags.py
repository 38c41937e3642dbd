"""Inode flags (chattr's), read and set through the file system's ioctls.

An ext4 without a journal makes every new inode pass over the inodes its block group freed in
the last minutes (ext4's recently_deleted(), docs/performance.md): a run whose folders sit in
the groups where earlier runs were removed pays for those removals on each of its files. The
top-of-hierarchy flag (chattr +T) on LASTEXAM_HOME/work makes ext4 place each run's folder as it
places a folder of `/` (the Orlov allocator: a group with few folders and more free inodes than
the average), away from the groups its neighbours churned.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
from pathlib import Path

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
TOPDIR = 0x00020000  # FS_TOPDIR_FL; not inherited by the folders made inside
UNSUPPORTED = (25, 95)  # ENOTTY, EOPNOTSUPP: a file system without these flags


def read(fd: int) -> int:
    """The inode flags of an open file; OSError when they cannot be read."""
    raw = fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8))
    return struct.unpack("=i", raw[:4])[0]


def spread_subfolders(folder: Path) -> bool:
    """Mark `folder` so that the file system places each folder made in it as a top-level one;
    False where it cannot (another file system, not the owner). Best effort: placement only."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            flags = read(fd)
            if not flags & TOPDIR:
                fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("=i", flags | TOPDIR) + bytes(4))
            return bool(read(fd) & TOPDIR)
        finally:
            os.close(fd)
    return False
