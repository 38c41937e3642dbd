"""A desktop trial through the real CLI and bwrap sandbox: the agent finds its own X server,
window manager, panel and the declared app's launcher; the app it starts shows in the exec
log and the window log, the desktop itself does not; the desktop folder is collected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lastexam.paths import desktop_toolchain_dir

from .conftest import ffprobe, gui_task, record, run_trial

AGENT = r"""
set -u
echo "display=$DISPLAY"
echo "geometry=$(xdotool getdisplaygeometry)"
xprop -root _NET_SUPPORTING_WM_CHECK
xwininfo -root -tree | grep -c '"tint2"' | sed 's/^/panels=/'
launcher=$(grep -l '^Name=Note$' /tmp/.lastexam-desktop/apps/*.desktop)
echo "launcher=$launcher"
xdotool mousemove 20 750 click 1  # the panel's first launcher (bottom left)
win=$(xdotool search --sync --class Xmessage | head -1)
xdotool windowactivate --sync "$win" key a b c
xdotool mousemove --window "$win" 5 5 click 1
sleep 1.5
ffmpeg -loglevel error -f x11grab -video_size 1024x768 -i "$DISPLAY" -frames:v 1 \
    /run/lastexam/desktop/screens/0001.png
ls /opt/lastexam-desktop > /dev/null && echo files=ok
if [ -d /opt/desktop ]; then
    echo toolchain=mounted
    awk '$5 == "/opt/desktop" { split($6, o, ","); print "toolchain=" o[1] }' /proc/self/mountinfo
fi
xdotool windowkill "$win"
sleep 0.5
awk -F, 'NR > 1 { s += $1; n++ } END { printf "{\"total\": %.6f, \"count\": %d}\n", s, n }' \
    /task/inputs/data.csv > /task/output/result.json
"""


@pytest.fixture(scope="module")
def gui_trial(tmp_path_factory, desktop_ready) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("gui-trial")
    return run_trial(gui_task(root), root / "run", AGENT)


def test_the_agent_has_its_own_desktop(gui_trial) -> None:
    trial, folder = gui_trial
    assert trial["status"] == "completed" and trial["score"] == 1.0, trial
    out = (folder / "agent" / "agent.stdout.log").read_text()
    assert "display=:0" in out
    assert "geometry=1024 768" in out  # the task's [desktop] screen
    assert "_NET_SUPPORTING_WM_CHECK(WINDOW): window id #" in out  # openbox runs
    assert "panels=1" in out
    assert "launcher=/tmp/.lastexam-desktop/apps/00.desktop" in out
    assert "files=ok" in out
    # the computer-use toolchain, read-only, when it is installed (helper gui-mcp installs it)
    installed = desktop_toolchain_dir().is_dir()
    assert ("toolchain=mounted" in out) == installed
    assert ("toolchain=ro" in out) == installed and "toolchain=rw" not in out


def test_the_desktop_is_not_in_the_exec_log(gui_trial) -> None:
    _, folder = gui_trial
    usage = record(folder)["usage"]
    assert usage["traced"] and not usage["tampered"]
    programs = usage["programs"]
    assert programs.get("xmessage") == 1  # started from the panel's launcher: the agent's
    assert programs.get("xdotool", 0) >= 3
    for desktop in ("Xvfb", "openbox", "tint2", "python3", "python3.11", "xkbcomp"):
        assert desktop not in programs, programs
    events = [json.loads(line) for line in (folder / "agent" / "exec.jsonl").read_text().splitlines()]
    assert events[0]["argv"][0] == "/bin/sh"  # the agent's own command comes first
    assert not [e for e in events if "recording.webm" in " ".join(e["argv"])]
    assert usage["python_imports"] == {}  # the session and the monitor import Xlib unseen


def test_the_window_log_sees_the_app_and_its_input(gui_trial) -> None:
    _, folder = gui_trial
    lines = [json.loads(x) for x in (folder / "desktop" / "windows.jsonl").read_text().splitlines()]
    maps = [e for e in lines if e["event"] == "map" and e["wm_class"] == "Xmessage"]
    assert maps and maps[0]["wm_instance"] == "note" and maps[0]["exe"] == "/usr/bin/xmessage"
    assert isinstance(maps[0]["pid"], int)
    assert any(e["event"] == "focus" and e["wm_class"] == "Xmessage" for e in lines)
    typed = [e for e in lines if e["event"] == "input" and e["wm_class"] == "Xmessage"]
    assert sum(e["keys"] for e in typed) == 3 and sum(e["buttons"] for e in typed) == 1
    assert any(e["event"] == "unmap" and e["wm_class"] == "Xmessage" for e in lines)


def test_the_desktop_folder_is_collected(gui_trial) -> None:
    _, folder = gui_trial
    shot = folder / "screens" / "0001.png"
    assert shot.read_bytes().startswith(b"\x89PNG")
    probe = ffprobe(folder / "desktop" / "recording.webm")
    assert probe["format"]["format_name"].startswith("matroska,webm")
    assert probe["streams"][0]["codec_name"] == "vp8"
    assert float(probe["format"]["duration"]) > 1.0
    meta = json.loads((folder / "desktop" / "recording.json").read_text())
    assert set(meta) == {"started_at", "fps"} and meta["fps"] == 2.0
    notes = json.loads((folder / "desktop" / "collected.json").read_text())
    assert notes["screens"] == 1 and notes["dropped_count"] == 0


def test_a_trial_without_desktop_has_none(tmp_path, desktop_ready) -> None:
    task = gui_task(tmp_path, gui=False)
    _, folder = run_trial(task, tmp_path / "run", 'echo "display=${DISPLAY:-none}"; ls /run/lastexam')
    out = (folder / "agent" / "agent.stdout.log").read_text()
    assert "display=none" in out and "desktop" not in out
    assert not (folder / "desktop").exists() and not (folder / "screens").exists()
    # `lastexam run --desktop` gives the same task a desktop (the default screen)
    _, folder = run_trial(task, tmp_path / "run2", 'echo "display=$DISPLAY $(xdotool getdisplaygeometry)"',
                              "--desktop")
    assert "display=:0 1280 800" in (folder / "agent" / "agent.stdout.log").read_text()
    assert (folder / "desktop" / "recording.webm").is_file()


def test_the_desktop_folder_has_its_own_write_allowance(tmp_path, desktop_ready) -> None:
    """A task with a 1 MB output cap (2 MB of writes) still records its screen and keeps a
    3 MB screenshot: the desktop's files are allowed on top of the agent's cap."""
    task = gui_task(tmp_path, table='[desktop]\nscreen = "640x480"\n\n[limits]\noutput_mb = 1\n')
    cmd = ("/usr/bin/python3 -c \"open('/run/lastexam/desktop/screens/0001.png', 'wb')"
           ".write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(3 << 20))\"")
    trial, folder = run_trial(task, tmp_path / "run", cmd)
    assert trial["ended_by"] == "exit", trial
    assert (folder / "screens" / "0001.png").stat().st_size == 8 + (3 << 20)
