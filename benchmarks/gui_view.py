"""Cost of measured GUI use and of a GUI trial's page in the viewer: deciding used / opened /
bypassed from a window log at the collector's caps (100,000 lines), and serving the page of a
trial with 2,000 computer-use steps (each linked to the recording, one screenshot each).

    python benchmarks/gui_view.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from lastexam.desktop.spec import CAPS, DesktopApp
from lastexam.layout import RunPaths
from lastexam.store.db import create_store
from lastexam.store.models import PolicyDecision, RunConfig, TrialKey, TrialRecord
from lastexam.usage.gui import gui_use
from lastexam.viewer.server import serve

T0 = 1_800_000_000.0
STEPS = 2000


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


def _log(path: Path) -> None:
    with path.open("w") as f:
        f.write(json.dumps({"t": T0, "event": "map", "window": "0x1", "wm_class": "librecad",
                            "wm_instance": "librecad", "title": "LibreCAD", "pid": 7, "exe": "/usr/bin/librecad"}) + "\n")
        for i in range(CAPS.windows_log_lines - 1):
            if i % 3:
                f.write(json.dumps({"t": T0 + i, "event": "input", "keys": 3, "buttons": 1,
                                    "wm_class": "librecad"}) + "\n")
            else:
                f.write(json.dumps({"t": T0 + i, "event": "focus", "window": "0x1", "wm_class": "librecad",
                                    "wm_instance": "librecad", "title": "drawing.dxf - LibreCAD",
                                    "pid": 7, "exe": "/usr/bin/librecad"}) + "\n")


def _run(root: Path) -> tuple[Path, str]:
    key = TrialKey(task_id="cad", agent="bench")
    record = TrialRecord(trial_id=key.trial_id, run_id="r", key=key, task_path="/t", cluster="other",
                         subdomain="other", tier="near-term", status="completed", score=1.0,
                         full_pass=True, started_at=_iso(T0 - 1), finished_at=_iso(T0 + STEPS + 10),
                         policy=PolicyDecision(kind="completed", counts=True))
    root.mkdir()
    store = create_store(root, "r", RunConfig(task_paths=[], agent="bench"), "0", None)
    trial = RunPaths(root).trial(key.trial_id)
    trial.root.mkdir(parents=True)
    store.record_trial(record)
    store.close()
    trial.desktop.mkdir()
    trial.recording.write_bytes(b"\x1a\x45\xdf\xa3" + bytes(1 << 20))
    trial.recording_meta.write_text(json.dumps({"started_at": T0, "fps": 2}))
    steps = [{"step_id": i + 1, "timestamp": _iso(T0 + i), "source": "agent",
              "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "screenshot", "arguments": {}}],
              "observation": {"results": [{"source_call_id": f"c{i}", "content": [
                  {"type": "text", "text": f"saved screens/{i % 9999 + 1:04d}.png"},
                  {"type": "image", "source": {"media_type": "image/png",
                                               "path": f"screens/{i % 9999 + 1:04d}.png"}}]}]}}
             for i in range(STEPS)]
    trial.trajectory.write_text(json.dumps({"session_id": "s", "agent": {"name": "b", "version": "1"},
                                            "steps": steps}))
    return root, key.trial_id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "windows.jsonl"
        _log(log)
        apps = [DesktopApp(name="LibreCAD", exec="librecad", wm_class="librecad")]
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            use = gui_use(log, apps)
            times.append(time.perf_counter() - start)
        print(f"gui_use on {use.events:,} lines ({log.stat().st_size / 1e6:.1f} MB): {use.state}, "
              f"median {statistics.median(times) * 1000:.0f} ms of {args.repeats}")
        run, trial = _run(Path(tmp) / "run")
        server = serve([run])
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/run/run/trial/{trial}"
        for what, linked in ((f"{STEPS:,} steps linked to the recording", STEPS),
                             (f"the same {STEPS:,} steps, no desktop folder", 0)):
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                page = httpx.get(url, timeout=60)
                times.append(time.perf_counter() - start)
            assert page.text.count("class=seek") == linked
            print(f"trial page, {what} ({len(page.content) / 1e6:.1f} MB of HTML): "
                  f"median {statistics.median(times) * 1000:.0f} ms of {args.repeats}")
            shutil.rmtree(run / "trials" / trial / "desktop", ignore_errors=True)
        server.shutdown()


if __name__ == "__main__":
    main()
