"""The viewer's HTTP server: stdlib, threaded, bound to 127.0.0.1."""

from __future__ import annotations

import os
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from lastexam.analysis.rows import TrialRow, load_rows
from lastexam.store.db import Store
from lastexam.store.models import TrialRecord
from lastexam.viewer import pages


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


def make_handler(runs: Runs) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args) -> None:  # quiet: the CLI prints the URL
            return

        def _send(self, status: int, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", "default-src 'self' data:; style-src 'unsafe-inline'")
            self.end_headers()
            self.wfile.write(body)

        def _html(self, text: str) -> None:
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", text.encode())

        def _not_found(self, what: str) -> None:
            self._send(HTTPStatus.NOT_FOUND, "text/html; charset=utf-8",
                       pages.page("not found", f"<h1>Not found</h1><p>{pages.e(what)}</p>").encode())

        def do_GET(self) -> None:
            parts = [unquote(p) for p in self.path.split("?", 1)[0].split("/") if p]
            if not parts:
                return self._html(pages.runs_page({n: runs.rows(n) for n in runs.dirs}))
            if parts[0] != "run" or len(parts) < 2 or parts[1] not in runs.dirs:
                return self._not_found(self.path)
            name = parts[1]
            if len(parts) == 2:
                return self._html(pages.run_page(name, runs.rows(name)))
            if len(parts) >= 4 and parts[2] == "trial":
                folder = runs.dirs[name] / "trials" / parts[3]
                if len(parts) == 4:
                    record = runs.record(name, parts[3])
                    if record is None:
                        return self._not_found(parts[3])
                    return self._html(pages.trial_page(name, record, folder))
                if parts[4] == "file" and len(parts) > 5:
                    return self._file(folder, "/".join(parts[5:]))
            return self._not_found(self.path)

        def _file(self, folder: Path, rel: str) -> None:
            target = (folder / rel).resolve()
            inside = target.is_relative_to(folder.resolve())
            if not inside or not target.is_file() or os.path.islink(folder / rel):
                return self._not_found(rel)
            ctype, body = pages.file_page(target, rel)
            self._send(HTTPStatus.OK, ctype, body)

    return Handler


def serve(run_dirs: list[Path], port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(Runs(run_dirs)))
    server.daemon_threads = True
    return server
