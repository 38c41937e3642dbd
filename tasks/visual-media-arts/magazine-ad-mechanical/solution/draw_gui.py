"""Build the ad in Inkscape's GUI with xdotool: python3 draw_gui.py INPUTS OUT.svg.

The numbers come from layout() (the designer's grid arithmetic); every object is made with
Inkscape's own tools on the desktop ($DISPLAY): Document Properties for the page, the Layer menu,
the rectangle tool with Fill and Stroke and the X/Y/W/H fields, File > Import for the logo, the
text tool and its toolbar, the XML editor for the text anchors, and File > Save As. Pixel offsets
are relative to the windows' client areas, found at run time; the main window is maximised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PT_MM = 25.4 / 72


def xdo(*args: str, check: bool = True) -> str:
    return subprocess.run(["xdotool", *args], check=check, capture_output=True, text=True).stdout


def geometry(win: str) -> tuple[int, int, int, int]:
    info = subprocess.run(["xwininfo", "-id", win], check=True, capture_output=True, text=True).stdout
    v = {k: int(line.split(":")[1]) for line in info.splitlines() for k in
         ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height") if line.strip().startswith(k)}
    return v["Absolute upper-left X"], v["Absolute upper-left Y"], v["Width"], v["Height"]


def window(name: str, timeout: float = 30, required: bool = True) -> tuple[int, int, int, int] | None:
    end = time.time() + timeout
    while time.time() < end:
        ids = xdo("search", "--onlyvisible", "--name", name, check=False).split()
        if ids:
            time.sleep(0.8)
            return geometry(ids[-1])
        time.sleep(0.3)
    if required:
        raise SystemExit(f"no window named {name!r}")
    return None


def opened(action, name: str, tries: int = 3) -> tuple[int, int, int, int]:
    """Do what opens a dialog, again if a keystroke or click was lost under load."""
    for _ in range(tries):
        action()
        found = window(name, timeout=12, required=False)
        if found:
            return found
    raise SystemExit(f"no window named {name!r} after {tries} tries")


def gone(name: str, timeout: float = 30) -> None:
    """Wait until no visible window has this name (a dialog closed)."""
    end = time.time() + timeout
    while time.time() < end and xdo("search", "--onlyvisible", "--name", name, check=False).split():
        time.sleep(0.2)
    time.sleep(0.4)


def click(x: int, y: int, pause: float = 0.3, count: int = 1) -> None:
    xdo("mousemove", str(x), str(y))
    xdo("click", "--repeat", str(count), "1")
    time.sleep(pause)


def key(*keys: str, pause: float = 0.3) -> None:
    xdo("key", *keys)
    time.sleep(pause)


def type_text(text: str) -> None:
    xdo("type", "--delay", "12", text)
    time.sleep(0.2)


def field(x: int, y: int, value: str) -> None:
    """Replace an entry's text and apply it."""
    click(x, y, 0.2, 3)
    key("ctrl+a", pause=0.1)
    type_text(value)
    key("Tab", pause=0.5)


def layout(inputs: Path) -> dict:
    job = json.loads((inputs / "job.json").read_text())
    brand = json.loads((inputs / "brand.json").read_text())["colours"]
    tw, th = job["trim_mm"]
    b, m, g = job["bleed_mm"], job["live_margin_mm"], job["grid"]["gutter_mm"]
    cols, rows = job["grid"]["columns"], job["grid"]["rows"]
    x0, y0, x1, y1 = b + m, b + m, b + tw - m, b + th - m
    cw, rh = (x1 - x0 - (cols - 1) * g) / cols, (y1 - y0 - (rows - 1) * g) / rows

    def span(p: dict) -> list[float]:
        (c0, c1), (r0, r1) = p["columns"], p["rows"]
        return [x0 + (c0 - 1) * (cw + g), y0 + (r0 - 1) * (rh + g),
                (c1 - c0 + 1) * cw + (c1 - c0) * g, (r1 - r0 + 1) * rh + (r1 - r0) * g]

    panels = [(span(p), brand[p["colour"]]["srgb"]) for p in job["panels"]]
    offer = panels[1][0]
    return {
        "page": (tw + 2 * b, th + 2 * b),
        "background": brand[job["background"]["colour"]]["srgb"],
        "panels": panels,
        "logo": (x1 - cw, y1 - cw * 60 / 150, cw),
        "texts": [(job["headline"], offer[0] + 5.0, offer[1] + 14.0),
                  (job["legal_line"], x0, y1 - 2.0)],
    }


