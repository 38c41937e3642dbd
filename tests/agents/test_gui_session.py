"""Issue 13's "Done when", through every real client: a scripted model drives a GUI session on
a GUI task in the real sandbox's desktop — Gnumeric opened from the panel, a click in the
sheet, a value typed, the workbook saved from its Save dialog — and the run holds the saved
file graded, the screenshots in trials/<id>/screens referenced from the trajectory, and the
screen recording. Then each client carries out a real GUI task's desktop-only oracle
(semester-gradebook: Gnumeric driven by xdotool) between two screenshots, graded 1.0."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_json, trial_dir

from .conftest import CLIENTS, SCRIPTS, oracle_script, trajectory

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("agents_ready")]

GNUMERIC_CELL = ROOT / "tests" / "data" / "gui-tasks" / "other" / "gnumeric-cell"
GRADEBOOK = ROOT / "tasks" / "education-information" / "semester-gradebook"
SCRIPT = SCRIPTS / "gnumeric-cell.yaml"
PNG = b"\x89PNG\r\n\x1a\n"
WEBM = b"\x1a\x45\xdf\xa3"  # EBML: Matroska/WebM


@pytest.fixture(scope="module")
def gnumeric_ready() -> None:
    from conftest import run_cli

    run_cli("env", "install", "gnumeric", timeout=1800)


@pytest.mark.usefixtures("gnumeric_ready")
@pytest.mark.per_client
@pytest.mark.parametrize("agent", CLIENTS)
def test_a_scripted_gui_session_through_each_client(agent: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_json("run", GNUMERIC_CELL, "--agent", agent, "--model", f"scripted:{SCRIPT}",
                      "--out", out, timeout=900)
    trial = result["trials"][0]
    folder = trial_dir(out, trial)
    assert trial["status"] == "completed", (trial["error"], _tail(folder))
    assert trial["score"] == 1.0, _tail(folder)  # A1 = 42 in the saved workbook, graded
    record = json.loads((folder / "trial.json").read_text())
    assert record["gui"]["state"] == "used"  # its window mapped and given input (GUI use)

    shots = sorted((folder / "screens").iterdir())
    assert [p.name for p in shots] == ["0001.png", "0002.png"]
    assert all(p.read_bytes().startswith(PNG) for p in shots)

    traj = trajectory(folder)
    calls = [c for s in traj["steps"] for c in s.get("tool_calls") or []]
    actions = [(c["function_name"], c["arguments"]) for c in calls
               if c["function_name"] in ("screenshot", "click", "key", "type", "wait")]
    assert actions == [
        ("click", {"x": 16, "y": 977}), ("screenshot", {}), ("click", {"x": 500, "y": 500}), ("key", {"keys": "ctrl+Home"}),
        ("type", {"text": "42"}), ("key", {"keys": "Return"}), ("key", {"keys": "ctrl+s"}),
        ("wait", {"seconds": 3}), ("key", {"keys": "ctrl+a"}),
        ("type", {"text": "/task/output/answer.gnumeric"}), ("key", {"keys": "Return"}),
        ("wait", {"seconds": 3}), ("screenshot", {}),
    ]
    assert _images(traj) == ["screens/0001.png", "screens/0002.png"]
    assert "iVBORw0KGgo" not in (folder / "trajectory.json").read_text()  # no inlined PNG

    recording = folder / "desktop" / "recording.webm"
    assert recording.read_bytes()[:4] == WEBM and recording.stat().st_size > 1000
    meta = json.loads((folder / "desktop" / "recording.json").read_text())
    assert isinstance(meta["started_at"], float) and meta["fps"] > 0
    # Every step that acted is dated within the recording: the viewer links it to that time.
    acted = [s for s in traj["steps"] if s.get("tool_calls")]
    times = [datetime.fromisoformat(s["timestamp"]).timestamp() for s in acted]
    assert all(meta["started_at"] <= t <= meta["started_at"] + 600 for t in times), times


def _images(traj: dict) -> list[str]:
    return [part["source"]["path"] for s in traj["steps"]
            for r in (s.get("observation") or {}).get("results", [])
            if isinstance(r["content"], list)
            for part in r["content"] if part["type"] == "image"]


def gradebook_script(dest: Path) -> Path:
    """The task's oracle (its solution unpacked and run) started in the background by the
    client's shell tool, waited for in short shell turns (Codex hands a command longer than
    ten seconds back to the model), with a screenshot before and after. The whole background
    job is in its own session: Codex's shell ends with its terminal, whose hangup killed a
    waiting `{ ...; echo $? >rc; }` (the oracle finished, rc never came: 16 waits, 174 s)."""
    oracle = yaml.safe_load(oracle_script(GRADEBOOK, dest).read_text())
    unpack = oracle["turns"][0]["shell"].replace(
        " && bash /tmp/oracle/solution/solve.sh",
        " && setsid sh -c 'bash /tmp/oracle/solution/solve.sh >/tmp/oracle/log 2>&1;"
        " echo $? >/tmp/oracle/rc' </dev/null >/dev/null 2>&1 &")
    # Each wait differs: Gemini CLI stops a session that repeats one tool call.
    waits = [{"shell": f"timeout 25 sh -c 'until [ -e /tmp/oracle/rc ]; do sleep 1; done';"
                       f" cat /tmp/oracle/rc 2>/dev/null || echo running {i}"} for i in range(16)]
    turns = [{"computer": {"action": "screenshot"}}, {"shell": unpack}, *waits,
             {"shell": "cat /tmp/oracle/rc; tail -5 /tmp/oracle/log"},
             {"computer": {"action": "screenshot"}}, {"text": "The gradebook is saved."}]
    dest.write_text(yaml.safe_dump({"turns": turns}))
    return dest


@pytest.mark.usefixtures("gnumeric_ready")
@pytest.mark.per_client
@pytest.mark.parametrize("agent", CLIENTS)
def test_each_client_carries_out_a_real_gui_tasks_oracle(agent: str, tmp_path: Path) -> None:
    script = gradebook_script(tmp_path / "gradebook.yaml")
    out = tmp_path / "run"
    result = run_json("run", GRADEBOOK, "--agent", agent, "--model", f"scripted:{script}",
                      "--out", out, timeout=1800)
    trial = result["trials"][0]
    folder = trial_dir(out, trial)
    assert trial["status"] == "completed", (trial["error"], _tail(folder))
    assert trial["score"] == 1.0, _tail(folder)
    images = _images(trajectory(folder))
    assert len(images) == 2 and images[0] == "screens/0001.png"  # the oracle saves its own too
    assert all((folder / p).read_bytes().startswith(PNG) for p in images)
    assert (folder / "desktop" / "recording.webm").read_bytes()[:4] == WEBM


def _tail(folder: Path) -> str:
    """What to show when the session went wrong: the end of the agent's logs."""
    parts = []
    for name in ("agent.stderr.log", "agent.stdout.log"):
        path = folder / "agent" / name
        if path.is_file():
            parts.append(f"--- {name}\n{path.read_text(errors='replace')[-3000:]}")
    return "\n".join(parts)
