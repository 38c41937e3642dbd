"""lastexam-agent's native computer tools: its standard-library MCP client against the real
server on a real Xvfb, and its tool loop on both wires against a stand-in gateway."""

from __future__ import annotations

import base64
import json
import socketserver
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import ModuleType

import pytest

from lastexam.agents.harness import FILES_SRC

from .conftest import Display
from .test_computer_mcp import TOOLS


@pytest.fixture
def agent(monkeypatch: pytest.MonkeyPatch, toolchain: Path, display: Display,
          screens: Path) -> ModuleType:
    """The sandbox's lastexam_agent.py, in a desktop: DISPLAY set and the server installed."""
    monkeypatch.syspath_prepend(str(FILES_SRC))
    for name in ("lastexam_agent", "computer_tools"):
        sys.modules.pop(name, None)
    import computer_tools
    import lastexam_agent

    monkeypatch.setattr(computer_tools, "SERVER", str(toolchain / "bin" / "computer-mcp"))
    monkeypatch.setenv("DISPLAY", display.name)
    monkeypatch.setenv("LASTEXAM_SCREENS_DIR", str(screens))
    return lastexam_agent


def test_its_mcp_client_drives_the_server(agent: ModuleType, display: Display,
                                          screens: Path) -> None:
    import computer_tools

    tools = agent.start_computer()
    assert tools is not None and tools.names() == TOOLS
    assert tools.call("click", {"x": 500, "y": 500}) == ("left click at 500,500", [], False)
    assert display.pointer() == (640, 400)
    text, images, error = tools.call("screenshot", {})
    assert (text, error) == ("saved screens/0001.png", False)
    assert computer_tools.saved_path(text) == "screens/0001.png"
    [image] = images
    assert image["media_type"] == "image/png"
    assert base64.b64decode(image["data"]) == (screens / "0001.png").read_bytes()
    text, images, error = tools.call("click", {"x": 2000, "y": 0})
    assert error and "less than or equal to 1000" in text and images == []
    assert tools.call("cursor_position", {}) == ("x=500 y=500", [], False)
    tools.close()


def test_without_a_display_it_offers_no_computer_tools(agent: ModuleType,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY")
    assert agent.start_computer() is None
    assert {name for name, _, _ in agent.tool_specs(None)} == {
        "bash", "read_file", "write_file", "edit_file"}


def test_only_the_last_screenshots_stay_in_the_conversation(agent: ModuleType) -> None:
    png = {"media_type": "image/png", "data": "AAAA"}
    client = agent.Client("", "anthropic", "m", "", 1, "", [])
    messages: list = []
    for i in range(5):
        client.add_results(messages, [(f"c{i}", "saved", False, [png])])
    kept = [b for m in messages for r in m["content"] for b in r["content"] if b["type"] == "image"]
    assert len(kept) == agent.KEEP_IMAGES
    assert messages[-1]["content"][0]["content"][1]["source"]["data"] == "AAAA"
    assert messages[0]["content"][0]["content"][1]["text"].startswith("[an older screenshot")


class Gateway(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Answers each model call with the next scripted response and keeps the requests."""

    daemon_threads = True

    def __init__(self, path: str, answers: list[dict]) -> None:
        self.answers, self.requests = answers, []
        super().__init__(path, Handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Gateway

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.requests.append(body)
        data = json.dumps(self.server.answers.pop(0)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def anthropic_answers() -> list[dict]:
    calls = [{"type": "tool_use", "id": "t1", "name": "click", "input": {"x": 500, "y": 500}},
             {"type": "tool_use", "id": "t2", "name": "screenshot", "input": {}}]
    return [{"content": calls, "usage": {"input_tokens": 1, "output_tokens": 1}},
            {"content": [{"type": "text", "text": "done"}], "usage": {}}]


def chat_answers() -> list[dict]:
    calls = [{"id": "t1", "type": "function",
              "function": {"name": "click", "arguments": '{"x": 500, "y": 500}'}},
             {"id": "t2", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}]
    return [{"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": calls}}]},
            {"choices": [{"message": {"role": "assistant", "content": "done"}}]}]


@pytest.fixture
def gateway(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Gateway]:
    answers = anthropic_answers() if request.param == "anthropic" else chat_answers()
    server = Gateway(str(tmp_path / "gw.sock"), answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def image_sent(api: str, request: dict) -> str:
    """The base64 PNG the agent sent back to the model after its screenshot call."""
    if api == "anthropic":
        [results] = [m for m in request["messages"] if m["role"] == "user"
                     and isinstance(m["content"], list)]
        shot = next(r for r in results["content"] if r["tool_use_id"] == "t2")
        assert shot["content"][0] == {"type": "text", "text": "saved screens/0001.png"}
        return shot["content"][1]["source"]["data"]
    tools = [m for m in request["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tools] == ["left click at 500,500", "saved screens/0001.png"]
    last = request["messages"][-1]
    assert last["role"] == "user" and "t2" in last["content"][0]["text"]
    url = last["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    return url.removeprefix("data:image/png;base64,")


@pytest.mark.parametrize("gateway", ["anthropic", "chat"], indirect=True)
def test_the_tool_loop_clicks_sees_and_logs(agent: ModuleType, gateway: Gateway, screens: Path,
                                           display: Display, capsys: pytest.CaptureFixture,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    api = "anthropic" if "content" in gateway.answers[0] else "chat"
    monkeypatch.setenv("LASTEXAM_INSTRUCTION", "Click the middle, then look.")
    monkeypatch.setattr(sys, "argv", ["lastexam_agent.py", "--socket", gateway.server_address,
                                      "--api", api, "--model", "m"])
    assert agent.main() == 0
    assert display.pointer() == (640, 400)
    first, second = gateway.requests
    offered = {(t.get("function") or t)["name"] for t in first["tools"]}
    assert offered == TOOLS | {"bash", "read_file", "write_file", "edit_file"}
    assert base64.b64decode(image_sent(api, second)) == (screens / "0001.png").read_bytes()
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0]["type"] == "computer" and set(events[0]["tools"]) == TOOLS
    assert events[1]["type"] == "system" and "desktop" in events[1]["text"]
    [calls] = [e["tool_calls"] for e in events if e["type"] == "assistant" and e["tool_calls"]]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        ("click", {"x": 500, "y": 500}), ("screenshot", {})]
    results = [e for e in events if e["type"] == "tool_result"]
    assert results[0] == {"type": "tool_result", "id": "t1", "name": "click",
                          "output": "left click at 500,500", "is_error": False}
    assert results[1] == {"type": "tool_result", "id": "t2", "name": "screenshot",
                          "output": "saved screens/0001.png", "is_error": False,
                          "images": 1, "screenshot": "screens/0001.png"}
