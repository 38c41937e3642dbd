"""The screen recording plays in Chromium (Debian's, through Playwright): finalised when the
agent's command ends, and still playable when the recorder is killed mid-trial."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import ffprobe, gui_task, run_trial

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
TABLE = '[desktop]\nscreen = "640x480"\n'
MOVING = "for i in $(seq 12); do xdotool mousemove $((i * 40)) $((i * 30)); sleep 0.5; done"


def play(page, video: Path) -> dict:
    """Open a page beside the video (a file:// video needs a file:// page) and play the video
    to its end, for at most 10 s."""
    html = video.with_name("play.html")
    html.write_text(f'<video id="v" muted src="{video.name}"></video>')
    page.goto(html.as_uri())
    return page.evaluate("""async () => {
        const v = document.getElementById("v");
        const within = (ms, setup) => new Promise(ok => { setup(ok); setTimeout(ok, ms); });
        await within(10000, ok => { if (v.readyState >= 2) ok(); v.onloadeddata = ok; v.onerror = ok; });
        const duration = String(v.duration);
        if (!v.error) { v.play(); await within(10000, ok => { v.onended = ok; }); }
        return {width: v.videoWidth, height: v.videoHeight, duration, played: v.currentTime,
                ended: v.ended, error: v.error && v.error.message};
    }""")


def test_recordings_play_in_chromium(tmp_path: Path, desktop_ready) -> None:
    from playwright.sync_api import sync_playwright

    task = gui_task(tmp_path, table=TABLE)
    _, whole = run_trial(task, tmp_path / "whole", MOVING)
    _, cut = run_trial(task, tmp_path / "cut", f"{MOVING}; kill -KILL $(pgrep -x ffmpeg); sleep 1")
    whole_webm, cut_webm = whole / "desktop" / "recording.webm", cut / "desktop" / "recording.webm"
    assert float(ffprobe(whole_webm)["format"]["duration"]) >= 5
    assert "duration" not in ffprobe(cut_webm)["format"]  # never finalised
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--allow-file-access-from-files", "--autoplay-policy=no-user-gesture-required"],
        )
        page = browser.new_page()
        done = play(page, whole_webm)
        assert (done["width"], done["height"]) == (640, 480) and done["error"] is None
        assert float(done["duration"]) >= 5 and done["ended"] and done["played"] >= 5
        cut_played = play(page, cut_webm)
        assert (cut_played["width"], cut_played["height"]) == (640, 480)
        assert cut_played["duration"] == "Infinity"  # unknown until played through
        assert cut_played["error"] is None and cut_played["ended"] and cut_played["played"] > 1
        browser.close()
