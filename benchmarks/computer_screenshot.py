"""Screenshot round trip through the computer MCP server: a request from an MCP client (the
mcp SDK's stdio client) to the PNG's bytes decoded in that client, on a private Xvfb.

    python benchmarks/computer_screenshot.py [--calls 50] [--size 1280x800]

Needs the desktop toolchain (lastexam agents install computer) and Xvfb; it reruns itself
with the toolchain's python, which has the mcp SDK. Three screens: blank (black), ui (a
generated window of text, rules and coloured cells, like an application) and noise (random
pixels: the worst case for PNG). Each is measured with the screenshot saved (the default) and
not; prints p50 and p90 per case, the PNG's size and the server's resident memory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def toolchain_python() -> Path:
    from lastexam.computer import toolchain
    from lastexam.paths import desktop_toolchain_dir

    if problems := toolchain.missing():
        sys.exit("; ".join(problems))
    return desktop_toolchain_dir() / "bin" / "python3"


def start_xvfb(size: str) -> tuple[subprocess.Popen, str]:
    r, w = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", f"{size}x24",
                             "-nolisten", "tcp"], pass_fds=(w,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        return proc, ":" + f.readline().strip()


def scene(name: str, width: int, height: int):
    import random

    from PIL import Image, ImageDraw

    if name == "noise":
        return Image.frombytes("RGB", (width, height), random.Random(1).randbytes(width * height * 3))
    image = Image.new("RGB", (width, height), (0, 0, 0) if name == "blank" else (246, 246, 246))
    if name == "ui":
        draw, rnd = ImageDraw.Draw(image), random.Random(1)
        draw.rectangle((0, 0, width, 28), fill=(60, 64, 72))
        draw.rectangle((0, 28, width, 64), fill=(230, 230, 234))
        for y in range(90, height - 30, 22):
            draw.line((0, y, width, y), fill=(210, 210, 210))
            for x in range(60, width - 100, 120):
                if rnd.random() < 0.15:
                    draw.rectangle((x, y + 1, x + 119, y + 21), fill=(255, 242, 204))
                draw.text((x + 6, y + 5), f"{rnd.uniform(-1e4, 1e5):,.2f}", fill=(20, 20, 20))
        for x in range(60, width, 120):
            draw.line((x, 64, x, height - 30), fill=(210, 210, 210))
    return image


def show(display: str, image) -> None:
    """Put the image on the screen, in a window over all of it."""
    from Xlib import X
    from Xlib import display as xdisplay

    d = xdisplay.Display(display)
    screen = d.screen()
    win = screen.root.create_window(0, 0, image.width, image.height, 0, screen.root_depth,
                                    event_mask=X.StructureNotifyMask)
    win.map()
    while d.next_event().type != X.MapNotify:
        pass
    gc = win.create_gc()
    raw = image.tobytes("raw", "BGRX")
    rows = 40  # a PutImage request must stay under the server's request size
    for y in range(0, image.height, rows):
        h = min(rows, image.height - y)
        win.put_image(gc, 0, y, image.width, h, X.ZPixmap, 24, 0,
                      raw[y * image.width * 4:(y + h) * image.width * 4])
    d.sync()
    return d  # the window lives as long as this connection


def server_rss_kb() -> tuple[int, int]:
    """VmRSS and VmHWM (peak) of this process's child python (the server), in kB."""
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            status = Path(f"/proc/{pid}/status").read_text()
            if "python" in Path(f"/proc/{pid}/comm").read_text():
                fields = dict(line.split(":", 1) for line in status.splitlines())
                return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])
    return 0, 0


async def measure(display: str, calls: int, size: str) -> None:
    import base64

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    width, height = (int(v) for v in size.split("x"))
    launcher = Path(sys.executable).parent / "computer-mcp"
    with tempfile.TemporaryDirectory(prefix="lastexam-bench-") as screens:
        params = StdioServerParameters(command=str(launcher), env={
            "PATH": "/usr/bin:/bin", "DISPLAY": display, "LASTEXAM_SCREENS_DIR": screens})
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            idle, _ = server_rss_kb()
            print(f"{calls} screenshots per case at {size}, server: {launcher}")
            print(f"{'screen':8} {'saved':6} {'p50 ms':>8} {'p90 ms':>8} {'PNG kB':>8}")
            for name in ("blank", "ui", "noise"):
                keep = show(display, scene(name, width, height))
                for save in (True, False):
                    times, size_kb = [], 0
                    for _ in range(calls):
                        t0 = time.perf_counter()
                        res = await session.call_tool("screenshot", {"save": save})
                        png = base64.b64decode(next(c for c in res.content if c.type == "image").data)
                        times.append((time.perf_counter() - t0) * 1000)
                        assert png.startswith(b"\x89PNG"), res
                        size_kb = len(png) // 1024
                    q = statistics.quantiles(times, n=10)
                    print(f"{name:8} {save!s:6} {statistics.median(times):8.1f} {q[8]:8.1f} {size_kb:8d}")
                keep.close()
            rss, peak = server_rss_kb()
            print(f"server memory: {idle / 1024:.1f} MB resident when started, {rss / 1024:.1f} MB "
                  f"after the calls, {peak / 1024:.1f} MB at its peak")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--in-toolchain", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if not a.in_toolchain:
        python = toolchain_python()
        os.execv(python, [str(python), __file__, "--in-toolchain", "--calls", str(a.calls),
                          "--size", a.size])
    import anyio

    xvfb, display = start_xvfb(a.size)
    try:
        anyio.run(measure, display, a.calls, a.size)
    finally:
        xvfb.terminate()
        xvfb.wait()


if __name__ == "__main__":
    main()
