"""Collecting what an agent left, after every process of its sandbox is gone: a snapshot of its
regular output files and the state of its inputs. Everything here reads agent-made trees, so
nothing follows a link, blocks on a FIFO, recurses, or reads more than the caps allow.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from itertools import islice
from pathlib import Path

from lastexam.untrusted import open_regular

MAX_DEPTH = 32  # folders nested deeper are not collected
MAX_REL_PATH = 1024  # bytes; keeps every path the snapshot touches far below PATH_MAX
MAX_FOLDERS = 10_000  # folders scanned; the rest are neither scanned nor copied
MAX_ENTRIES = 250_000  # entries looked at in all; past it the scan stops
MAX_DROPPED_LISTED = 200


def snapshot_output(src: Path, dest: Path, *, max_bytes: int, max_files: int = 100_000) -> dict:
    """Copy the regular files under src to dest, with the folders that hold them. Everything
    else (symlinks, files hard-linked from outside the output, devices, FIFOs, sockets, empty
    folders, folders nested too deep) is dropped, and listed, as are files beyond the byte or
    file caps; past the folder or entry caps the scan stops and `capped` says so. Names are
    kept byte for byte."""
    dropped: list[dict[str, str]] = []
    capped: list[str] = []
    src_b, dest_b = os.fsencode(src), os.fsencode(dest)
    entries: list[tuple[bytes, os.stat_result]] = []
    names_per_inode: dict[tuple[int, int], int] = {}
    os.makedirs(dest_b, exist_ok=True)
    stack: list[tuple[bytes, int]] = [(b"", 0)]
    folders = seen = 0
    while stack:
        rel_dir, depth = stack.pop()
        try:
            with os.scandir(os.path.join(src_b, rel_dir) if rel_dir else src_b) as it:
                listing = [(e.name, e.path) for e in islice(it, MAX_ENTRIES - seen + 1)]
        except OSError as e:
            dropped.append(_drop(rel_dir, f"unreadable folder: {e.strerror}"))
            continue
        for name, path in listing:
            seen += 1
            if seen > MAX_ENTRIES:
                capped.append(f"more than {MAX_ENTRIES} entries: the rest was not scanned")
                stack.clear()
                break
            rel = os.path.join(rel_dir, name) if rel_dir else name
            try:
                st = os.lstat(path)
            except OSError as e:
                dropped.append(_drop(rel, f"unreadable: {e.strerror}"))
                continue
            if len(rel) > MAX_REL_PATH:
                dropped.append(_drop(rel[:200], f"path longer than {MAX_REL_PATH} bytes"))
            elif stat.S_ISDIR(st.st_mode):
                if depth + 1 >= MAX_DEPTH:
                    dropped.append(_drop(rel, f"folder nested deeper than {MAX_DEPTH} levels"))
                    continue
                folders += 1
                if folders > MAX_FOLDERS:
                    if folders == MAX_FOLDERS + 1:
                        capped.append(f"more than {MAX_FOLDERS} folders: the rest was not scanned")
                    continue
                stack.append((rel, depth + 1))
            else:
                entries.append((rel, st))
                key = (st.st_dev, st.st_ino)
                names_per_inode[key] = names_per_inode.get(key, 0) + 1
    files = total = 0
    for rel, st in sorted(entries):
        if stat.S_ISLNK(st.st_mode):
            dropped.append(_drop(rel, "symlink"))
            continue
        if not stat.S_ISREG(st.st_mode):
            dropped.append(_drop(rel, _kind(st.st_mode)))
            continue
        if st.st_nlink > names_per_inode[(st.st_dev, st.st_ino)]:
            dropped.append(_drop(rel, "hard link to a file outside the output"))
            continue
        if files >= max_files or total + st.st_size > max_bytes:
            dropped.append(_drop(rel, "over the output size cap"))
            continue
        fd = open_regular(os.path.join(src_b, rel))
        if fd is None:
            dropped.append(_drop(rel, "not a regular file"))
            continue
        parent = os.path.dirname(rel)
        if parent:
            os.makedirs(os.path.join(dest_b, parent), exist_ok=True)
        with os.fdopen(fd, "rb") as f, open(os.path.join(dest_b, rel), "wb") as out:
            copied = _copy_capped(f, out, max_bytes - total)
        files += 1
        total += copied
    return {
        "files": files, "bytes": total, "folders_seen": min(folders, MAX_FOLDERS),
        "dropped": dropped[:MAX_DROPPED_LISTED], "dropped_count": len(dropped),
        "capped": capped,
    }


def _copy_capped(src, dst, limit: int) -> int:
    copied = 0
    while copied < limit:
        block = src.read(min(1 << 20, limit - copied))
        if not block:
            break
        dst.write(block)
        copied += len(block)
    return copied


def _drop(rel: bytes, why: str) -> dict[str, str]:
    return {"path": rel.decode("utf-8", errors="backslashreplace") or ".", "why": why}


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def inputs_state(pristine: Path | Mapping[str, int], staged: Path) -> dict[str, str]:
    """sha256 of each staged input after the agent ran; "missing", "not-regular" or
    "size N" (a size other than the pristine file's: not read, it may be a huge sparse file).
    `pristine` is the task's inputs/ folder, or the size of each of its files (a sealed task)."""
    sizes = pristine if not isinstance(pristine, Path) else {
        p.relative_to(pristine).as_posix(): p.stat().st_size
        for p in pristine.rglob("*") if p.is_file()
    }
    state: dict[str, str] = {}
    for rel, expected_size in sizes.items():
        if not os.path.lexists(staged / rel):
            state[rel] = "missing"
            continue
        fd = open_regular(staged / rel) if not _link_above(staged, rel) else None
        if fd is None:
            state[rel] = "not-regular"
            continue
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size != expected_size:
                state[rel] = f"size {size}"
                continue
            h = hashlib.sha256()
            for block in iter(lambda f=f: f.read(1 << 20), b""):
                h.update(block)
            state[rel] = h.hexdigest()
    return state


def _link_above(root: Path, rel: str) -> bool:
    """Whether a folder on the way from root to rel is a symlink (opening through it would
    read a host file)."""
    path = root
    for part in Path(rel).parts[:-1]:
        path = path / part
        if path.is_symlink():
            return True
    return False
