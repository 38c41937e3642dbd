"""A GUI trial in the viewer: its recording plays in real Chromium beside the trajectory, a step's
link seeks to the step's time, screenshots show; and the recording, screenshots and their
metadata, all written inside the sandbox, are served only as what they claim to be."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from pathlib import Path

import httpx
import pytest
from gui_trials import T0, gui_step, make_run, png, record, trajectory, viewer, webm

from lastexam.viewer import media

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
STEP_TIMES = (1.0, 2.5, 4.0)  # seconds into the recording


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> bytes:
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed")
    return webm(tmp_path_factory.mktemp("clip") / "clip.webm").read_bytes()


def gui_run(root: Path, clip: bytes, meta: object = None) -> tuple[Path, str]:
    """A run with one GUI trial: recording, recording.json (`meta`, default a good one),
    three GUI steps at STEP_TIMES, two of them with a screenshot."""
    rec = record("draw-plan")
    trial = make_run(root / "run", [rec]).trial(rec.trial_id)
    trial.desktop.mkdir()
    trial.recording.write_bytes(clip)
    meta = {"started_at": T0, "fps": 10} if meta is None else meta
    trial.recording_meta.write_text(meta if isinstance(meta, str) else json.dumps(meta))
    trial.screens.mkdir()
    for n in (1, 2):
        (trial.screens / f"{n:04d}.png").write_bytes(png(40 * n, 30))
    steps = [{"step_id": 1, "timestamp": "2000-01-01T00:00:00+00:00", "source": "user", "message": "task"}]
    steps += [gui_step(i + 2, T0 + t, action, shot) for i, (t, action, shot) in
              enumerate(zip(STEP_TIMES, ("screenshot", "click", "screenshot"),
                            ("screens/0001.png", None, "screens/0002.png"), strict=True))]
    trial.trajectory.write_text(trajectory(steps))
    return root / "run", rec.trial_id


def _chromium(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=[
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--autoplay-policy=no-user-gesture-required"])


VIDEO_STATE = ("v => ({ready: v.readyState, duration: v.duration, error: v.error && v.error.code,"
               " t: v.currentTime, seeking: v.seeking})")


def _ready(page, src_end: str, at: float = 0.0) -> dict:
    """The player's video state once it has loaded its data at `src_end` and, for a time
    `at` > 0, left its start (Chromium may report data before it applies the fragment's
    time). Polled from here: the page's policy forbids evaluating strings in it."""
    deadline = time.monotonic() + 60
    while True:
        frame = page.frame(name="player")
        video = frame.locator("video") if frame else None
        if video is not None and video.count() == 1:
            state = video.evaluate(VIDEO_STATE)
            src = video.evaluate("v => v.src")
            if state["error"] or (src.endswith(src_end) and state["ready"] >= 2 and not state["seeking"]
                                  and (at == 0 or state["t"] > 0)):
                return state
        assert time.monotonic() < deadline, "the recording never loaded"
        time.sleep(0.1)


@needs_chromium
@needs_ffmpeg
def test_recording_plays_and_steps_seek_in_chromium(tmp_path: Path, clip: bytes) -> None:
    from playwright.sync_api import sync_playwright

    run, trial = gui_run(tmp_path, clip)
    with viewer([run]) as url, sync_playwright() as p:
        browser = _chromium(p)
        page = browser.new_page()
        page.goto(f"{url}run/run/trial/{trial}")
        state = _ready(page, "/recording#t=0.000")
        assert state["duration"] > 5 and state["error"] is None and state["t"] == 0
        links = page.locator("a.seek")
        assert links.count() == len(STEP_TIMES)  # the user step, before the recording, has none
        for i, t in enumerate(STEP_TIMES):
            links.nth(i).click()
            state = _ready(page, f"/recording#t={t:.3f}", t)
            assert abs(state["t"] - t) < 0.15 and state["error"] is None, state
        thumbs = page.locator("img.thumb")
        assert thumbs.count() == 2
        widths = [thumbs.nth(i).evaluate("i => i.complete && i.naturalWidth") for i in range(2)]
        assert widths == [40, 80]  # each step shows its own screenshot, decoded as a PNG
        browser.close()


