"""The `[desktop]` table of task.toml, and the caps that bound everything the desktop writes.
Pure data: the code that runs a desktop is in desktop/launch.py and sandbox_files/."""

from __future__ import annotations

import re
import shlex

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCREEN = re.compile(r"^([1-9][0-9]{2,3})x([1-9][0-9]{2,3})$")
MIN_SIDE, MAX_SIDE = 320, 3840
WM_CLASS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$")
APP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}$")


class DesktopApp(BaseModel):
    """An application the panel offers; `wm_class` is what the GUI-use report matches its
    windows on (case-insensitive)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    exec: str = Field(min_length=1, max_length=500)
    wm_class: str

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not APP_NAME.match(v):
            raise ValueError("must be 1 to 64 letters, digits, spaces or ._+-")
        return v

    @field_validator("exec")
    @classmethod
    def _exec(cls, v: str) -> str:
        try:
            argv = shlex.split(v)
        except ValueError as e:
            raise ValueError(f"is not a command line: {e}") from None
        if not argv or any(c in v for c in "\n\r\0"):
            raise ValueError("must be one command line")
        return v

    @field_validator("wm_class")
    @classmethod
    def _wm_class(cls, v: str) -> str:
        if not WM_CLASS.match(v):
            raise ValueError("must be a WM_CLASS such as 'libreoffice' (letters, digits, ._-)")
        return v


class DesktopSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    screen: str = "1280x800"
    apps: list[DesktopApp] = Field(default_factory=list, max_length=32)

    @field_validator("screen")
    @classmethod
    def _screen(cls, v: str) -> str:
        m = SCREEN.match(v)
        if not m or not all(MIN_SIDE <= int(s) <= MAX_SIDE for s in m.groups()):
            raise ValueError(
                f"must be WIDTHxHEIGHT with each side {MIN_SIDE} to {MAX_SIDE}, e.g. '1280x800'"
            )
        return v

    @field_validator("apps")
    @classmethod
    def _apps(cls, v: list[DesktopApp]) -> list[DesktopApp]:
        names = [a.name.lower() for a in v]
        if len(set(names)) != len(names):
            raise ValueError("two apps have the same name")
        return v

    @property
    def size(self) -> tuple[int, int]:
        w, h = self.screen.split("x")
        return int(w), int(h)


def desktop_for(gui: bool, spec: DesktopSpec | None, forced: bool) -> DesktopSpec | None:
    """The desktop a trial gets: the task's when it is a GUI task, the default one when the
    run asks for a desktop (`lastexam run --desktop`), else none."""
    if gui:
        return spec or DesktopSpec()
    return DesktopSpec() if forced else None


class DesktopCaps(BaseModel):
    """What a trial's desktop may write and what the host collects of it. Everything in the
    desktop folder is written by processes the agent controls: read with these caps only."""

    model_config = ConfigDict(frozen=True)

    fps: float = 2.0  # recording frame rate
    keyframe_every: int = 60  # frames between keyframes (30 s: a still screen costs little)
    recording_bytes: int = 256 * 1024 * 1024  # collected at most; ffmpeg stops before it
    max_screens: int = 2000
    screen_bytes: int = 8 * 1024 * 1024
    windows_log_bytes: int = 16 * 1024 * 1024
    windows_log_lines: int = 100_000
    meta_bytes: int = 4096  # recording.json
    session_log_bytes: int = 256 * 1024
    scan_entries: int = 20_000  # entries looked at in the folder and in screens/
    stop_before_cap_s: float = 3.0  # the recording is finalised this long before the time cap
    # Added to a desktop trial's write cap (and per-file limit): the recording and the
    # screenshots are written inside the sandbox, so they count against it.
    write_allowance: int = 512 * 1024 * 1024


CAPS = DesktopCaps()
