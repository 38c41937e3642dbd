"""The desktop is the trial's own: the host's X display cannot be reached from the sandbox
(not by its socket file, its abstract socket or TCP, nor through inherited DISPLAY or
XAUTHORITY), while the same probe reaches it from the host; and nothing of the desktop outlives
a trial cut by its time cap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from conftest import LASTEXAM, ROOT

from .conftest import ffprobe, gui_task, record

PROBE = Path(__file__).with_name("x_probe.py")


def probe_line(text: str) -> dict:
    lines = [x for x in text.splitlines() if x.startswith("PROBE ")]
    assert lines, f"the probe did not run:\n{text[-2000:]}"
    return json.loads(lines[0].removeprefix("PROBE "))


def test_the_host_display_is_out_of_reach(tmp_path: Path, host_display: int, desktop_ready) -> None:
    n = host_display
    env = {**os.environ, "DISPLAY": f":{n}", "XAUTHORITY": str(tmp_path / "host.xauth")}
    host = subprocess.run(["/usr/bin/python3", str(PROBE), str(n)], capture_output=True, text=True,
                          env=env, check=True)
    seen = probe_line(host.stdout)
    assert all(seen[k] for k in ("socket_file_connects", "abstract_connects", "tcp_connects",
                                 "xdpyinfo", "xdpyinfo_tcp")), seen  # the probe works
    task = gui_task(tmp_path)
    shutil.copyfile(PROBE, task / "inputs" / "x_probe.py")
    cmd = (f"/usr/bin/python3 /task/inputs/x_probe.py {n}; ls -A /tmp/.X11-unix; "
           "xdpyinfo | grep dimensions; /usr/bin/python3 /task/inputs/x_probe.py 0")
    proc = subprocess.run(
        [*LASTEXAM, "run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}",
         "--out", tmp_path / "run", "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=True,
    )
    trial = json.loads(proc.stdout)["trials"][0]
    out = (tmp_path / "run" / "trials" / trial["trial_id"] / "agent" / "agent.stdout.log").read_text()
    inside = probe_line(out)
    assert inside == {
        "socket_file": False, "socket_file_connects": False, "abstract_connects": False,
        "tcp_connects": False, "xdpyinfo": False, "xdpyinfo_tcp": False,
        "env_display": ":0", "env_xauthority": None,
    }
    assert "\nX0\n" in f"\n{out}" and f"X{n}\n" not in out  # only its own socket
    assert "1024x768 pixels" in out  # :0 inside is the trial's own server
    own = json.loads(out.split("PROBE ")[-1].splitlines()[0])
    assert own["socket_file_connects"] and own["abstract_connects"] and own["xdpyinfo"]


def _desktop_processes(marker: str) -> dict[int, str]:
    """Host pids of the processes whose command line holds marker, with their pid namespace."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found[int(entry.name)] = os.readlink(entry / "ns" / "pid")
        except OSError:
            continue
    return found


def _in_namespace(ns: str) -> dict[tuple[int, str], str]:
    """The live processes in pid namespace ns: (host pid, start time) -> name. The start time tells
    a process from a later one with the same pid (namespace ids are reused too)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "pid") == ns:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    if fields[0] == "Z":
                        continue  # dead, waiting to be reaped by the host's init
                    started = fields[19]
                    found[(int(entry.name), started)] = (entry / "comm").read_text().strip()
            except (OSError, IndexError):
                continue
    return found


def test_nothing_survives_the_time_cap(tmp_path: Path, desktop_ready) -> None:
    screen = "1016x744"  # a size no other desktop uses: it marks this trial's X processes
    task = gui_task(tmp_path, timeout_s=10, table=f'[desktop]\nscreen = "{screen}"\n')
    cmd = "xmessage -name survivor hi & setsid sleep 1000 & nohup sleep 1000 & sleep 1000"
    proc = subprocess.Popen(
        [*LASTEXAM, "run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}",
         "--out", tmp_path / "run", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
    )
    host_ns = os.readlink("/proc/self/ns/pid")
    sandbox_ns = None
    seen: dict[tuple[int, str], str] = {}
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if sandbox_ns is None:
            # The sandbox's processes hold the marker (the session, Xvfb, ffmpeg); bwrap and its
            # launchers, on the host's side, hold it too.
            marked = {ns for ns in _desktop_processes(screen).values() if ns != host_ns}
            sandbox_ns = marked.pop() if marked else None
        else:
            seen |= _in_namespace(sandbox_ns)
        time.sleep(0.05)
    out, _ = proc.communicate(timeout=120)
    trial = json.loads(out)["trials"][0]
    assert trial["ended_by"] == "timeout"
    names = set(seen.values())
    assert {"Xvfb", "openbox", "tint2", "ffmpeg", "xmessage", "sleep"} <= names, names
    assert _desktop_processes(screen) == {}
    alive = set(_in_namespace(sandbox_ns)) & set(seen)
    assert not alive, {seen[k] for k in alive}
    folder = tmp_path / "run" / "trials" / trial["trial_id"]
    probe = ffprobe(folder / "desktop" / "recording.webm")  # finalised before the cap
    assert float(probe["format"]["duration"]) >= 4
    assert record(folder)["usage"]["programs"].get("xmessage") == 1
