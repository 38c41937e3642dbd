"""The desktop's media of a GUI trial, served to the player and the trial page: the screen
recording and the screenshots. Each has a fixed place in the trial folder, a fixed content
type, a size cap and a signature its first bytes must carry; all are written by processes the
agent controls, so a file that breaks any of these is refused, never sniffed or guessed at.
Byte ranges are served because Chromium seeks in a video with them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import quote

from lastexam.desktop.collect import EBML_MAGIC, PNG_MAGIC
from lastexam.desktop.spec import CAPS
from lastexam.layout import TRIAL
from lastexam.viewer.content import FILE_CSP
from lastexam.viewer.paths import Refused, TrialFolder

SCREEN_NAME = re.compile(rb"[0-9]{4}\.png")  # as collected: screens/NNNN.png
RANGE = re.compile(r"([0-9]{0,18})-([0-9]{0,18})")  # longer numbers: not a range we serve
CHUNK = 1 << 20


@dataclass(frozen=True)
class Media:
    parts: tuple[bytes, ...]  # the path inside the trial folder
    content_type: str
    magic: bytes
    max_bytes: int
    what: str

    @property
    def name(self) -> bytes:
        return self.parts[-1]


# The caps are the collector's: a larger file was not written by the harness.
RECORDING = Media(tuple(os.fsencode(p) for p in TRIAL.recording.parts), "video/webm", EBML_MAGIC,
                  CAPS.recording_bytes, "a WebM video")


def screen(name: bytes) -> Media:
    """A screenshot, screens/NNNN.png: any other name is not one."""
    if not SCREEN_NAME.fullmatch(name):
        raise Refused(404, "a screenshot is named screens/NNNN.png")
    return Media((os.fsencode(TRIAL.screens.name), name), "image/png", PNG_MAGIC, CAPS.screen_bytes,
                 "a PNG image")


def open_media(folder: TrialFolder, media: Media) -> tuple[int, int]:
    """A descriptor of the media file and its size, once it passed the checks; Refused says
    why not (the page shows the same words)."""
    fd, st = folder.open(list(media.parts))
    try:
        if st.st_size > media.max_bytes:
            raise Refused(403, f"{st.st_size:,} bytes, over the viewer's cap of {media.max_bytes >> 20} MB")
        if os.pread(fd, len(media.magic), 0) != media.magic:
            raise Refused(403, f"not {media.what} (its first bytes do not match)")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def check(folder: TrialFolder, media: Media) -> str | None:
    """Why the media cannot be served (None: it can)."""
    try:
        fd, _ = open_media(folder, media)
    except Refused as r:
        return r.why
    os.close(fd)
    return None


class Unsatisfiable(Exception):
    """A byte range that starts past the end of the file (416)."""


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The first and last byte asked for by a Range header, or None for the whole file: a
    header that is not one plain range of bytes is ignored, as HTTP allows."""
    if not header:
        return None
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    m = RANGE.fullmatch(spec.strip())
    if m is None:
        return None
    first, last = m.groups()
    if not first and not last:
        return None
    if not first:  # the last N bytes
        n = int(last)
        if n == 0 or size == 0:
            raise Unsatisfiable
        return max(0, size - n), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size:
        raise Unsatisfiable
    if end < start:
        return None
    return start, end


def headers(media: Media, size: int, span: tuple[int, int] | None) -> dict[str, str]:
    out = {
        "Content-Type": media.content_type,
        "Content-Disposition": f"inline; filename*=UTF-8''{quote(media.name, safe='')}",
        "Content-Security-Policy": FILE_CSP,
        "Cross-Origin-Resource-Policy": "same-origin",
        "Cache-Control": "no-store",
        "Accept-Ranges": "bytes",
    }
    if span is not None:
        out["Content-Range"] = f"bytes {span[0]}-{span[1]}/{size}"
    return out


def chunks(fd: int, start: int, end: int):
    """The bytes start..end (inclusive) of the file, a piece at a time."""
    pos = end + 1
    at = start
    while at < pos:
        piece = os.pread(fd, min(CHUNK, pos - at), at)
        if not piece:
            return
        at += len(piece)
        yield piece
