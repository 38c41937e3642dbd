"""The computer server in a real desktop trial: the agent (the `command` agent running the
mcp SDK's client from the toolchain) starts /opt/desktop/bin/computer-mcp in its sandbox;
its screenshot lands in the trial folder as screens/0001.png."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from desktop.conftest import gui_task, run_trial
from PIL import Image

from lastexam.desktop.launch import missing

CLIENT = r"""
import anyio, json
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    server = StdioServerParameters(command="/opt/desktop/bin/computer-mcp", env={"PATH": "/usr/bin:/bin"})
    async with stdio_client(server) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        out = []
        for name, args in [("get_screen_size", {}), ("click", {"x": 500, "y": 500}),
                           ("cursor_position", {}), ("screenshot", {})]:
            res = await s.call_tool(name, args)
            out.append([c.text for c in res.content if c.type == "text"])
        with open("/task/output/computer.json", "w") as f:
            json.dump(out, f)

anyio.run(main)
"""


def test_the_agent_drives_its_desktop_through_the_server(toolchain: Path, tmp_path: Path,
                                                         base_env_ready: None) -> None:
    if problems := missing():
        pytest.fail("the desktop cannot run here: " + "; ".join(problems))
    quoted = CLIENT.replace("'", "'\\''")
    # DISPLAY is not passed on to the server: it finds the sandbox's own, :0.
    _, folder = run_trial(gui_task(tmp_path), tmp_path / "run",
                          f"/opt/desktop/bin/python3 -I -c '{quoted}'")
    size, click, cursor, shot = json.loads((folder / "output" / "computer.json").read_text())
    assert size[0].startswith("1024x768 pixels")  # the task's [desktop] screen
    assert click == ["left click at 500,500"] and cursor == ["x=500 y=500"]
    assert shot == ["saved screens/0001.png"]
    assert Image.open(folder / "screens" / "0001.png").size == (1024, 768)
