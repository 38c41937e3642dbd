"""The oracle's drafter: works out the plate's geometry from the drawing request and the two
standards tables, then draws it in the running LibreCAD through the desktop only (xdotool:
typing into LibreCAD's command line, the layer list's add button, File > Save as...), taking
screenshots on the way. It never writes the drawing itself.

    python3 drive.py            (DISPLAY set, LibreCAD's main window up; paths from TASK_ROOT)
"""

import csv
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(os.environ.get("TASK_ROOT", "/task"))
SCREENS = Path(os.environ.get("SCREENS_DIR", "/run/lastexam/desktop/screens"))
OUT = ROOT / "output" / "plate.dxf"
# Positions inside LibreCAD's main window (client area, 1280x720 as solve.sh configures it).
COMMAND_LINE = (1114, 602)
ADD_LAYER = (1166, 328)
FILE_MENU = (36, 10)
SAVE_AS_ITEM = (81, 146)
OVERSHOOT = 5.0


def request_table() -> dict[str, str]:
    rows = {}
    for line in (ROOT / "inputs" / "drawing_request.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] not in ("item", "---"):
            rows[cells[0]] = cells[1]
    return rows


def num(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    if not m:
        sys.exit(f"drive.py: cannot read {pattern!r} in {text!r}")
    return float(m.group(1))


def clearance(thread: str, series: str) -> float:
    with open(ROOT / "inputs" / "iso273_clearance_holes.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["thread"] == thread:
                return float(row[f"{series}_mm"])
    sys.exit(f"drive.py: no ISO 273 row for {thread}")


def bore_diameter(nominal: float, tol_class: str) -> float:
    """The middle of the ISO 286 zone; ranges are 'over ... up to and including ...'."""
    with open(ROOT / "inputs" / "iso286_hole_limit_deviations.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row["tolerance_class"] == tol_class and float(row["over_mm"]) < nominal <= float(row["up_to_and_including_mm"]):
                return nominal + (float(row["lower_deviation_um"]) + float(row["upper_deviation_um"])) / 2000
    sys.exit(f"drive.py: no ISO 286 row for {tol_class} at {nominal}")


def geometry() -> dict:
    t = request_table()
    w = num(r"([\d.]+) mm wide", t["plate"])
    h = num(r"([\d.]+) mm high", t["plate"])
    r = num(r"R([\d.]+)", t["top corners"])
    c = num(r"chamfered ([\d.]+) x 45", t["bottom corners"])
    bore = t["pilot bore (motor spigot)"]
    m = re.search(r"Ø([\d.]+) ([A-Z]+\d+)", bore)
    nominal, tol_class = float(m.group(1)), m.group(2)
    bx = w - num(r"([\d.]+) mm from the right-hand edge", bore)
    by = h - num(r"([\d.]+) mm below the top edge", bore)
    bolts = t["motor bolt holes"]
    n = int(num(r"^(\d+) x", bolts))
    thread = re.search(r"x (M\d+)", bolts).group(1)
    d_bolt = clearance(thread, re.search(r"ISO 273 (\w+) series", bolts).group(1))
    pcd = num(r"on a ([\d.]+) mm pitch circle", bolts)
    start = 90.0 + (180.0 / n if "straddling" in bolts else 0.0)
    holes = [(bx + pcd / 2 * math.cos(math.radians(start + k * 360 / n)),
              by + pcd / 2 * math.sin(math.radians(start + k * 360 / n))) for k in range(n)]
    slots = t["frame slots"]
    m = re.search(r"ISO 273 (\w+) clearance for (M\d+)", slots)
    d_slot = clearance(m.group(2), m.group(1))
    travel = num(r"travel ±([\d.]+) mm", slots)
    edge = num(r"([\d.]+) mm in from the left-hand", slots)
    return dict(w=w, h=h, r=r, c=c, bx=bx, by=by, d_bore=bore_diameter(nominal, tol_class), holes=holes,
                d_bolt=d_bolt, pcd=pcd, d_slot=d_slot, travel=travel, slot_x=[edge, w - edge])


def fmt(x: float) -> str:
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def p(x: float, y: float) -> str:
    return f"{fmt(x)},{fmt(y)}"


def xdo(*args: str) -> str:
    return subprocess.run(["xdotool", *args], check=True, capture_output=True, text=True).stdout


def search(pattern: str) -> list[str]:
    """Visible windows whose title matches: those of our LibreCAD (solve.sh passes its pid)
    when it owns any, else any (the sandbox's desktop runs no other LibreCAD)."""
    base = ["xdotool", "search", "--all", "--onlyvisible"]
    pid = os.environ.get("LIBRECAD_PID")
    for extra in (["--pid", pid] if pid else []), []:
        found = subprocess.run([*base, *extra, "--name", pattern], capture_output=True, text=True).stdout.split()
        if found:
            return found
    return []


def find_window(pattern: str, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = search(pattern)
        if found:
            return found[0]
        time.sleep(0.2)
    sys.exit(f"drive.py: no window {pattern!r} after {timeout:.0f} s")


def window_gone(pattern: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not search(pattern):
            return
        time.sleep(0.1)
    sys.exit(f"drive.py: window {pattern!r} still open after {timeout:.0f} s")


def screenshot() -> None:
    if not SCREENS.is_dir():
        return
    n = 1 + max((int(f.stem) for f in SCREENS.glob("[0-9][0-9][0-9][0-9].png")), default=0)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "x11grab", "-i", os.environ["DISPLAY"],
                    "-frames:v", "1", str(SCREENS / f"{n:04d}.png")], check=False, timeout=30)


class LibreCAD:
    def __init__(self) -> None:
        self.win = find_window(r"^LibreCAD - \[")
        xdo("windowactivate", "--sync", self.win)
        time.sleep(1.0)
        size = re.search(r"Geometry: (\d+)x(\d+)", xdo("getwindowgeometry", self.win))
        if size and size.groups() != ("1280", "720"):  # the docks would not be where we click
            xdo("windowsize", "--sync", self.win, "1280", "720")
            time.sleep(1.0)

    def click(self, xy: tuple[int, int]) -> None:
        xdo("mousemove", "--window", self.win, str(xy[0]), str(xy[1]), "click", "1")

    def command(self, *tokens: str) -> None:
        """Type a command and its inputs into the command line, then end it."""
        self.click(COMMAND_LINE)
        time.sleep(0.15)
        for tok in tokens:
            xdo("type", "--delay", "8", "--", tok)
            xdo("key", "Return")
            time.sleep(0.12)
        xdo("key", "Escape")
        time.sleep(0.1)
        xdo("key", "Escape")
        time.sleep(0.15)

    def open_dialog(self, clicks: list[tuple[int, int]], title: str) -> str:
        """Click through to a dialog; a click lost while the desktop is busy is retried."""
        for _ in range(4):
            for k, xy in enumerate(clicks):
                if k:
                    time.sleep(0.8)
                self.click(xy)
            end = time.monotonic() + 10
            while time.monotonic() < end:
                found = search(title)
                if found:
                    xdo("windowactivate", "--sync", found[0])
                    time.sleep(0.3)
                    return found[0]
                time.sleep(0.2)
            xdo("key", "Escape")
            time.sleep(0.3)
            xdo("key", "Escape")
        sys.exit(f"drive.py: the dialog {title!r} did not open")

    def add_layer(self, name: str) -> None:
        """A new layer from the layer list's add button; LibreCAD makes it the current one."""
        self.open_dialog([ADD_LAYER], r"^Layer Settings$")
        xdo("key", "ctrl+a")
        xdo("type", "--delay", "8", name)
        xdo("key", "Return")
        window_gone(r"^Layer Settings$")
        time.sleep(0.2)

    def save_as(self, path: Path) -> None:
        self.open_dialog([FILE_MENU, SAVE_AS_ITEM], r"^Save Drawing As$")
        xdo("key", "ctrl+a")
        xdo("type", "--delay", "8", str(path))
        xdo("key", "Return")
        window_gone(r"^Save Drawing As$")
        find_window(rf"^LibreCAD - \[{re.escape(path.name)}\]", 30)


def arc3(c: tuple[float, float], r: float, a0: float, a1: float) -> list[str]:
    """Start, middle and end point of the counter-clockwise arc from a0 to a1 (degrees)."""
    am = (a0 + a1) / 2
    return [p(c[0] + r * math.cos(math.radians(a)), c[1] + r * math.sin(math.radians(a))) for a in (a0, am, a1)]


def draw(cad: LibreCAD, g: dict) -> None:
    w, h, r, c = g["w"], g["h"], g["r"], g["c"]
    cad.add_layer("OUTLINE")
    cad.command("line", p(c, 0), p(w - c, 0), p(w, c), p(w, h - r))
    cad.command("arc", *arc3((w - r, h - r), r, 0, 90))
    cad.command("line", p(w - r, h), p(r, h))
    cad.command("arc", *arc3((r, h - r), r, 90, 180))
    cad.command("line", p(0, h - r), p(0, c), p(c, 0))
    cad.command("zoomauto")
    screenshot()

    cad.add_layer("HOLES")
    cad.command("circle", p(g["bx"], g["by"]), fmt(g["d_bore"] / 2))
    for x, y in g["holes"]:
        cad.command("circle", p(x, y), fmt(g["d_bolt"] / 2))
    rs, s, y = g["d_slot"] / 2, g["travel"], g["by"]
    for x in g["slot_x"]:
        cad.command("line", p(x - rs, y - s), p(x - rs, y + s))
        cad.command("line", p(x + rs, y - s), p(x + rs, y + s))
        cad.command("arc", *arc3((x, y + s), rs, 0, 180))
        cad.command("arc", *arc3((x, y - s), rs, 180, 360))
    screenshot()

    cad.add_layer("CENTERLINES")
    bx, by, reach = g["bx"], g["by"], g["pcd"] / 2 + OVERSHOOT
    cad.command("circle", p(bx, by), fmt(g["pcd"] / 2))
    cad.command("line", p(bx - reach, by), p(bx + reach, by))
    cad.command("line", p(bx, by - reach), p(bx, by + reach))

    cad.add_layer("DIMENSIONS")
    cad.command("dh", p(0, c), p(w, c), p(w / 2, -15))
    cad.command("dv", p(w - c, 0), p(w - r, h), p(w + 15, h / 2))
    cad.command("dh", p(0, by), p(bx, by), p(bx / 2, h + 12))
    cad.command("dv", p(bx, 0), p(bx, by), p(-15, by / 2))
    cad.command("zoomauto")
    screenshot()


def main() -> None:
    g = geometry()
    cad = LibreCAD()
    screenshot()
    draw(cad, g)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    cad.save_as(OUT)
    screenshot()
    if not OUT.is_file():
        sys.exit(f"drive.py: LibreCAD did not write {OUT}")


if __name__ == "__main__":
    main()
