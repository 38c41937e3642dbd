"""A gateway on a unix socket in a temporary folder, an HTTP client for it, and a fake
provider on 127.0.0.1 that logs what it receives (the gateway's real upstream client talks
to it over HTTP; there is no network here)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from lastexam.gateway.models import Usage
from lastexam.gateway.server import Gateway
from lastexam.gateway.wire import WIRES, Reply, SSEParser

KEY = "sk-fake-FORWARDING-KEY-0123456789"
USAGE = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=3000, cache_write_tokens=500)


class FakeProvider(BaseHTTPRequestHandler):
    """Answers in the wire of the path, streamed when asked, or with `answer` as it is (a
    JSON body a real provider would send) when set; each request is logged in `seen`. An
    answer can stop after `hold_after` events (0: before its status) until `release` is set,
    or hang up after `drop_after` events."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[dict]] = []
    fail_with: ClassVar[int | None] = None
    answer: ClassVar[dict | None] = None
    hold_after: ClassVar[int | None] = None
    drop_after: ClassVar[int | None] = None
    gap_s: ClassVar[float] = 0.0  # a pause before each event after the first
    release: ClassVar[threading.Event] = threading.Event()
    finished: ClassVar[list[str]] = []  # paths of the requests answered to the end

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        FakeProvider.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if FakeProvider.hold_after == 0:
            FakeProvider.release.wait(60)
        if FakeProvider.fail_with or FakeProvider.answer is not None:
            out = (json.dumps(FakeProvider.answer).encode() if FakeProvider.answer is not None
                   else b'{"error": {"type": "overloaded_error", "message": "busy"}}')
            self.send_response(FakeProvider.fail_with or 200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        wire = WIRES["anthropic"] if "/messages" in self.path else (
            WIRES["chat"] if "/chat/" in self.path else
            WIRES["responses"] if "/responses" in self.path else WIRES["gemini"])
        stream = bool(body.get("stream")) or "stream" in self.path
        if wire.name == "chat" and stream and not body.get("stream_options", {}).get("include_usage"):
            usage = Usage()
        else:
            usage = USAGE
        chunks = list(wire.render(Reply(text="hello from upstream", usage=usage), "upstream-model",
                                  stream))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        self.send_header("content-length", str(sum(len(c) for c in chunks)))
        self.end_headers()
        for i, chunk in enumerate(chunks, 1):
            if i > 1 and FakeProvider.gap_s:
                time.sleep(FakeProvider.gap_s)
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                return
            if i == FakeProvider.drop_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if i == FakeProvider.hold_after:
                FakeProvider.release.wait(60)
        FakeProvider.finished.append(self.path)


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeProvider)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("LASTEXAM_ANTHROPIC_BASE_URL", base)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", base + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("LASTEXAM_GEMINI_BASE_URL", base)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    FakeProvider.seen, FakeProvider.finished, FakeProvider.answer = [], [], None
    FakeProvider.fail_with = FakeProvider.hold_after = FakeProvider.drop_after = None
    FakeProvider.gap_s = 0.0
    FakeProvider.release = threading.Event()
    yield FakeProvider
    FakeProvider.release.set()
    server.shutdown()
    server.server_close()


def wait_for(condition: Callable[[], Any], what: str, limit_s: float = 30) -> Any:
    """Polls until `condition` is true (the gateway records a call on its own thread)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def raw_request(socket_path: Path, path: str, body: bytes, headers: dict[str, str]) -> socket.socket:
    """Sends one POST on a fresh connection and returns the socket, to read from or drop."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(socket_path))
    head = f"POST {path} HTTP/1.1\r\nHost: gw\r\ncontent-type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock.sendall(head.encode() + f"content-length: {len(body)}\r\n\r\n".encode() + body)
    return sock


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    got = b""
    while marker not in got:
        piece = sock.recv(65536)
        if not piece:
            raise AssertionError(f"connection closed before {marker!r}: {got[-500:]!r}")
        got += piece
    return got


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path):
        super().__init__("localhost", timeout=30)
        self.socket_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self.socket_path)


class Client:
    def __init__(self, socket_path: Path):
        self.conn = UnixConnection(socket_path)

    def post(self, path: str, body: dict, headers: dict[str, str]) -> tuple[int, Any, str]:
        """(status, parsed body or list of streamed event payloads, content type)"""
        self.conn.request("POST", path, json.dumps(body).encode(),
                          {"content-type": "application/json", **headers})
        resp = self.conn.getresponse()
        raw = resp.read()
        ctype = resp.getheader("content-type") or ""
        if "text/event-stream" in ctype:
            parser = SSEParser()
            parser.feed(raw)
            parser.close()
            return resp.status, parser.events, ctype
        return resp.status, json.loads(raw) if raw else None, ctype


@pytest.fixture
def gateway(tmp_path: Path):
    gw = Gateway(tmp_path / "gw" / "gateway.sock")
    gw.start()
    yield gw
    gw.stop()


@pytest.fixture
def client(gateway: Gateway) -> Client:
    return Client(gateway.socket_path)


def write_script(path: Path, text: str) -> str:
    path.write_text(text)
    return f"scripted:{path}"
