"""lastexam-agent's computer tools: a minimal MCP client (JSON-RPC over stdio, standard
library only) of the desktop's `computer` server, /opt/desktop/bin/computer-mcp."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading

SERVER = "/opt/desktop/bin/computer-mcp"
PROTOCOL = "2025-06-18"
START_TIMEOUT = 60.0
CALL_TIMEOUT = 180.0  # above the server's longest action (typing 5000 characters)
MAX_LINE = 64 * 1024 * 1024
SAVED = re.compile(r"\bsaved (screens/\d{4}\.png)\b")


class McpError(Exception):
    pass


def desktop_present() -> bool:
    return bool(os.environ.get("DISPLAY")) and os.access(SERVER, os.X_OK)


class ComputerTools:
    """The server's tools: `tools` as MCP lists them, `call` runs one."""

    def __init__(self, argv: list[str]):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.dead = ""
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "lastexam-agent", "version": "1"}},
                     START_TIMEOUT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools: list[dict] = self.request("tools/list", {}, START_TIMEOUT).get("tools") or []

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline(MAX_LINE)
            if not line:
                break
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        except OSError as e:
            self.dead = f"the computer server is gone ({e})"
            raise McpError(self.dead) from None

    def request(self, method: str, params: dict, timeout: float) -> dict:
        if self.dead:
            raise McpError(self.dead)
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                self.dead = f"the computer server did not answer {method} within {timeout:.0f} s"
                self.close()
                raise McpError(self.dead) from None
            if line is None:
                self.dead = f"the computer server exited (code {self.proc.poll()})"
                raise McpError(self.dead)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if "method" in msg and "id" in msg:  # a request of the server's: none is supported
                self.send({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": -32601, "message": "not supported"}})
                continue
            if msg.get("id") != rid:
                continue  # a notification, or the answer to a request given up on
            if "error" in msg:
                raise McpError(f"{method}: {json.dumps(msg['error'])[:1000]}")
            return msg.get("result") or {}

    def names(self) -> set[str]:
        return {t.get("name") for t in self.tools}

    def call(self, name: str, args: dict) -> tuple[str, list[dict], bool]:
        """(text, images [{"media_type", "data" (base64)}], is_error) of one tool call."""
        try:
            result = self.request("tools/call", {"name": name, "arguments": args}, CALL_TIMEOUT)
        except McpError as e:
            return str(e), [], True
        texts, images = [], []
        for block in result.get("content") or []:
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "image" and isinstance(block.get("data"), str):
                images.append({"media_type": block.get("mimeType") or "image/png",
                               "data": block["data"]})
        return "\n".join(texts), images, bool(result.get("isError"))

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


def saved_path(text: str) -> str | None:
    """The trial-relative path of the screenshot a result says it saved."""
    m = SAVED.search(text)
    return m.group(1) if m else None
