"""How a trial's sandbox gets its desktop: the agent's command is wrapped in the desktop
session (sandbox_files/session.py), which starts the X server, window manager, panel, monitor
and recorder before the command and stops the recorder after it. The session runs without
the exec-log shim; it hands the shim to the agent's command itself (see sandbox_files)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from lastexam.desktop.spec import CAPS, DesktopCaps, DesktopSpec
from lastexam.layout import AgentSandbox, TrialPaths
from lastexam.paths import desktop_toolchain_dir, home_subdir, package_dir, published_copy
from lastexam.sandbox.base import Mount
from lastexam.untrusted import tail

SESSION_PYTHON = "/usr/bin/python3"  # Debian's, with python3-xlib
PRELOAD_VAR = "LASTEXAM_DESKTOP_PRELOAD"  # session.py gives it back to the agent as LD_PRELOAD
PROGRAMS = ("Xvfb", "openbox", "tint2", "ffmpeg", "xdotool", "xprop", "xwininfo")
FFMPEG_MARGIN = 1 << 20  # ffmpeg's -fs stops short of the collection cap by this much
# The system's font cache (the sandbox's /var is empty): without it every program that draws
# text scans all fonts first, a second or more each.
FONT_CACHE = Path("/var/cache/fontconfig")


def session_files() -> Path:
    """The session's files, world-readable, for the sandbox to mount."""
    return published_copy(package_dir() / "desktop" / "sandbox_files",
                          home_subdir("desktop") / "session")


def missing() -> list[str]:
    """What the machine lacks to run a desktop (installed by scripts/setup.sh)."""
    problems = [f"{p} is not installed" for p in PROGRAMS if shutil.which(p) is None]
    xlib = Path("/usr/lib/python3/dist-packages/Xlib")
    if not Path(SESSION_PYTHON).exists() or not xlib.is_dir():
        problems.append("Debian's python3-xlib is not installed")
    return [f"{p} (run scripts/setup.sh)" for p in problems]


@dataclass
class DesktopWrap:
    argv: list[str]
    env: dict[str, str]
    mounts: list[Mount]


def wrap(
    spec: DesktopSpec, argv: list[str], env: dict[str, str], folder: Path, wall_s: float,
    caps: DesktopCaps = CAPS,
) -> DesktopWrap:
    """The sandbox's command, environment and extra mounts for a desktop trial whose agent
    runs `argv` with `env`; `folder` (host) is mounted writable at AgentSandbox.DESKTOP."""
    config = {
        "folder": AgentSandbox.DESKTOP,
        "screen": spec.screen,
        "apps": [a.model_dump() for a in spec.apps],
        "fps": caps.fps,
        "keyframe_every": caps.keyframe_every,
        "recording_bytes": caps.recording_bytes - FFMPEG_MARGIN,
        "windows_log_bytes": caps.windows_log_bytes,
        "windows_log_lines": caps.windows_log_lines,
        "record_for_s": max(1.0, wall_s - caps.stop_before_cap_s),
    }
    session_env = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
    if env.get("LD_PRELOAD"):
        session_env[PRELOAD_VAR] = env["LD_PRELOAD"]
    session_env["DISPLAY"] = AgentSandbox.DISPLAY
    mounts = [
        Mount(folder, AgentSandbox.DESKTOP, writable=True),
        Mount(session_files(), AgentSandbox.DESKTOP_FILES),
    ]
    if FONT_CACHE.is_dir():
        mounts.append(Mount(FONT_CACHE, str(FONT_CACHE)))
    toolchain = desktop_toolchain_dir()
    if toolchain.is_dir():
        mounts.append(Mount(toolchain, AgentSandbox.DESKTOP_TOOLCHAIN))
    session = f"{AgentSandbox.DESKTOP_FILES}/session.py"
    return DesktopWrap(
        argv=[SESSION_PYTHON, "-I", session, json.dumps(config), "--", *argv],
        env=session_env,
        mounts=mounts,
    )


def no_start(trial: TrialPaths) -> str:
    """Why the agent's command did not start, for the harness's error: the end of the
    collected session log (the agent never ran, so nothing of it is the agent's)."""
    last = tail(trial.desktop_log, 300).splitlines()
    return f"the desktop did not start ({last[-1] if last else 'no session log'})"
