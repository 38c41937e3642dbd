"""The desktop folder is the agent's to write: what the host collects from it holds to the
caps (count, size, PNG and webm magic, names) against a hostile agent, and follows no link."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lastexam.desktop.collect import PNG_MAGIC
from lastexam.desktop.spec import CAPS

from .conftest import gui_task, record, run_trial

HOSTILE = r"""
cd /run/lastexam/desktop
/usr/bin/python3 - <<'EOF'
import os
png = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f8a6a30000000049454e44ae426082")
os.symlink("/etc/passwd", "screens/0001.png")                         # a link to a host file
open("screens/0002.png", "wb").write(png + bytes(9 * 1024 * 1024))    # over the size cap
open("screens/0003.png", "wb").write(b"GIF89a" + bytes(100))         # not a PNG
os.mkfifo("screens/0004.png")                                          # would block a reader
os.mkdir("screens/0005.png")
for i in range(10, 3010):                                              # 3000 screenshots
    open(f"screens/{i:04d}.png", "wb").write(png)
open("screens/shot.png", "wb").write(png)                              # not NNNN.png
open("screens/12345.png", "wb").write(png)
os.remove("recording.webm")
os.symlink("/etc/shadow", "recording.webm")
open("recording.json", "w").write('{"started_at": "soon", "fps": 2}')
with open("windows.jsonl", "w") as f:                                  # 20 MB of lines
    line = '{"t": 1, "event": "input", "keys": 1, "buttons": 0, "wm_class": "x"}\n'
    f.write(line * (20 * 1024 * 1024 // len(line)))
open("extra.bin", "wb").write(b"not collected")
os.symlink("/etc", "screens-link")
EOF
echo done
"""


def test_a_hostile_desktop_folder_is_collected_within_caps(tmp_path: Path, desktop_ready) -> None:
    trial, folder = run_trial(gui_task(tmp_path), tmp_path / "run", HOSTILE)
    assert record(folder)["status"] != "harness_error", trial
    screens = sorted(os.listdir(folder / "screens"))
    assert len(screens) == CAPS.max_screens == 2000
    assert screens[0] == "0010.png" and screens[-1] == "2009.png"
    for name in screens[:5]:
        path = folder / "screens" / name
        assert not path.is_symlink() and path.read_bytes().startswith(PNG_MAGIC)
    desktop = folder / "desktop"
    assert not (desktop / "recording.webm").exists()  # a link: not followed
    assert not (desktop / "recording.json").exists()  # not {started_at, fps}
    log = (desktop / "windows.jsonl").read_bytes()
    assert 15 * 1024 * 1024 < len(log) <= CAPS.windows_log_bytes and log.endswith(b"\n")
    assert not list(desktop.glob("extra*")) and not (folder / "screens-link").exists()
    notes = json.loads((desktop / "collected.json").read_text())
    why = {d["path"]: d["why"] for d in notes["dropped"]}
    assert why["screens/0001.png"] == "symlink"
    assert why["screens/0002.png"].startswith("larger than")
    assert why["screens/0003.png"] == "not a PNG image"
    assert why["screens/0004.png"] == "not a regular file"
    assert why["screens/0005.png"] == "not a regular file"
    assert why["screens/shot.png"] == why["screens/12345.png"] == "not named NNNN.png"
    assert why["recording.webm"] == "symlink"
    assert why["recording.json"] == "not {started_at, fps}"
    assert why["extra.bin"] == why["screens-link"] == "not a desktop file"
    assert notes["dropped_count"] == 5 + 2 + 4
    capped = " ".join(notes["capped"])
    assert "1000 screenshots from screens/2010.png on: over the cap of 2000" in capped
    assert "windows.jsonl cut at" in capped