def main() -> None:
    inputs, target = Path(sys.argv[1]), Path(sys.argv[2])
    plan = layout(inputs)
    home = Path(os.environ.get("TMPDIR", "/tmp")) / "inkscape-home"
    home.mkdir(parents=True, exist_ok=True)
    app = subprocess.Popen(["inkscape"], env={**os.environ, "HOME": str(home)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        draw(plan, inputs, target)
    finally:
        app.terminate()
        try:
            app.wait(timeout=20)
        except subprocess.TimeoutExpired:
            app.kill()


def f3(v: float) -> str:
    return f"{v:.3f}"


def draw(plan: dict, inputs: Path, target: Path) -> None:
    # A first start shows the welcome screen ("Inkscape 1.2..."): closing it opens a new document.
    end = time.time() + 90
    while not (main := window("New document 1 - Inkscape", timeout=1, required=False)):
        welcome = window("Inkscape 1.2", timeout=1, required=False)
        if welcome:
            click(welcome[0] + welcome[2] - 24, welcome[1] + 18, 1.5)
        if time.time() > end:
            raise SystemExit("Inkscape did not open a document")
    mx, my, mw, mh = main
    canvas = (mx + mw // 3, my + mh // 2)  # an empty spot of the desk, left of the page
    desk = (mx + 100, my + mh - 150)

    def fields(x: float, y: float, w: float, h: float) -> None:
        for dx, v in ((560, x), (710, y), (860, w), (1050, h)):
            field(mx + dx, my + 87, f3(v))

    # Page: trim plus bleed, in mm (Document Properties).
    dx, dy, dw, _ = opened(lambda: key("ctrl+shift+d"), "Document Properties")
    field(dx + 121, dy + 154, f3(plan["page"][0]))
    field(dx + 121, dy + 192, f3(plan["page"][1]))
    click(dx + dw - 11, dy - 11, 0.3)
    gone("Document Properties")
    # Layers: rename the first, add the others above it in turn.
    def rename() -> None:
        click(*desk)
        click(mx + 153, my + 12, 0.8)  # Layer menu
        click(mx + 211, my + 88, 0.3)  # Rename Layer...

    opened(rename, "Rename Layer")
    type_text("Background")
    key("Return", pause=0.3)
    gone("Rename Layer")
    for name in ("Panels", "Logo", "Text"):
        opened(lambda: key("shift+ctrl+n"), "Add Layer")
        type_text(name)
        key("Return", pause=0.3)
        gone("Add Layer")
    key("ctrl+Next", "ctrl+Next", "ctrl+Next", pause=0.5)  # back to Background

    def rect(box: tuple | list, colour: str) -> None:
        key("r", pause=0.3)
        xdo("mousemove", str(canvas[0] + 150), str(canvas[1] - 60))
        xdo("mousedown", "1")
        for step in (20, 60, 100):
            xdo("mousemove", str(canvas[0] + 150 + step), str(canvas[1] - 60 + step))
            time.sleep(0.05)
        xdo("mouseup", "1")
        time.sleep(0.4)
        key("ctrl+shift+f", pause=1.2)  # Fill and Stroke, docked at the right
        # The RGBA entry sits at the foot of the dock's colour area, which grows with the window.
        field(mx + mw - 55, my + mh - 206, colour.lstrip("#").lower() + "ff")
        xdo("keydown", "shift")
        click(mx + 9, my + mh - 45)  # the palette's "none" swatch: no stroke
        xdo("keyup", "shift")
        click(mx + 15, my + 124)  # selector tool
        fields(*box)
        click(*desk)

    rect((0, 0, *plan["page"]), plan["background"])
    key("ctrl+Prior", pause=0.5)  # Panels
    for box, colour in plan["panels"]:
        rect(box, colour)
    key("ctrl+Prior", pause=0.5)  # Logo
    # The logo: File > Import as editable objects, width locked to its proportions, reversed.
    opened(lambda: key("ctrl+i"), "Select file to import")
    key("ctrl+l", pause=0.3)
    type_text(str((inputs / "logo.svg").resolve()))
    opened(lambda: key("Return"), "SVG Input")
    key("Return", pause=0.3)  # "include as editable objects" is the default
    gone("SVG Input")
    time.sleep(1.0)
    lx, ly, lw = plan["logo"]
    click(mx + 965, my + 87)  # lock the proportions
    field(mx + 860, my + 87, f3(lw))
    field(mx + 560, my + 87, f3(lx))
    field(mx + 710, my + 87, f3(ly))
    click(mx + 246, my + mh - 45)  # the palette's white swatch
    click(*desk)
    key("ctrl+Prior", pause=0.5)  # Text
    for spec, ax, ay in plan["texts"]:
        click(mx + 15, my + 447)  # text tool
        click(mx + 150, my + (250 if ax > 16 else 350))  # on the desk, away from the page
        type_text(spec["text"])
        key("ctrl+a", pause=0.3)
        for x, value in ((70, "DejaVu Sans"), (270, "Bold" if spec["font"].endswith("Bold") else "Book"),
                         (410, f"{spec['size_pt']:g}")):
            click(mx + x, my + 87, 0.2, 3)
            key("ctrl+a", pause=0.1)
            type_text(value)
            key("Return", pause=0.8)
        click(mx + 246, my + mh - 45)  # white
        xx, xy, xw, _ = opened(lambda: key("ctrl+shift+x"), "XML Editor")
        field(xx + 160, xy + 313, f3(ay))  # rows: id, y, x, style
        field(xx + 160, xy + 339, f3(ax))
        click(xx + xw - 11, xy - 11, 0.3)
        gone("XML Editor")
        click(*desk)
    # File > Save As, Inkscape SVG.
    opened(lambda: key("ctrl+shift+s"), "Select file to save to")
    key("ctrl+a", pause=0.2)
    type_text(str(target))
    key("Return", pause=3.0)
    for _ in range(40):
        if target.exists() and target.stat().st_size > 0:
            break
        time.sleep(0.25)
    time.sleep(0.5)


if __name__ == "__main__":
    main()
