"""Request paths and trial folders: what the viewer may read, decided in one place.

A request path is split into segments, each percent-decoded once to bytes; a segment that still
names a separator, a parent, NUL or another escape is refused (400). A trial's files are opened
one component at a time from the run directory with O_NOFOLLOW, so nothing outside the trial's
folder is ever opened: symlinks, hard links (a second name for a file that may live elsewhere)
and anything that is not a regular file are refused."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lastexam.layout import TRIALS_DIR

DOUBLE_ENCODED = re.compile(rb"%[0-9A-Fa-f]{2}")
LISTING_LIMIT = 2000


class Refused(Exception):
    """A request the viewer will not serve: `status` is the HTTP status to answer."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status
        self.why = why


def split_path(target: str) -> list[bytes]:
    """The decoded segments of a request target (origin form only: '/a/b?query')."""
    path = target.split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        raise Refused(400, "the request target must be a path starting with /")
    if "\\" in path:
        raise Refused(400, "backslash in the path")
    raw = path[1:].split("/")
    if raw and raw[-1] == "":
        raw.pop()  # one trailing slash
    return [_segment(s) for s in raw]


def _segment(raw: str) -> bytes:
    from urllib.parse import unquote_to_bytes

    if raw == "":
        raise Refused(400, "empty path segment (an absolute path or '//')")
    seg = unquote_to_bytes(raw)
    if seg in (b".", b".."):
        raise Refused(400, "'.' or '..' in the path")
    for bad, what in ((b"/", "an encoded '/'"), (b"\\", "an encoded backslash"), (b"\0", "NUL")):
        if bad in seg:
            raise Refused(400, f"{what} in a path segment")
    if DOUBLE_ENCODED.search(seg):
        raise Refused(400, "a doubly encoded path segment")
    return seg


def _check_name(name: bytes) -> None:
    if name in (b"", b".", b"..") or b"/" in name or b"\0" in name:
        raise Refused(400, "not a single file name")


def _open_dir(parent: int, name: bytes) -> int:
    _check_name(name)
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError as e:
        raise _refusal(e) from None


def _refusal(e: OSError) -> Refused:
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return Refused(404, "no such file")
    if e.errno == errno.ELOOP:
        return Refused(403, "a symbolic link")
    return Refused(403, f"cannot be opened ({e.strerror})")


class TrialFolder:
    """The folder of one trial found in the store: run_dir/trials/<trial_id>, never a link."""

    def __init__(self, run_dir: Path, trial_id: str):
        self.run_dir = run_dir
        self.trial_id = os.fsencode(trial_id)

    @contextmanager
    def _dir(self, parts: list[bytes]) -> Iterator[int]:
        fd = os.open(self.run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name in [os.fsencode(TRIALS_DIR), self.trial_id, *parts]:
                child = _open_dir(fd, name)
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def open(self, parts: list[bytes]) -> tuple[int, os.stat_result]:
        """A read-only descriptor of the regular file at `parts` inside the folder, and its stat."""
        if not parts:
            raise Refused(404, "no file named")
        with self._dir(parts[:-1]) as parent:
            name = parts[-1]
            _check_name(name)
            try:
                probe = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            except OSError as e:
                raise _refusal(e) from None
            try:
                st = os.fstat(probe)
            finally:
                os.close(probe)
            if stat.S_ISLNK(st.st_mode):
                raise Refused(403, "a symbolic link")
            if stat.S_ISDIR(st.st_mode):
                raise Refused(404, "a folder, not a file")
            if not stat.S_ISREG(st.st_mode):
                raise Refused(403, "not a regular file")
            if st.st_nlink != 1:
                raise Refused(403, "a hard link (the file has other names)")
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
            except OSError as e:
                raise _refusal(e) from None
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino, now.st_nlink) != (st.st_dev, st.st_ino, 1):
                os.close(fd)
                raise Refused(403, "the file changed while it was opened")
            return fd, now

    def read(self, rel: str, limit: int | None = None, tail: bool = False) -> bytes | None:
        """A file's bytes (at most `limit`, the last ones if `tail`); None if it cannot be served."""
        try:
            fd, st = self.open([os.fsencode(p) for p in rel.split("/")])
        except Refused:
            return None
        with os.fdopen(fd, "rb") as f:
            if limit is not None and tail and st.st_size > limit:
                f.seek(st.st_size - limit)
            return f.read(limit if limit is not None else -1)

    def listing(self, under: str) -> tuple[list[tuple[bytes, int]], int] | None:
        """(relative path, size) of the first regular files under `under`, and how many there are;
        None if there is no such folder."""
        try:
            with self._dir([os.fsencode(under)]) as top:
                rows: list[tuple[bytes, int]] = []
                count = 0
                for root, _dirs, files, root_fd in os.fwalk(b".", dir_fd=top):
                    for name in sorted(files):
                        st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                            count += 1
                            if len(rows) < LISTING_LIMIT:
                                rows.append((os.path.normpath(os.path.join(root, name)), st.st_size))
                return sorted(rows), count
        except Refused:
            return None
