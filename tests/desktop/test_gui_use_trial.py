"""Measured GUI use and the recording through real desktop trials (the real CLI, sandbox, X
server, window monitor and recorder): an agent that types into the declared app used it, one
that only opens it opened it, one that writes the result with awk bypassed it; `show` counts
them; the real recording plays in the viewer in Chromium."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from conftest import run_cli

from .conftest import gui_task, record, run_trial

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
RESULT = r"""awk -F, 'NR > 1 { s += $1; n++ } END { printf "{\"total\": %.6f, \"count\": %d}\n", s, n }' \
    /task/inputs/data.csv > /task/output/result.json"""
USES_APP = r"""
xmessage -name note 'hello' &
win=$(xdotool search --sync --class Xmessage | head -1)
xdotool windowactivate --sync "$win" key a b c
sleep 2
""" + RESULT
OPENS_APP = r"""
xmessage -name note 'hello' &
xdotool search --sync --class Xmessage > /dev/null
sleep 2
""" + RESULT
BYPASSES_APP = "sleep 2\n" + RESULT


@pytest.fixture(scope="module")
def trials(tmp_path_factory, desktop_ready) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gui-use")
    task = gui_task(root)
    out = {}
    for name, cmd in (("uses", USES_APP), ("opens", OPENS_APP), ("bypasses", BYPASSES_APP)):
        trial, folder = run_trial(task, root / name, cmd)
        assert trial["status"] == "completed" and trial["score"] == 1.0, trial
        out[name] = folder
    return out


def test_used_opened_and_bypassed_in_real_trials(trials: dict[str, Path]) -> None:
    used, bypassed = record(trials["uses"])["gui"], record(trials["bypasses"])["gui"]
    opened = record(trials["opens"])["gui"]
    assert opened["state"] == "opened" and opened["apps"][0]["input_events"] == 0, opened
    assert used["state"] == "used" and used["malformed"] == 0, used
    app = used["apps"][0]
    assert app["wm_class"] == "Xmessage" and app["mapped"] >= 1 and app["keys"] == 3, app
    assert bypassed["state"] == "bypassed" and bypassed["events"] > 0, bypassed  # the panel's window
    assert bypassed["apps"][0]["mapped"] == 0
    shown = run_cli("show", *(folder.parent.parent for folder in trials.values()),
                    env={"COLUMNS": "200"}).stdout
    table = shown.split("use of the declared GUI application", 1)[1]
    lines = [re.sub(r"\s+", " ", ln.replace("│", " ")).strip() for ln in table.splitlines()]
    for state in ("used", "opened only", "bypassed"):
        assert f"command {state} 1 33.3% 100.0% 100.0%" in lines, lines


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
def test_real_recording_plays_in_the_viewer(trials: dict[str, Path]) -> None:
    from gui_trials import viewer
    from playwright.sync_api import sync_playwright

    folder = trials["uses"]
    with viewer([folder.parent.parent]) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page()
        page.goto(f"{url}run/{folder.parent.parent.name}/trial/{folder.name}")
        assert "<b>used</b>" in page.content()
        collected = (folder / "desktop" / "collected.json").read_text()
        assert "<iframe" in page.content(), f"no recording to play; the collector says: {collected}"
        deadline = time.monotonic() + 60
        while True:
            frame = page.frame(name="player")
            video = frame.locator("video") if frame else None
            state = video.evaluate("v => ({ready: v.readyState, duration: v.duration, error: v.error})") \
                if video is not None and video.count() == 1 else {"ready": 0, "error": None}
            if state["ready"] >= 2 or state["error"]:
                break
            assert time.monotonic() < deadline, "the recording never loaded"
            time.sleep(0.2)
        assert state["error"] is None and state["duration"] > 0, state
        browser.close()
