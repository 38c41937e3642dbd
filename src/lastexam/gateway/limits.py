"""The cap on a request body, and reading a body against it: counted as it arrives, so that
an oversized request is refused (413) before it is held or parsed."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from typing import IO, Any

from lastexam.errors import LastexamError

MAX_BODY = 8 * 1024 * 1024  # the default cap, in bytes
MAX_BODY_ENV = "LASTEXAM_GATEWAY_MAX_BODY_MB"  # the host's setting, in MB
DRAIN_BYTES, DRAIN_TIMEOUT_S = 1024 * 1024, 0.5  # read and dropped after a 413
BODIES_IN_FLIGHT = 2  # a sandbox's requests in flight hold at most this many caps of body


class TooLarge(Exception):
    """A request body over the cap."""


def max_body_from_env() -> int:
    text = os.environ.get(MAX_BODY_ENV)
    if not text:
        return MAX_BODY
    try:
        mb = float(text)
        if not mb > 0:
            raise ValueError
    except ValueError:
        raise LastexamError(f"{MAX_BODY_ENV}={text!r}: expected a positive number of MB") from None
    return int(mb * 1024 * 1024)


def _chunked(headers: Any) -> bool:
    return "chunked" in (headers.get("transfer-encoding") or "").lower()


def read_body(rfile: IO[bytes], headers: Any, cap: int) -> bytes:
    """The body, by Content-Length or chunked transfer: TooLarge past `cap` bytes, before
    any more is read; ValueError for framing that cannot be read."""
    if _chunked(headers):
        parts, total = [], 0
        while True:
            size = int(rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (trailer := rfile.readline(1024)).strip():
                    total += len(trailer)
                    if total > cap:
                        raise TooLarge(total)
                return b"".join(parts)
            total += size
            if total > cap or size < 0:
                raise TooLarge(total)
            parts.append(rfile.read(size))
            rfile.readline(1024)
    length = int(headers.get("content-length") or 0)
    if length > cap or length < 0:
        raise TooLarge(length)
    return rfile.read(length) if length else b""


def drain(connection: socket.socket, rfile: Any) -> None:
    """A client still sending its body would get a broken pipe instead of the 413: take (and
    drop) a little more of it, briefly, before the connection is closed."""
    with contextlib.suppress(OSError):
        connection.settimeout(DRAIN_TIMEOUT_S)
        for _ in range(DRAIN_BYTES // 65536):
            if not rfile.read1(65536):
                break


def expected_size(headers: Any, cap: int) -> int:
    """The body bytes a request will hold: its length, or the cap for a chunked body (0 for
    one that will be refused)."""
    if _chunked(headers):
        return cap
    try:
        length = int(headers.get("content-length") or 0)
    except ValueError:
        return 0
    return length if 0 <= length <= cap else 0


class BodyBytes:
    """The bytes of request bodies one sandbox has in flight: a request waits for room before
    its body is read, and holds it until answered; a request alone always has room."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self._room = threading.Condition()

    @contextlib.contextmanager
    def hold(self, n: int) -> Iterator[None]:
        with self._room:
            while self.used and self.used + n > self.limit:
                self._room.wait()
            self.used += n
        try:
            yield
        finally:
            with self._room:
                self.used -= n
                self._room.notify_all()
