"""A GUI copy of the harness test task, and running it through the real CLI and sandbox."""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_json, trial_dir

DESKTOP_TABLE = """
[desktop]
screen = "1024x768"
apps = [{ name = "Note", exec = "xmessage -name note 'hello from the panel'", wm_class = "Xmessage" }]
"""


def gui_task(parent: Path, *, gui: bool = True, timeout_s: int = 60, table: str = DESKTOP_TABLE) -> Path:
    """column-total with gui = true and a [desktop] table (or, gui=False, without both)."""
    task = parent / "tasks" / COLUMN_TOTAL.name
    shutil.copytree(COLUMN_TOTAL, task)
    toml = (task / "task.toml").read_text()
    toml = toml.replace("gui = false", f"gui = {'true' if gui else 'false'}")
    toml = toml.replace("timeout_s = 60", f"timeout_s = {timeout_s}")
    (task / "task.toml").write_text(toml + (table if gui else ""))
    return task


def run_trial(task: Path, out: Path, cmd: str, *extra: str) -> tuple[dict, Path]:
    """The `command` agent on `task`; the trial's JSON and folder."""
    result = run_json("run", task, "--agent", "command", "--agent-arg", f"cmd={cmd}", "--out", out,
                      *extra)
    trial = result["trials"][0]
    return trial, trial_dir(out, trial)


def record(folder: Path) -> dict:
    return json.loads((folder / "trial.json").read_text())


def ffprobe(path: Path) -> dict:
    proc = subprocess.run(
        ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
        capture_output=True, text=True, check=False,
    )
    return json.loads(proc.stdout or "{}") if proc.returncode == 0 else {}


@pytest.fixture(scope="session")
def desktop_ready(base_env_ready) -> None:
    from lastexam.desktop.launch import missing

    problems = missing()
    if problems:
        pytest.fail("the desktop cannot run here: " + "; ".join(problems))


@pytest.fixture
def host_display(tmp_path: Path) -> Iterator[int]:
    """A host X server on a free display other than :0 (the number the sandbox's own display
    has), reachable on every channel (TCP, no access control)."""
    for number in range(20, 100):
        if Path(f"/tmp/.X{number}-lock").exists() or _listening(Path(f"/tmp/.X11-unix/X{number}")):
            continue
        r, w = os.pipe()
        proc = subprocess.Popen(
            # -noreset: a server whose last client leaves resets, and refuses connections
            # meanwhile (openbox then failed to open the display in 6 of 60 starts).
            ["Xvfb", f":{number}", "-displayfd", str(w), "-listen", "tcp", "-ac", "-noreset",
             "-screen", "0", "640x480x24"],
            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(w)
        try:
            ready = select.select([r], [], [], 30)[0] and os.read(r, 16).strip()
            if ready:
                yield number
                return
        finally:
            os.close(r)
            proc.terminate()  # SIGTERM: Xvfb removes its lock and socket (SIGKILL left them)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    pytest.fail("no free display for the host X server")


def _listening(socket_path: Path) -> bool:
    """An X server answers on this socket (one left by a killed server does not)."""
    if not socket_path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(socket_path))
        except OSError:
            return False
    return True


@pytest.fixture
def host_desktop(host_display: int, tmp_path: Path) -> Iterator[int]:
    """The host X server with the desktop's window manager (openbox, our rc)."""
    from lastexam.desktop.launch import session_files

    rc = tmp_path / "openbox-rc.xml"
    menu = tmp_path / "menu.xml"
    menu.write_text('<openbox_menu><menu id="root-menu" label="x"/></openbox_menu>')
    rc.write_text((session_files() / "openbox-rc.xml").read_text().replace("@MENU@", str(menu)))
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": f":{host_display}", "HOME": str(tmp_path)}
    # openbox writes its messages here, not to stderr.
    log = tmp_path / ".cache" / "openbox" / "openbox.log"
    wm = subprocess.Popen(["openbox", "--config-file", str(rc)], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while "window id" not in x(host_display, "xprop", "-root", "_NET_SUPPORTING_WM_CHECK"):
            assert wm.poll() is None, f"openbox exited {wm.returncode}: {_tail(log)}"
            assert time.monotonic() < end, f"openbox did not start: {_tail(log)}"
            time.sleep(0.05)
        yield host_display
    finally:
        wm.kill()
        wm.wait()


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-500:] if log.exists() else "(no log)"


def x(display: int, *argv: str) -> str:
    """The output of an X client run on the display."""
    env = {"PATH": "/usr/bin:/bin", "DISPLAY": f":{display}"}
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True,
                          timeout=60).stdout
