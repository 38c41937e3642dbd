"""computer: the computer-use MCP server of lastexam's desktop trials (stdio).

It runs inside the trial's sandbox as the agent, from the desktop toolchain's venv
(/opt/desktop/bin/computer-mcp), and acts on the X display named by DISPLAY (":0", the
sandbox's own, when unset). Coordinates are integers 0-1000 on each axis, scaled to the
screen's size, read once from the X server. Input goes through xdotool; a screenshot is the
root window through XCB (Pillow), encoded as PNG and saved as screens/NNNN.png under the
desktop folder, never over or through a file that is already there.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from PIL import ImageGrab
from pydantic import Field
from Xlib import XK
from Xlib import display as xdisplay

SCREENS = Path(os.environ.get("LASTEXAM_SCREENS_DIR") or "/run/lastexam/desktop/screens")
MAX_SAVED = 2000  # screenshots saved per trial; more are returned but not saved
MAX_TEXT = 5000  # characters typed by one call
MAX_KEYS = 200  # characters of one key sequence
MAX_WAIT = 60.0  # seconds of one wait
MAX_HOLD = 10.0  # seconds a key is held
TYPE_DELAY_MS = 8
SHOT_NAME = re.compile(r"^(\d{4})\.png$")

Coord = Annotated[int, Field(ge=0, le=1000, description="0-1000, scaled to the screen")]
Button = Literal["left", "right", "middle"]
BUTTONS = {"left": "1", "middle": "2", "right": "3"}
WHEEL = {"up": "4", "down": "5", "left": "6", "right": "7"}
# Names models use for keys that X calls otherwise; xdotool itself knows ctrl, alt, shift,
# super and meta.
KEY_ALIASES = {
    "control": "ctrl", "cmd": "super", "command": "super", "win": "super", "windows": "super",
    "enter": "Return", "return": "Return", "esc": "Escape", "del": "Delete",
    "backspace": "BackSpace", "pageup": "Prior", "pgup": "Prior", "pagedown": "Next",
    "pgdn": "Next", "ins": "Insert", "capslock": "Caps_Lock", "printscreen": "Print",
}
XDOTOOL_MODIFIERS = {"ctrl", "alt", "shift", "super", "meta"}


class Screen:
    """The X display: its size, read once, and the pointer."""

    def __init__(self) -> None:
        self.name = os.environ.get("DISPLAY") or ":0"
        self._display: xdisplay.Display | None = None
        self.width = self.height = 0

    def connect(self) -> xdisplay.Display:
        if self._display is None:
            try:
                d = xdisplay.Display(self.name)
            except Exception as e:  # Xlib raises several unrelated types for "no display"
                raise ToolError(f"cannot reach the X display {self.name}: {e}") from None
            screen = d.screen()
            self.width, self.height = screen.width_in_pixels, screen.height_in_pixels
            self._display = d
        return self._display

    def pixel(self, x: int, y: int) -> tuple[int, int]:
        self.connect()
        return (min(self.width - 1, round(x * self.width / 1000)),
                min(self.height - 1, round(y * self.height / 1000)))

    def scaled(self, px: int, py: int) -> tuple[int, int]:
        return round(px * 1000 / self.width), round(py * 1000 / self.height)

    def pointer(self) -> tuple[int, int]:
        p = self.connect().screen().root.query_pointer()
        return p.root_x, p.root_y


SCREEN = Screen()


def xdotool(*args: str, timeout: float = 30) -> str:
    exe = shutil.which("xdotool")
    if exe is None:
        raise ToolError("xdotool is not installed in this sandbox")
    SCREEN.connect()
    env = {**os.environ, "DISPLAY": SCREEN.name}
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ToolError(f"xdotool {args[0]} did not finish within {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise ToolError(f"xdotool {args[0]} failed: {(proc.stderr or proc.stdout).strip()[:500]}")
    return proc.stdout


for _group in ("latin2", "latin3", "latin4", "greek", "cyrillic", "technical", "special",
               "publishing", "xkb"):
    XK.load_keysym_group(_group)
KEYSYMS = {n[3:].lower(): n[3:] for n in dir(XK) if n.startswith("XK_")}  # lower -> name
NAMES = {getattr(XK, n): n[3:] for n in sorted(dir(XK), reverse=True) if n.startswith("XK_")}


def key_name(part: str) -> str:
    """One key of a combination, as xdotool names it; ToolError when X knows no such key."""
    if part in XDOTOOL_MODIFIERS or (len(part) > 1 and XK.string_to_keysym(part)):
        return part
    low = part.lower()
    if low in KEY_ALIASES:
        return KEY_ALIASES[low]
    if low in XDOTOOL_MODIFIERS:
        return low
    if len(part) == 1 and ord(part) in NAMES:  # "/" is slash to xdotool
        return NAMES[ord(part)]
    if low in KEYSYMS:
        return KEYSYMS[low]
    raise ToolError(f"unknown key {part!r}: use X keysym names as xdotool does, e.g. Return, "
                    "Escape, BackSpace, Tab, Up, F5, ctrl+s, alt+F4, shift+Tab")


def key_sequence(keys: str) -> list[str]:
    if not keys.strip():
        raise ToolError("keys is empty: give a key or combination, e.g. Return or ctrl+s")
    if len(keys) > MAX_KEYS:
        raise ToolError(f"keys is {len(keys)} characters long: at most {MAX_KEYS} (use type for text)")
    combos = []
    for combo in keys.split():
        parts = combo.split("+") if combo != "+" else ["+"]
        if any(p == "" for p in parts):
            raise ToolError(f"malformed key combination {combo!r}: write plus for the + key")
        combos.append("+".join(key_name(p) for p in parts))
    return combos


def single_key(key: str) -> str:
    combos = key_sequence(key)
    if len(combos) != 1:
        raise ToolError(f"{key!r} is several keys: give one key or combination")
    return combos[0]


class Shots:
    """Saved screenshots: screens/NNNN.png, numbered from 0001 after the highest present."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.next: int | None = None

    def save(self, png: bytes) -> str:
        if self.next is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                return f"not saved: cannot create {self.folder}: {e.strerror}"
            self.next = 1 + max((int(m.group(1)) for n in self._names()
                                 if (m := SHOT_NAME.match(n))), default=0)
        while self.next <= MAX_SAVED:
            name = f"{self.next:04d}.png"
            self.next += 1
            try:
                fd = os.open(self.folder / name,
                             os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            except FileExistsError:
                continue  # something is already there: never written over nor followed
            except OSError as e:
                return f"not saved: cannot create {self.folder / name}: {e.strerror}"
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(png)
            except OSError as e:  # e.g. the trial's write quota
                return f"not saved: writing {self.folder / name} failed: {e.strerror}"
            return f"saved screens/{name}"
        return f"not saved: the limit of {MAX_SAVED} saved screenshots is reached"

    def _names(self) -> list[str]:
        try:
            return os.listdir(self.folder)
        except OSError:
            return []


SHOTS = Shots(SCREENS)


def grab_png() -> bytes:
    SCREEN.connect()
    try:
        image = ImageGrab.grab(xdisplay=SCREEN.name)
    except OSError as e:
        raise ToolError(f"cannot read the screen of {SCREEN.name}: {e}") from None
    buf = io.BytesIO()
    image.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


server = MCPServer(
    name="computer",
    instructions="Sees and drives the desktop: coordinates are integers 0-1000 on each axis "
                 "(0,0 top left; 1000,1000 bottom right), whatever the screen's size.",
    log_level="WARNING",
)


def tool(name: str | None = None):
    """A tool whose result is its content alone (no structured copy of the same text)."""
    return server.tool(name=name, structured_output=False)


@tool(name="key")
def press(keys: Annotated[str, Field(description="xdotool key syntax: Return, ctrl+s, alt+F4; "
                                               "several separated by spaces")]) -> str:
    """Press and release a key or key combination (several: separated by spaces)."""
    combos = key_sequence(keys)
    xdotool("key", "--delay", "50", "--", *combos)
    return f"pressed {' '.join(combos)}"


@tool()
def key_down(key: str) -> str:
    """Press a key (or combination) and keep it down until key_up."""
    name = single_key(key)
    xdotool("keydown", "--", name)
    return f"{name} is down"


@tool()
def key_up(key: str) -> str:
    """Release a key (or combination) pressed with key_down."""
    name = single_key(key)
    xdotool("keyup", "--", name)
    return f"{name} is up"


@tool()
def hold_key(key: str, seconds: Annotated[float, Field(gt=0, le=MAX_HOLD)]) -> str:
    """Hold a key (or combination) down for some seconds, then release it."""
    name = single_key(key)
    xdotool("keydown", "--", name, "sleep", f"{seconds:.3f}", "keyup", "--", name,
            timeout=MAX_HOLD + 30)
    return f"held {name} for {seconds:g} s"


@tool(name="type")
def type_text(text: str) -> str:
    """Type text with the keyboard, as a person would (newlines press Return)."""
    if not text:
        raise ToolError("text is empty")
    if len(text) > MAX_TEXT:
        raise ToolError(f"text is {len(text)} characters long: at most {MAX_TEXT} per call")
    # xdotool types a newline as Linefeed, which many applications ignore: Return instead.
    for i, line in enumerate(text.replace("\r\n", "\n").split("\n")):
        if i:
            xdotool("key", "Return")
        if line:
            xdotool("type", "--delay", str(TYPE_DELAY_MS), "--", line,
                    timeout=30 + len(line) * TYPE_DELAY_MS * 4 / 1000)
    return f"typed {len(text)} characters"


@tool()
def mouse_move(x: Coord, y: Coord) -> str:
    """Move the pointer to (x, y)."""
    px, py = SCREEN.pixel(x, y)
    xdotool("mousemove", str(px), str(py))
    return f"pointer at {x},{y}"


@tool()
def click(x: Coord, y: Coord, button: Button = "left",
          count: Annotated[int, Field(ge=1, le=3, description="2: a double click")] = 1) -> str:
    """Move the pointer to (x, y) and click a button once or more."""
    px, py = SCREEN.pixel(x, y)
    xdotool("mousemove", str(px), str(py), "click", "--repeat", str(count), "--delay", "80",
            BUTTONS[button])
    return f"{button} click{' x' + str(count) if count > 1 else ''} at {x},{y}"


@tool()
def drag(x1: Coord, y1: Coord, x2: Coord, y2: Coord) -> str:
    """Press the left button at (x1, y1), move to (x2, y2) and release it there."""
    (ax, ay), (bx, by) = SCREEN.pixel(x1, y1), SCREEN.pixel(x2, y2)
    steps = []
    for i in range(1, 6):  # applications see intermediate motion, as from a hand
        steps += ["mousemove", str(ax + (bx - ax) * i // 5), str(ay + (by - ay) * i // 5),
                  "sleep", "0.03"]
    xdotool("mousemove", str(ax), str(ay), "mousedown", "1", "sleep", "0.05", *steps,
            "mouseup", "1")
    return f"dragged from {x1},{y1} to {x2},{y2}"


@tool()
def mouse_down(button: Button = "left") -> str:
    """Press a mouse button where the pointer is and keep it down until mouse_up."""
    xdotool("mousedown", BUTTONS[button])
    return f"{button} button is down"


@tool()
def mouse_up(button: Button = "left") -> str:
    """Release a mouse button."""
    xdotool("mouseup", BUTTONS[button])
    return f"{button} button is up"


@tool()
def scroll(x: Coord, y: Coord, direction: Literal["up", "down", "left", "right"] = "down",
           amount: Annotated[int, Field(ge=1, le=50, description="wheel clicks")] = 3) -> str:
    """Scroll the wheel at (x, y)."""
    px, py = SCREEN.pixel(x, y)
    xdotool("mousemove", str(px), str(py), "click", "--repeat", str(amount), "--delay", "30",
            WHEEL[direction])
    return f"scrolled {direction} {amount} at {x},{y}"


@tool()
def wait(seconds: Annotated[float, Field(ge=0, le=MAX_WAIT)]) -> str:
    """Wait some seconds (at most 60), e.g. for an application to open."""
    time.sleep(seconds)
    return f"waited {seconds:g} s"


@tool()
def screenshot(save: bool = True) -> list[Image | str]:
    """The screen as a PNG image; saved as screens/NNNN.png unless save is false."""
    png = grab_png()
    note = SHOTS.save(png) if save else "not saved (save=false)"
    return [Image(data=png, format="png"), note]


@tool()
def cursor_position() -> str:
    """Where the pointer is, in 0-1000 coordinates."""
    x, y = SCREEN.scaled(*SCREEN.pointer())
    return f"x={x} y={y}"


@tool()
def get_screen_size() -> str:
    """The screen's size in pixels (tools take 0-1000 coordinates whatever it is)."""
    SCREEN.connect()
    return f"{SCREEN.width}x{SCREEN.height} pixels; coordinates are 0-1000 on each axis"


def main() -> None:
    server.run("stdio")


if __name__ == "__main__":
    main()
