"""The computer server in a real desktop trial: an agent (the `command` agent running the
mcp SDK's client from the toolchain; lastexam-agent driven by the scripted upstream) starts
/opt/desktop/bin/computer-mcp in its sandbox; its screenshot lands in the trial folder as
screens/0001.png."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from desktop.conftest import gui_task, run_trial
from PIL import Image

from conftest import run_json, trial_dir
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


SCRIPT = """
turns:
  - tool: {name: click, input: {x: 500, y: 500}}
  - tool: {name: screenshot, input: {}}
  - tool: {name: cursor_position, input: {}}
  - shell: |
      awk -F, 'NR > 1 { s += $1; n++ } END { printf "{\\"total\\": %.6f, \\"count\\": %d}\\n", s, n }' /task/inputs/data.csv > /task/output/result.json
  - text: Done.
"""


@pytest.fixture
def desktop(toolchain: Path, base_env_ready: None) -> None:
    if problems := missing():
        pytest.fail("the desktop cannot run here: " + "; ".join(problems))


def test_the_agent_drives_its_desktop_through_the_server(desktop: None, tmp_path: Path) -> None:
    quoted = CLIENT.replace("'", "'\\''")
    # DISPLAY is not passed on to the server: it finds the sandbox's own, :0.
    _, folder = run_trial(gui_task(tmp_path), tmp_path / "run",
                          f"/opt/desktop/bin/python3 -I -c '{quoted}'")
    size, click, cursor, shot = json.loads((folder / "output" / "computer.json").read_text())
    assert size[0].startswith("1024x768 pixels")  # the task's [desktop] screen
    assert click == ["left click at 500,500"] and cursor == ["x=500 y=500"]
    assert shot == ["saved screens/0001.png"]
    assert Image.open(folder / "screens" / "0001.png").size == (1024, 768)


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_lastexam_agent_has_the_computer_tools_in_a_desktop_trial(desktop: None, tmp_path: Path,
                                                                  api: str) -> None:
    script = tmp_path / "computer.yaml"
    script.write_text(SCRIPT)
    out = tmp_path / "run"
    result = run_json("run", gui_task(tmp_path), "--agent", "lastexam-agent", "--model",
                      f"scripted:{script}", "--agent-arg", f"api={api}", "--out", out,
                      "--max-tokens", "10000000")
    trial = result["trials"][0]
    assert trial["status"] == "completed" and trial["score"] == 1.0, trial
    folder = trial_dir(out, trial)
    assert Image.open(folder / "screens" / "0001.png").size == (1024, 768)
    log = [json.loads(line) for line in (folder / "agent" / "agent.stdout.log").read_text().splitlines()]
    results = {e["name"]: e for e in log if e["type"] == "tool_result"}
    assert results["click"]["output"] == "left click at 500,500"
    assert results["screenshot"]["screenshot"] == "screens/0001.png"
    assert results["screenshot"]["images"] == 1
    assert results["cursor_position"]["output"] == "x=500 y=500"
    calls = [json.loads(line) for line in (folder / "gateway.jsonl").read_text().splitlines()]
    # the screenshot went back to the model: the call after it carries the PNG
    sent = "data:image/png;base64," if api == "chat" else '"media_type": "image/png"'
    assert any(sent in json.dumps(c["request"]) for c in calls)
