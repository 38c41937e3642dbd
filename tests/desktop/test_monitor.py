"""The window monitor (Contract C of issue 13) against a real X server and window manager on
the host: windows mapped and unmapped, the focus, key and button presses counted against the
focused window, and its caps."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from lastexam.desktop.launch import session_files

from .conftest import x

FIELDS = {"t", "event", "window", "wm_class", "wm_instance", "title", "pid", "exe"}


def monitor(display: int, out: Path, max_bytes: int = 1 << 20, max_lines: int = 1000):
    return subprocess.Popen(
        ["/usr/bin/python3", "-I", str(session_files() / "monitor.py"), str(out), str(max_bytes),
         str(max_lines)],
        env={"PATH": "/usr/bin:/bin", "DISPLAY": f":{display}"},
    )


def read(out: Path) -> list[dict]:
    return [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []


def wait_for(out: Path, event: str, wm_instance: str, timeout: float = 30) -> list[dict]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = read(out)
        if any(e["event"] == event and e.get("wm_instance") == wm_instance for e in lines):
            return lines
        time.sleep(0.05)
    raise AssertionError(f"no {event} of {wm_instance}: {read(out)}")


def window(display: int, name: str) -> tuple[subprocess.Popen, str]:
    app = subprocess.Popen(["xmessage", "-name", name, f"I am {name}"],
                           env={"PATH": "/usr/bin:/bin", "DISPLAY": f":{display}"},
                           stderr=subprocess.DEVNULL)
    wid = x(display, "xdotool", "search", "--sync", "--classname", name).split()[0]
    return app, wid


def test_windows_focus_and_input_per_window(host_desktop: int, tmp_path: Path) -> None:
    d, out = host_desktop, tmp_path / "windows.jsonl"
    mon = monitor(d, out)
    alpha, a = window(d, "alpha")
    wait_for(out, "map", "alpha")
    beta, b = window(d, "beta")
    wait_for(out, "focus", "beta")
    x(d, "xdotool", "windowactivate", "--sync", a, "key", "x", "y")
    x(d, "xdotool", "windowactivate", "--sync", b, "mousemove", "--window", b, "5", "5",
      "click", "1", "key", "z")
    alpha.kill()
    alpha.wait()
    wait_for(out, "unmap", "alpha")
    gamma, g = window(d, "gamma")  # closed right after a key press: the press is still its own
    x(d, "xdotool", "windowactivate", "--sync", g, "key", "q")
    gamma.kill()
    gamma.wait()
    wait_for(out, "unmap", "gamma")
    mon.send_signal(signal.SIGTERM)
    assert mon.wait(30) == 0
    beta.kill()
    lines = read(out)
    for e in lines:
        assert isinstance(e["t"], float)
        assert set(e) == (FIELDS if e["event"] != "input"
                          else {"t", "event", "keys", "buttons", "wm_class"}), e
    mapped = next(e for e in lines if e["event"] == "map" and e["wm_instance"] == "alpha")
    assert mapped["wm_class"] == "Xmessage" and mapped["title"] == "alpha"
    assert mapped["pid"] == alpha.pid and mapped["exe"] == "/usr/bin/xmessage"
    assert int(mapped["window"], 16) == int(a)

    def typed(cls: str, key: str) -> int:
        return sum(e[key] for e in lines if e["event"] == "input" and e["wm_class"] == cls)

    # Both are Xmessage: the presses are told apart by the focus lines between them.
    assert typed("Xmessage", "keys") == 4 and typed("Xmessage", "buttons") == 1
    by_focus, current = {}, None
    for e in lines:
        if e["event"] == "focus":
            current = e["wm_instance"]
        elif e["event"] == "input":
            k, btn = by_focus.get(current, (0, 0))
            by_focus[current] = (k + e["keys"], btn + e["buttons"])
    assert by_focus == {"alpha": (2, 0), "beta": (1, 1), "gamma": (1, 0)}, lines
    assert {e["wm_class"] for e in lines if e["event"] == "input"} == {"Xmessage"}
    assert any(e["event"] == "unmap" and e["wm_instance"] == "alpha" for e in lines)


def test_the_log_is_capped(host_desktop: int, tmp_path: Path) -> None:
    d = host_desktop
    by_lines, by_bytes = tmp_path / "lines.jsonl", tmp_path / "bytes.jsonl"
    monitors = [monitor(d, by_lines, max_lines=3), monitor(d, by_bytes, max_bytes=300)]
    apps = [window(d, f"w{i}")[0] for i in range(4)]
    wait_for(by_bytes, "map", "w0")
    for mon in monitors:
        mon.send_signal(signal.SIGTERM)
        assert mon.wait(30) == 0
    for app in apps:
        app.kill()
    lines = read(by_lines)
    assert len(lines) == 3 and lines[-1]["event"] == "capped"
    assert [e["event"] for e in read(by_bytes)][-1] == "capped"
    assert by_bytes.stat().st_size <= 300
