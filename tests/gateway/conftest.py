"""A gateway on a unix socket in a temporary folder, and an HTTP client for it."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from lastexam.gateway.server import Gateway
from lastexam.gateway.wire import SSEParser


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
