"""Collecting a desktop trial's folder into its trial folder, once every process of the
sandbox is gone. The agent can write anything there (it runs as the same user as the desktop),
so nothing is trusted: no link is followed, every file is opened as a regular file only, and
counts, sizes and magic numbers are checked against desktop/spec.py's caps. What is kept is
for viewing and GUI-use reports only, never for scoring."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from lastexam.desktop.spec import CAPS, DesktopCaps
from lastexam.layout import DesktopFiles, TrialPaths

SCREEN_NAME = re.compile(r"^[0-9]{4}\.png$")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
EBML_MAGIC = b"\x1a\x45\xdf\xa3"
MAX_LISTED = 50  # names listed per kind of drop; counts cover them all


class _Notes:
    def __init__(self) -> None:
        self.dropped: list[dict[str, str]] = []
        self.dropped_count = 0
        self.capped: list[str] = []

    def drop(self, name: str, why: str) -> None:
        self.dropped_count += 1
        if len(self.dropped) < MAX_LISTED:
            self.dropped.append({"path": name[:200], "why": why})


def collect_desktop(src: Path, trial: TrialPaths, caps: DesktopCaps = CAPS) -> dict[str, Any]:
    """Copy what may be kept of `src` (the desktop folder) into the trial folder; write and
    return the notes of what was kept and what was dropped."""
    notes = _Notes()
    trial.desktop.mkdir(parents=True, exist_ok=True)
    screens = _collect_screens(src, trial.screens, caps, notes)
    kept = []
    if _copy(src, DesktopFiles.RECORDING, trial.recording, caps.recording_bytes, notes,
             check=_is_webm):
        kept.append(DesktopFiles.RECORDING)
    if _copy_meta(src, trial.recording_meta, caps, notes):
        kept.append(DesktopFiles.RECORDING_META)
    for name, dest, cap in (
        (DesktopFiles.WINDOWS_LOG, trial.windows_log, caps.windows_log_bytes),
        (DesktopFiles.SESSION_LOG, trial.desktop_log, caps.session_log_bytes),
    ):
        if _copy(src, name, dest, cap, notes, whole_lines=True):
            kept.append(name)
    expected = {DesktopFiles.SCREENS, DesktopFiles.RECORDING, DesktopFiles.RECORDING_META,
                DesktopFiles.WINDOWS_LOG, DesktopFiles.SESSION_LOG}
    try:
        with os.scandir(src) as it:
            for i, entry in enumerate(it):
                if i >= caps.scan_entries:
                    notes.capped.append(f"more than {caps.scan_entries} entries in the folder")
                    break
                if entry.name not in expected:
                    notes.drop(entry.name, "not a desktop file")
    except OSError as e:
        notes.drop(".", f"unreadable folder: {e.strerror}")
    summary = {"screens": screens, "files": kept, "dropped": notes.dropped,
               "dropped_count": notes.dropped_count, "capped": notes.capped}
    trial.desktop_collected.write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _open_in(dir_fd: int, name: str) -> tuple[int, os.stat_result] | str:
    """A descriptor of the regular file `name` in dir_fd, never through a link; else why not."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError as e:
        return "symlink" if e.errno == 40 else f"unreadable: {e.strerror}"  # 40: ELOOP
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        return "not a regular file" if not stat.S_ISREG(st.st_mode) else "hard link"
    return fd, st