def test_media_served_with_fixed_types_and_ranges(tmp_path: Path, clip: bytes) -> None:
    run, trial = gui_run(tmp_path, clip)
    with viewer([run]) as url:
        base = f"{url}run/run/trial/{trial}"
        whole = httpx.get(f"{base}/recording")
        assert whole.status_code == 200 and whole.content == clip
        assert whole.headers["content-type"] == "video/webm"
        assert whole.headers["x-content-type-options"] == "nosniff"
        assert whole.headers["accept-ranges"] == "bytes"
        part = httpx.get(f"{base}/recording", headers={"Range": "bytes=100-199"})
        assert part.status_code == 206 and part.content == clip[100:200]
        assert part.headers["content-range"] == f"bytes 100-199/{len(clip)}"
        tail = httpx.get(f"{base}/recording", headers={"Range": "bytes=-10"})
        assert tail.status_code == 206 and tail.content == clip[-10:]
        rest = httpx.get(f"{base}/recording", headers={"Range": f"bytes={len(clip) - 5}-"})
        assert rest.status_code == 206 and rest.content == clip[-5:]
        past = httpx.get(f"{base}/recording", headers={"Range": f"bytes={len(clip)}-"})
        assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{len(clip)}"
        several = httpx.get(f"{base}/recording", headers={"Range": "bytes=0-1,5-6"})
        assert several.status_code == 200 and several.content == clip
        shot = httpx.get(f"{base}/screen/0002.png")
        assert shot.status_code == 200 and shot.content == png(80, 30)
        assert shot.headers["content-type"] == "image/png"
        assert shot.headers["x-content-type-options"] == "nosniff"
        player = httpx.get(f"{base}/player?t=2.5")
        assert f"{base[len(url) - 1:]}/recording#t=2.500" in player.text
        assert "media-src 'self'" in player.headers["content-security-policy"]
        assert "script-src" not in player.headers["content-security-policy"]
        for bad in ("nan", "-3", "1e99", "x"):
            assert "recording#t=0.000" in httpx.get(f"{base}/player?t={bad}").text


def test_traversal_links_and_wrong_names_refused(tmp_path: Path, clip: bytes) -> None:
    run, trial = gui_run(tmp_path, clip)
    secret = tmp_path / "secret.png"
    secret.write_bytes(png())
    folder = run / "trials" / trial
    (folder / "screens" / "0003.png").symlink_to(secret)
    (folder / "screens" / "0004.png").hardlink_to(secret)
    (folder / "screens" / "0005.png").mkdir()
    for odd in ("evil.svg", "12345.png", "0006.PNG", "0007.png.svg"):  # real PNGs, names not NNNN.png
        (folder / "screens" / odd).write_bytes(png())
    with viewer([run]) as url:
        base = f"{url}run/run/trial/{trial}"
        for path, status in (("screen/..%2F..%2F..%2Fsecret.png", 400), ("screen/%2e%2e", 400),
                             ("screen/0003.png", 403), ("screen/0004.png", 403),
                             ("screen/0005.png", 404), ("screen/0009.png", 404),
                             ("screen/evil.svg", 404), ("screen/12345.png", 404),
                             ("screen/0006.PNG", 404), ("screen/0007.png.svg", 404),
                             ("screen/0001.png/x", 404), ("recording/x", 404), ("player/x", 404)):
            r = httpx.get(f"{base}/{path}")
            assert r.status_code == status, (path, r.status_code)
            assert r.content != png()
        # the recording itself a link to a file outside, then its folder a link
        (folder / "desktop" / "recording.webm").unlink()
        outside = tmp_path / "outside.webm"
        outside.write_bytes(clip)
        (folder / "desktop" / "recording.webm").symlink_to(outside)
        assert httpx.get(f"{base}/recording").status_code == 403
        page = httpx.get(base).text
        assert "<iframe" not in page and "a symbolic link" in page
        shutil.rmtree(folder / "desktop")
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "recording.webm").write_bytes(clip)
        (folder / "desktop").symlink_to(elsewhere)
        r = httpx.get(f"{base}/recording")
        assert r.status_code in (403, 404) and r.content != clip  # O_NOFOLLOW|O_DIRECTORY: ENOTDIR
        assert "<iframe" not in httpx.get(base).text


@pytest.mark.parametrize("where", ["recording", "screen"])
def test_wrong_magic_refused(tmp_path: Path, clip: bytes, where: str) -> None:
    run, trial = gui_run(tmp_path, clip)
    folder = run / "trials" / trial
    html = b"<html><script>alert(1)</script></html>"
    target = folder / ("desktop/recording.webm" if where == "recording" else "screens/0001.png")
    target.write_bytes(html)
    with viewer([run]) as url:
        base = f"{url}run/run/trial/{trial}"
        r = httpx.get(f"{base}/{'recording' if where == 'recording' else 'screen/0001.png'}")
        assert r.status_code == 403 and b"<script>" not in r.content
        assert "first bytes do not match" in r.text
        page = httpx.get(base)
        assert page.status_code == 200
        if where == "recording":
            assert "<iframe" not in page.text and "not a WebM video" in page.text
            assert "a.seek" not in page.text and "class=seek" not in page.text


def test_recording_over_the_cap_is_a_note(tmp_path: Path, clip: bytes, monkeypatch) -> None:
    run, trial = gui_run(tmp_path, clip)
    monkeypatch.setattr(media, "RECORDING", dataclasses.replace(media.RECORDING, max_bytes=len(clip) - 1))
    with viewer([run]) as url:
        base = f"{url}run/run/trial/{trial}"
        assert httpx.get(f"{base}/recording").status_code == 403
        page = httpx.get(base).text
        assert "over the viewer&#x27;s cap" in page and "<iframe" not in page


