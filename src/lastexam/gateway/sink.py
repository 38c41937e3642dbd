"""The client's side of a call: what the gateway writes back to the sandbox."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any


class TrialEnded(ConnectionAbortedError):
    """Raised on a write once the trial's session is closed: its open streams are cut."""


class ChunkSink:
    """Writes to the client: one body with a length (held until `finish`), or chunked
    transfer for a stream (sent as it comes; `finish` sends the closing chunk)."""

    def __init__(self, handler: Any, received: float, closed: threading.Event):
        self.h = handler
        self.received = received
        self.closed = closed
        self.started = False
        self.stream = False
        self.ttfb_ms: float | None = None
        self._body: bytes | None = None
        self._status = 200
        self._ctype = "application/json"

    def start(self, status: int, content_type: str, stream: bool) -> None:
        self.started, self.stream = True, stream
        self._status, self._ctype = status, content_type
        if stream:
            h = self.h
            h.send_response(status)
            h.send_header("content-type", content_type)
            h.send_header("cache-control", "no-cache")
            h.send_header("transfer-encoding", "chunked")
            h.end_headers()
            h.wfile.flush()

    def write(self, chunk: bytes) -> None:
        if self.closed.is_set():
            raise TrialEnded("the trial ended")
        if self.ttfb_ms is None:
            self.ttfb_ms = round((time.monotonic() - self.received) * 1000, 3)
        if not self.stream:
            self._body = chunk
        elif chunk:
            self.h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.h.wfile.flush()

    def finish(self) -> None:
        if not self.started:
            return
        h = self.h
        with contextlib.suppress(OSError):
            if self.stream:
                h.wfile.write(b"0\r\n\r\n")
            else:
                body = self._body or b""
                h.send_response(self._status)
                h.send_header("content-type", self._ctype)
                h.send_header("content-length", str(len(body)))
                h.end_headers()
                h.wfile.write(body)
            h.wfile.flush()