def _open_dir(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None


def _collect_screens(src: Path, dest: Path, caps: DesktopCaps, notes: _Notes) -> int:
    dir_fd = _open_dir(src / DesktopFiles.SCREENS)
    if dir_fd is None:
        if os.path.lexists(src / DesktopFiles.SCREENS):
            notes.drop(DesktopFiles.SCREENS, "not a folder")
        return 0
    kept = 0
    try:
        names: list[str] = []
        with os.scandir(dir_fd) as it:
            for i, entry in enumerate(it):
                if i >= caps.scan_entries:
                    notes.capped.append(f"more than {caps.scan_entries} entries in screens/")
                    break
                if SCREEN_NAME.match(entry.name):
                    names.append(entry.name)
                else:
                    notes.drop(f"screens/{entry.name}", "not named NNNN.png")
        names.sort()
        for i, name in enumerate(names):
            rel = f"screens/{name}"
            if kept >= caps.max_screens:
                notes.capped.append(f"{len(names) - i} screenshots from {rel} on: over the cap "
                                    f"of {caps.max_screens}")
                break
            opened = _open_in(dir_fd, name)
            if isinstance(opened, str):
                notes.drop(rel, opened)
                continue
            fd, st = opened
            with os.fdopen(fd, "rb") as f:
                if st.st_size > caps.screen_bytes:
                    notes.drop(rel, f"larger than {caps.screen_bytes} bytes")
                    continue
                data = f.read(caps.screen_bytes + 1)
            if len(data) > caps.screen_bytes or not data.startswith(PNG_MAGIC):
                notes.drop(rel, "not a PNG image")
                continue
            dest.mkdir(exist_ok=True)
            (dest / name).write_bytes(data)
            kept += 1
    finally:
        os.close(dir_fd)
    return kept


def _is_webm(head: bytes) -> bool:
    return head.startswith(EBML_MAGIC) and b"webm" in head[:64]


def _copy(src: Path, name: str, dest: Path, cap: int, notes: _Notes, *, check=None,
          whole_lines: bool = False) -> bool:
    """Copy src/name to dest: at most `cap` bytes (a longer log is cut at its last whole line
    within the cap; a longer file of another kind is dropped)."""
    dir_fd = _open_dir(src)
    if dir_fd is None:
        return False
    try:
        if not os.path.lexists(src / name):
            return False
        opened = _open_in(dir_fd, name)
    finally:
        os.close(dir_fd)
    if isinstance(opened, str):
        notes.drop(name, opened)
        return False
    fd, st = opened
    with os.fdopen(fd, "rb") as f:
        if st.st_size > cap and not whole_lines:
            notes.drop(name, f"larger than {cap} bytes")
            return False
        head = f.read(64)
        if check is not None and not check(head):
            notes.drop(name, "not of its format")
            return False
        f.seek(0)
        with open(dest, "wb") as out:
            left = cap
            while left > 0 and (block := f.read(min(1 << 20, left))):
                out.write(block)
                left -= len(block)
        if whole_lines and st.st_size > cap:
            notes.capped.append(f"{name} cut at {cap} bytes")
            _cut_after_last_newline(dest)
    return True


def _cut_after_last_newline(path: Path) -> None:
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        pos = size
        while pos > 0:
            step = min(1 << 16, pos)
            f.seek(pos - step)
            block = f.read(step)
            nl = block.rfind(b"\n")
            if nl >= 0:
                f.truncate(pos - step + nl + 1)
                return
            pos -= step
        f.truncate(0)


def _copy_meta(src: Path, dest: Path, caps: DesktopCaps, notes: _Notes) -> bool:
    """recording.json, rewritten from its two numbers (nothing else of it is kept)."""
    dir_fd = _open_dir(src)
    if dir_fd is None:
        return False
    try:
        if not os.path.lexists(src / DesktopFiles.RECORDING_META):
            return False
        opened = _open_in(dir_fd, DesktopFiles.RECORDING_META)
    finally:
        os.close(dir_fd)
    if isinstance(opened, str):
        notes.drop(DesktopFiles.RECORDING_META, opened)
        return False
    fd, _ = opened
    with os.fdopen(fd, "rb") as f:
        raw = f.read(caps.meta_bytes + 1)
    try:
        meta = json.loads(raw) if len(raw) <= caps.meta_bytes else None
        started, fps = float(meta["started_at"]), float(meta["fps"])
        if not (math.isfinite(started) and math.isfinite(fps) and 0 < fps <= 60):
            raise ValueError
    except (TypeError, KeyError, ValueError, UnicodeDecodeError):
        notes.drop(DesktopFiles.RECORDING_META, "not {started_at, fps}")
        return False
    dest.write_text(json.dumps({"started_at": started, "fps": fps}) + "\n")
    return True
