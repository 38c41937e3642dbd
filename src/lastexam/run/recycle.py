"""Workspace folders kept for the next trial of the run instead of removed and made again.

On an ext4 without a journal, every inode made passes over the inodes its block group freed
in the last minutes (ext4's recently_deleted(), up to five when the inode table is dirty): a run
of quick trials that makes and removes some ten folders each slows itself down to milliseconds
per file (docs/performance.md). A folder is kept only when, emptied, nothing tells it from one
just made: an empty folder (one link per parent, the size of an empty folder) with the mode it
was made with, no extended attribute (nor ACL) and no inode flag. What its last user could
change of a folder is its contents, mode, extended attributes and flags (not its owner: that
takes a capability no sandbox has); anything else is removed as before.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from lastexam.run import inode_flags
from lastexam.untrusted import remove_tree

# The only inode flags a folder may carry to be kept: those ext4 gives a new one (extents,
# inline data). Any other (chattr's, DAX, an encryption policy) stays with the folder and would
# change how the next user's files are written.
FRESH_FLAGS = 0x80000 | 0x10000000
EMPTY_DIR_BYTES = 4096  # ext4's; a folder that held many entries keeps its larger size
MAX_SPARES = 64  # more than a run's trials at once ever leave


FOLDER_MODE = 0o755  # the agent's folders and a grading's scratch
PRIVATE_MODE = 0o711  # a workspace and a grading's folder: the harness's, passed through


def clear(folder: Path, keep: tuple[str, ...] = ()) -> bool:
    """Remove what `folder` holds but the names in `keep`; False when it cannot be listed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for name in names:
        if name not in keep:
            remove_tree(folder / name)
    return True


def grading_folder_ready(folder: Path) -> bool:
    """Whether a grading's folder, cleared, holds only its scratch/ and both are as made."""
    scratch = folder / "scratch"
    return (clear(folder, keep=("scratch",)) and clear(scratch) and as_made(scratch, FOLDER_MODE)
            and as_made(folder, PRIVATE_MODE, holding=("scratch",)))


def as_made(folder: Path, mode: int, holding: tuple[str, ...] = ()) -> bool:
    """Whether `folder` is as mkdir leaves it with `mode`, holding only the folders `holding`."""
    try:
        st = os.lstat(folder)
        if not (stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == mode
                and st.st_nlink == 2 + len(holding) and st.st_size <= EMPTY_DIR_BYTES
                and sorted(os.listdir(folder)) == sorted(holding)
                and not os.listxattr(folder, follow_symlinks=False)):
            return False
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        flags = inode_flags.read(fd)
    except OSError as e:
        flags = 0 if e.errno in inode_flags.UNSUPPORTED else ~FRESH_FLAGS  # no flags there
    finally:
        os.close(fd)
    return flags & ~FRESH_FLAGS == 0


NOT_KEPT = ".not-kept"  # in a workspace: none of its folders is kept


def forbid(workspace: Path) -> None:
    """Mark a workspace whose folders must not be kept (a sandbox may have left a process).
    Raises when the mark cannot be made: a workspace left unmarked would be kept."""
    (workspace / NOT_KEPT).touch()


def renew(folder: Path) -> None:
    """A kept folder's access and change times set to now: left as they were, they would
    carry what its last user wrote into them (a time in the future survives every listing)."""
    os.utime(folder)


class Spares:
    """The run's kept folders: spare/<token>/, each a workspace root holding its folders."""

    def __init__(self, folder: Path):
        self.folder = folder

    def take(self, dest: Path) -> bool:
        """Rename a kept folder to `dest` (which must not exist); False when none is left."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return False
        for name in names:
            with contextlib.suppress(FileNotFoundError):  # another trial took it first
                os.rename(self.folder / name, dest)
                return True
        return False

    def keep(self, folder: Path) -> bool:
        """Move `folder` in; False (left where it is) when it cannot be or enough are kept."""
        try:
            self.folder.mkdir(mode=0o700, exist_ok=True)
            if len(os.listdir(self.folder)) >= MAX_SPARES:
                return False
            os.rename(folder, self.folder / secrets.token_hex(8))
        except OSError:
            return False
        return True