@pytest.mark.parametrize("meta, note", [
    ("{not json", "recording.json is not JSON"),
    ({"started_at": "soon"}, "no numeric started_at"),
    ({"started_at": True}, "no numeric started_at"),
    ([1, 2], "no numeric started_at"),
    ({"started_at": 1e300}, "outside the trial"),
    ({"started_at": 0}, "outside the trial"),
    ("[" * 100_000, "recording.json is over"),
    ("[" * 4000, "not JSON"),
])
def test_bad_recording_json_is_a_note(tmp_path: Path, clip: bytes, meta: object, note: str) -> None:
    run, trial = gui_run(tmp_path, clip, meta)
    with viewer([run]) as url:
        page = httpx.get(f"{url}run/run/trial/{trial}")
    assert page.status_code == 200
    assert note in page.text
    assert "<iframe" in page.text  # the recording still plays, unlinked
    assert "class=seek" not in page.text


def test_odd_steps_and_missing_recording_json(tmp_path: Path, clip: bytes) -> None:
    run, trial = gui_run(tmp_path, clip)
    folder = run / "trials" / trial
    steps = [gui_step(1, T0 + 1, "click", "screens/0001.png"), "not a step",
             {"step_id": 3, "timestamp": 12, "source": "agent"},
             {"step_id": 4, "timestamp": "2099-99-99", "source": "agent"},
             {"step_id": 5, "timestamp": "9999-12-31T23:59:59+00:00", "source": "agent"},
             {**gui_step(6, T0 + 3, "click"), "observation": {"results": [{"content": "screens/../../x.png"}]}},
             {**gui_step(7, T0 + 4, "click"), "observation": {"results": [{"content": [
                 {"type": "text", "text": "a chart"}, "odd part",
                 {"type": "image", "source": {"media_type": "image/png", "path": "output/chart.png"}}]}]}}]
    (folder / "trajectory.json").write_text(trajectory(steps))
    with viewer([run]) as url:
        page = httpx.get(f"{url}run/run/trial/{trial}")
        assert page.status_code == 200 and page.text.count("class=seek") == 3  # steps 1, 6 and 7
        assert page.text.count("<img class=thumb") == 1  # step 1's screenshot, once
        assert "<pre>saved screens/0001.png</pre>" in page.text and "&#x27;type&#x27;" not in page.text
        assert "<pre>a chart</pre><a href='/run/run/trial/" in page.text and "/file/output/chart.png'>" in page.text
        os.unlink(folder / "desktop" / "recording.json")
        page = httpx.get(f"{url}run/run/trial/{trial}")
    assert page.status_code == 200 and "recording.json is missing" in page.text
    assert "class=seek" not in page.text and "screens/0001.png" in page.text


def test_trial_without_desktop_is_unchanged(tmp_path: Path) -> None:
    rec = record("plain")
    run = make_run(tmp_path / "run", [rec])
    with viewer([run.root]) as url:
        page = httpx.get(f"{url}run/run/trial/{rec.trial_id}")
        assert page.status_code == 200
        assert "<iframe" not in page.text and "Screenshots" not in page.text and "recording" not in page.text
        assert httpx.get(f"{url}run/run/trial/{rec.trial_id}/recording").status_code == 404


@pytest.mark.parametrize("header, span", [
    ("bytes=0-9", (0, 9)), ("bytes=90-", (90, 99)), ("bytes=-5", (95, 99)), ("bytes=-500", (0, 99)),
    ("bytes=10-5000", (10, 99)), (" Bytes = 1-2 ", (1, 2)), ("bytes=5-2", None), ("bytes=-", None),
    ("bytes=0-1,4-5", None), ("items=0-1", None), ("bytes=²-3", None), ("bytes=0-²", None),
    ("bytes=" + "9" * 5000 + "-", None), ("bytes=0x10-", None), ("", None), (None, None),
])
def test_byte_ranges(header: str | None, span: tuple[int, int] | None) -> None:
    assert media.byte_range(header, 100) == span


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=-0", "bytes=500-600"])
def test_unsatisfiable_ranges(header: str) -> None:
    with pytest.raises(media.Unsatisfiable):
        media.byte_range(header, 100)


def test_desktop_without_recording_is_a_note(tmp_path: Path, clip: bytes) -> None:
    run, trial = gui_run(tmp_path, clip)
    desktop = run / "trials" / trial / "desktop"
    (desktop / "session.log").write_text("the recorder did not start: going on without a recording\n")
    (desktop / "windows.jsonl").write_text("")
    with viewer([run]) as url:
        base = f"{url}run/run/trial/{trial}"
        page = httpx.get(base).text
        assert "<iframe" in page and f"{base[len(url) - 1:]}/file/desktop/session.log'>session.log" in page
        assert "/file/desktop/windows.jsonl'>windows.jsonl" in page
        (desktop / "recording.webm").unlink()
        page = httpx.get(base).text
        assert "<iframe" not in page and "kept no screen recording" in page
        assert "/file/desktop/session.log'>session.log" in page
        log = httpx.get(f"{base}/file/desktop/session.log")
        assert log.headers["content-type"].startswith("text/plain") and "did not start" in log.text
