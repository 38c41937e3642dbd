"""Synthetic GUI trials for the viewer and GUI-use tests: a run directory with a real store whose
trials' folders hold what the desktop writes (Contracts A and C), made here, not by a desktop."""

from __future__ import annotations

import json
import struct
import subprocess
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lastexam.layout import RunPaths
from lastexam.store.db import create_store
from lastexam.store.models import PolicyDecision, RunConfig, TrialKey, TrialRecord
from lastexam.viewer.server import serve

T0 = 1_800_000_000.0  # the recording's start, epoch seconds


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


def png(width: int = 4, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    raw = b"".join(b"\0" + bytes([120]) * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def webm(path: Path, seconds: int = 6) -> Path:
    """A real VP8 WebM of ffmpeg's test pattern, 10 frames a second."""
    subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"testsrc=duration={seconds}:size=320x240:rate=10", "-c:v", "libvpx", "-b:v", "300k",
         "-g", "10", str(path)], check=True, timeout=120)
    return path


def record(task: str, agent: str = "scripted-gui", attempt: int = 1, *, score: float = 0.0,
           full_pass: bool = False, start: float = T0 - 1, end: float = T0 + 10, **extra: Any) -> TrialRecord:
    key = TrialKey(task_id=task, agent=agent, attempt=attempt)
    return TrialRecord(
        trial_id=key.trial_id, run_id="r", key=key, task_path=f"/tasks/{task}", cluster="other",
        subdomain="other", tier="near-term", status="completed", score=score, full_pass=full_pass,
        started_at=iso(start), finished_at=iso(end),
        policy=PolicyDecision(kind="completed", counts=True), **extra,
    )


def make_run(run_dir: Path, records: list[TrialRecord]) -> RunPaths:
    run_dir.mkdir(parents=True, exist_ok=True)
    store = create_store(run_dir, "r", RunConfig(task_paths=[], agent="scripted-gui"), "0", None)
    try:
        for r in records:
            RunPaths(run_dir).trial(r.trial_id).root.mkdir(parents=True, exist_ok=True)
            store.record_trial(r)
    finally:
        store.close()
    return RunPaths(run_dir)


def trajectory(steps: list[dict[str, Any]]) -> str:
    return json.dumps({"schema_version": "ATIF-v1.4", "session_id": "s",
                       "agent": {"name": "scripted-gui", "version": "1"}, "steps": steps})


def gui_step(step_id: int, at: float, action: str, shot: str | None = None) -> dict[str, Any]:
    """A computer-use step as the trajectory builders write it: a screenshot's result is a
    list of ATIF v1.6 parts, its text and the image by its path in the trial folder."""
    content: Any = "done"
    if shot:
        content = [{"type": "text", "text": f"saved {shot}"},
                   {"type": "image", "source": {"media_type": "image/png", "path": shot}}]
    results = [{"source_call_id": f"c{step_id}", "content": content}]
    return {"step_id": step_id, "timestamp": iso(at), "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": f"c{step_id}", "function_name": action, "arguments": {}}],
            "observation": {"results": results}}


@contextmanager
def viewer(run_dirs: list[Path]) -> Iterator[str]:
    """A viewer serving the runs in this process; yields its base URL."""
    server = serve(run_dirs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
