"""The viewer's HTTP server: stdlib, threaded, bound to 127.0.0.1. It serves run data, never the
file system: runs by the folder names it was given, trials by their id in the run's store, files
only inside a stored trial's folder (viewer/paths.py), agent-written files as inert downloads or
plain text (viewer/content.py), and only to requests addressed to the bound host and port."""

from __future__ import annotations

import os
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from lastexam.errors import LastexamError
from lastexam.store.db import Store
from lastexam.store.models import TrialRecord
from lastexam.store.rows import TrialRow, load_rows
from lastexam.viewer import desktop, media, pages
from lastexam.viewer.content import (
    INLINE_MAX_BYTES,
    PAGE_CSP,
    PLAYER_CSP,
    TRIAL_PAGE_CSP,
    file_headers,
)
from lastexam.viewer.paths import Refused, TrialFolder, split_path


class Runs:
    """The run directories being viewed, looked up by folder name."""

    def __init__(self, run_dirs: list[Path]):
        self.dirs = {d.name: d.resolve() for d in run_dirs}

    def rows(self, name: str) -> list[TrialRow]:
        store = Store(self.dirs[name])
        try:
            return load_rows(store, run=name)
        finally:
            store.close()

    def record(self, name: str, trial_id: str) -> TrialRecord | None:
        store = Store(self.dirs[name])
        try:
            return next(store.trials(trial_id=trial_id), None)
        finally:
            store.close()


def allowed_hosts(port: int) -> set[str]:
    """The Host header values of requests meant for this server (others may be DNS rebinding)."""
    return {f"127.0.0.1:{port}", f"localhost:{port}"}


def _name(segment: bytes) -> str:
    try:
        return segment.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(HTTPStatus.NOT_FOUND, "no such page") from None


def make_handler(runs: Runs) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        csp = PAGE_CSP

        def log_message(self, format: str, *args) -> None:  # quiet: the CLI prints the URL
            return

        def end_headers(self) -> None:  # on every response, error pages included
            self.send_header("Content-Security-Policy", self.csp)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            super().end_headers()

        def _head(self, status: int, headers: dict[str, str], length: int) -> None:
            headers = dict(headers)
            self.csp = headers.pop("Content-Security-Policy", PAGE_CSP)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(length))
            self.end_headers()

        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            self._head(status, headers, len(body))
            self.wfile.write(body)

        def _html(self, text: str, status: int = HTTPStatus.OK, csp: str = PAGE_CSP) -> None:
            self._send(status, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": csp},
                       text.encode())

        def _refuse(self, status: int, what: str) -> None:
            title = HTTPStatus(status).phrase
            self._html(pages.page(title, f"<h1>{pages.e(title)}</h1><p>{pages.e(what)}</p>"), status)

        def _host_ok(self) -> bool:
            hosts = self.headers.get_all("Host") or []
            if len(hosts) != 1:
                self._refuse(HTTPStatus.BAD_REQUEST, "exactly one Host header is required")
                return False
            if hosts[0].strip().lower() not in allowed_hosts(self.server.server_address[1]):
                self._refuse(HTTPStatus.FORBIDDEN, "this viewer answers only to 127.0.0.1 or localhost at its port")
                return False
            return True

        def do_GET(self) -> None:
            if not self._host_ok():
                return
            try:
                segments = split_path(self.path)
                self._route([_name(s) for s in segments[:5]], segments[5:])
            except Refused as r:
                self._refuse(r.status, r.why)
            except LastexamError as e:  # e.g. a results.db removed or corrupted while viewed
                self._refuse(HTTPStatus.INTERNAL_SERVER_ERROR, e.render())
            except (BrokenPipeError, ConnectionResetError):  # the browser went away
                return

        def _route(self, parts: list[str], file: list[bytes]) -> None:
            if not parts:
                return self._html(pages.runs_page({n: runs.rows(n) for n in runs.dirs}))
            if parts[0] != "run" or len(parts) < 2 or parts[1] not in runs.dirs:
                raise Refused(HTTPStatus.NOT_FOUND, "no such run")
            name = parts[1]
            if len(parts) == 2:
                return self._html(pages.run_page(name, runs.rows(name)))
            if len(parts) < 4 or parts[2] != "trial":
                raise Refused(HTTPStatus.NOT_FOUND, "no such page")
            record = runs.record(name, parts[3])
            if record is None:
                raise Refused(HTTPStatus.NOT_FOUND, "no such trial in this run's store")
            folder = TrialFolder(runs.dirs[name], record.trial_id)
            page = parts[4] if len(parts) > 4 else ""
            if page == "":
                return self._html(pages.trial_page(name, record, folder), csp=TRIAL_PAGE_CSP)
            if page == "file":
                return self._file(folder, file)
            if page == "recording" and not file:
                return self._media(folder, media.RECORDING)
            if page == "screen" and len(file) == 1:
                return self._media(folder, media.screen(file[0]))
            if page == "player" and not file:
                t = desktop.player_query(parse_qs(urlsplit(self.path).query))
                base = pages.trial_base(name, record.trial_id)
                return self._html(desktop.player_page(base, t, media.check(folder, media.RECORDING)),
                                  csp=PLAYER_CSP)
            raise Refused(HTTPStatus.NOT_FOUND, "no such page")

        def _media(self, folder: TrialFolder, kind: media.Media) -> None:
            fd, size = media.open_media(folder, kind)
            try:
                try:
                    span = media.byte_range(self.headers.get("Range"), size)
                except media.Unsatisfiable:
                    self._head(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
                               {**media.headers(kind, size, None), "Content-Range": f"bytes */{size}"}, 0)
                    return
                start, end = span if span is not None else (0, size - 1)
                status = HTTPStatus.PARTIAL_CONTENT if span is not None else HTTPStatus.OK
                self._head(status, media.headers(kind, size, span), end - start + 1)
                sent = 0
                for piece in media.chunks(fd, start, end):
                    self.wfile.write(piece)
                    sent += len(piece)
                if sent != end - start + 1:  # the file shrank: the length sent was wrong
                    self.close_connection = True
            finally:
                os.close(fd)

        def _file(self, folder: TrialFolder, parts: list[bytes]) -> None:
            fd, st = folder.open(parts)
            with os.fdopen(fd, "rb") as f:
                if st.st_size <= INLINE_MAX_BYTES:
                    body = f.read(INLINE_MAX_BYTES)
                    return self._send(HTTPStatus.OK, file_headers(parts[-1], body), body)
                self._head(HTTPStatus.OK, file_headers(parts[-1], None), st.st_size)
                left = st.st_size
                while left > 0 and (chunk := f.read(min(left, 1 << 20))):
                    self.wfile.write(chunk)
                    left -= len(chunk)

    return Handler


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        # A browser that went away before its answer was written (on any path, a refusal
        # included) is not the viewer's error: no traceback for it.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def serve(run_dirs: list[Path], port: int = 0) -> ThreadingHTTPServer:
    server = _Server(("127.0.0.1", port), make_handler(Runs(run_dirs)))
    server.daemon_threads = True
    return server
