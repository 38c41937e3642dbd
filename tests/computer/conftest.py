"""The computer-use MCP server on a real Xvfb, through a real MCP client."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli
from lastexam.paths import desktop_toolchain_dir

HERE = Path(__file__).resolve().parent
TIMEOUT = 60.0


@pytest.fixture(scope="session")
def toolchain() -> Path:
    """The installed desktop toolchain (installed by the CLI a user runs; a no-op when it is)."""
    if not shutil.which("Xvfb"):
        from lastexam.envs.manage import apt_install

        apt_install(["xvfb"])
    run_cli("agents", "install", "computer", timeout=1200)
    return desktop_toolchain_dir()


class Lines:
    """A child process's stdout, one JSON object a line, read with a timeout."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.q: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def next(self, timeout: float = TIMEOUT) -> dict:
        item = self.q.get(timeout=timeout)
        assert item is not None, f"the process ended (code {self.proc.wait()})"
        return item

    def drain(self, settle: float = 0.3) -> list[dict]:
        out = []
        while True:
            try:
                item = self.q.get(timeout=settle)
            except queue.Empty:
                return out
            if item is None:
                return out
            out.append(item)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Display:
    def __init__(self, size: str) -> None:
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0", f"{size}x24", "-nolisten", "tcp",
             "-noreset"],  # a reset when the last client leaves refuses connections meanwhile
            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        with os.fdopen(r) as f:
            number = f.readline().strip()
        assert number, "Xvfb did not start"
        self.name = f":{number}"
        self.width, self.height = (int(v) for v in size.split("x"))

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "DISPLAY": self.name, **extra}

    def pointer(self) -> tuple[int, int]:
        out = subprocess.run(["xdotool", "getmouselocation", "--shell"], env=self.env(),
                             capture_output=True, text=True, check=True).stdout
        v = dict(line.split("=", 1) for line in out.split())
        return int(v["X"]), int(v["Y"])

    def window(self, toolchain: Path) -> Lines:
        """The test window (x_window.py), mapped and focused."""
        proc = subprocess.Popen([str(toolchain / "bin" / "python3"), str(HERE / "x_window.py")],
                                env=self.env(), stdout=subprocess.PIPE, text=True)
        lines = Lines(proc)
        assert lines.next()["ev"] == "ready"
        return lines

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Computer:
    """The server, started by the mcp SDK's stdio client (mcp_driver.py)."""

    def __init__(self, toolchain: Path, env: dict[str, str], server: list[str] | None = None) -> None:
        proc = subprocess.Popen(
            [str(toolchain / "bin" / "python3"), str(HERE / "mcp_driver.py"),
             *(server or [str(toolchain / "bin" / "computer-mcp")])],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines = Lines(proc)
        self.tools: list[str] = self.lines.next()["tools"]

    def __call__(self, tool: str, **args: object) -> dict:
        stdin = self.lines.proc.stdin
        assert stdin is not None
        stdin.write(json.dumps({"tool": tool, "args": args}) + "\n")
        stdin.flush()
        return self.lines.next()


@pytest.fixture
def display() -> Iterator[Display]:
    d = Display("1280x800")
    yield d
    d.stop()


@pytest.fixture
def screens(tmp_path: Path) -> Path:
    path = tmp_path / "screens"
    path.mkdir()
    return path


@pytest.fixture
def computer(toolchain: Path, display: Display, screens: Path) -> Iterator[Computer]:
    c = Computer(toolchain, display.env(LASTEXAM_SCREENS_DIR=str(screens)))
    yield c
    c.lines.stop()
