"""Draw the diagram through Dia's GUI with xdotool: python3 draw_gui.py INPUTS OUT.dia.

The topology comes from build_dia.topology (the engineer's reading of the exports); every object
and line is made with Dia's own tools on the desktop ($DISPLAY), and Dia saves the file. Canvas
positions are offsets in Dia's window (1200 x 760, 100 % zoom: 20 px per cm) from wherever the
window manager puts it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from build_dia import topology

# Offsets from the top-left of Dia's client area (its window without the frame), in pixels.
ORIGIN = (179, 123)  # the diagram's (0 cm, 0 cm) at 100 % zoom
PX_PER_CM = 20
BOX_TOOL = (18, 266)  # Flowchart sheet, first shape: Box
LINE_TOOL = (58, 157)
client = [0, 0]  # where the window manager put the client area, found at run time
# A new box is 2 x 1 cm with its corner at the click and grows about its centre to fit its text,
# so its centre (its "main" connection point) is the click plus (1, 0.5) cm whatever the text.
CENTRE = (1.0, 0.5)


def xdo(*args: str) -> str:
    return subprocess.run(["xdotool", *args], check=True, capture_output=True, text=True).stdout


def xdo_ok(*args: str) -> bool:
    return subprocess.run(["xdotool", *args], capture_output=True, text=True).returncode == 0


def px(x_cm: float, y_cm: float) -> tuple[str, str]:
    return (str(round(client[0] + ORIGIN[0] + x_cm * PX_PER_CM)),
            str(round(client[1] + ORIGIN[1] + y_cm * PX_PER_CM)))


def click(at: tuple[int, int] | tuple[str, str], pause: float = 0.25) -> None:
    xdo("mousemove", str(at[0]), str(at[1]))
    xdo("click", "1")
    time.sleep(pause)


def box(centre: tuple[float, float], lines: list[str]) -> None:
    click((client[0] + BOX_TOOL[0], client[1] + BOX_TOOL[1]))
    click(px(centre[0] - CENTRE[0], centre[1] - CENTRE[1]), 0.5)
    for i, text in enumerate(lines):
        if i:
            xdo("key", "Return")
        xdo("type", "--delay", "15", text)
    xdo("key", "Escape")
    time.sleep(0.2)


def line(a: tuple[float, float], b: tuple[float, float]) -> None:
    click((client[0] + LINE_TOOL[0], client[1] + LINE_TOOL[1]))
    (ax, ay), (bx, by) = px(*a), px(*b)
    xdo("mousemove", ax, ay)
    xdo("mousedown", "1")
    time.sleep(0.1)
    for f in (0.3, 0.7, 1.0):
        xdo("mousemove", str(round(int(ax) + f * (int(bx) - int(ax)))), str(round(int(ay) + f * (int(by) - int(ay)))))
        time.sleep(0.08)
    xdo("mouseup", "1")
    time.sleep(0.2)


def main() -> None:
    inputs, target = Path(sys.argv[1]), Path(sys.argv[2])
    vlans, devices, links = topology(inputs, "oracle")
    home = Path(os.environ.get("TMPDIR", "/tmp")) / "dia-home"
    home.mkdir(parents=True, exist_ok=True)
    dia = subprocess.Popen(["dia", "--nosplash"], env={**os.environ, "HOME": str(home)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        win = xdo("search", "--sync", "--onlyvisible", "--name", "Diagram1.dia").split()[0]
        time.sleep(1.0)
        xdo("windowmove", win, "0", "0")
        xdo("windowsize", win, "1200", "760")
        xdo("windowactivate", "--sync", win)
        time.sleep(1.0)
        info = subprocess.run(["xwininfo", "-id", win], check=True, capture_output=True, text=True).stdout
        for line_ in info.splitlines():
            for i, key in enumerate(("Absolute upper-left X:", "Absolute upper-left Y:")):
                if key in line_:
                    client[i] = int(line_.split(":")[1])
        # Centres in cm: VLANs in two middle rows, devices above and below. The columns are
        # staggered (x = 4, 9 and 6 mod 10) so that no line's midpoint, which is a connection
        # point of the line, falls on a box centre where a later line is glued.
        vlan_at = [(6 + 10 * c, 11.5) for c in range(5)] + [(6 + 10 * c, 16.5) for c in range(4)]
        dev_at = ([(4 + 10 * c, 1.5) for c in range(5)] + [(9 + 10 * c, 6.5) for c in range(4)]
                  + [(9 + 10 * c, 21.5) for c in range(4)] + [(4 + 10 * c, 26.5) for c in range(5)])
        at: dict = {}
        for centre, v in zip(vlan_at, vlans, strict=False):
            box(centre, [f"VLAN {v['vlan']} {v['name']}", v["network"]])
            at[int(v["vlan"])] = centre
        for centre, d in zip(dev_at, sorted(devices, key=lambda d: d["hostname"]), strict=False):
            box(centre, [d["hostname"]])
            at[d["hostname"]] = centre
        for host, vid in sorted(links):
            line(at[host], at[vid])
        for _ in range(3):  # again if the keystroke was lost under load
            xdo("key", "ctrl+s")
            end = time.time() + 12
            while time.time() < end and not xdo_ok("search", "--onlyvisible", "--name", "Save Diagram"):
                time.sleep(0.3)
            if xdo_ok("search", "--onlyvisible", "--name", "Save Diagram"):
                break
        time.sleep(0.8)
        xdo("key", "ctrl+a")
        xdo("type", "--delay", "10", str(target))
        xdo("key", "Return")
        for _ in range(40):
            if target.exists() and target.stat().st_size > 0:
                break
            time.sleep(0.25)
        time.sleep(0.5)
    finally:
        dia.terminate()
        dia.wait(timeout=20)


if __name__ == "__main__":
    main()
