"""Reading and removing files an agent could have written (its outputs, inputs, HOME, exec log,
logs). The harness reads them with its own privileges, so it never follows a link (a link
could point at a host file), never blocks on a FIFO, reads bounded amounts, and removes trees
of any depth or path length.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

MAX_LINE = 32 * 1024 * 1024  # longer lines are skipped by iter_lines
_PIECE = 1024 * 1024  # what iter_lines reads at a time


def open_regular(path: Path | str | bytes) -> int | None:
    """A read-only descriptor of `path` if it is a regular file (not a link, FIFO, socket or
    device), else None. The caller closes it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def read_capped(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of a regular file; None if it is not one."""
    fd = open_regular(path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(limit)


def iter_lines(path: Path, max_line: int = MAX_LINE, max_total: int | None = None) -> Iterator[str]:
    """The lines of a regular file, decoded with replacement, read a piece at a time: lines
    longer than `max_line` bytes are skipped without being held, and no line is begun once
    `max_total` bytes (skipped ones included) have been read."""
    fd = open_regular(path)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as f:
        while max_total is None or f.tell() < max_total:
            parts: list[bytes] = []
            size, fits = 0, True
            while piece := f.readline(_PIECE):
                size += len(piece)
                fits = size - piece.endswith(b"\n") <= max_line
                if fits:
                    parts.append(piece)
                else:
                    parts.clear()
                if piece.endswith(b"\n"):
                    break
            if not size:
                return
            if fits:
                yield b"".join(parts).decode("utf-8", errors="replace")


def tail(path: Path, n: int) -> str:
    """The last `n` bytes of a file, decoded, without reading the rest."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read(n).decode(errors="replace").strip()
    except OSError:
        return ""


def remove_tree(path: Path) -> None:
    """Remove a tree however deep or long its paths are (shutil.rmtree recurses and stops at
    PATH_MAX; GNU rm does not). Folders the agent made unreadable are opened up first when the
    harness is not root."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        # rmtree would open it first: a FIFO left by the sandbox would block that forever
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    with contextlib.suppress(OSError, RecursionError):
        shutil.rmtree(path)
    for argv in (
        ["rm", "-rf", "--one-file-system", "--", str(path)],
        ["chmod", "-R", "u+rwX", "--", str(path)],
        ["rm", "-rf", "--one-file-system", "--", str(path)],
    ):
        if not os.path.lexists(path):
            return
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
