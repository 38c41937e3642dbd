"""`computer:` turns of the scripted upstream: each becomes a call of the computer tool in the
requesting client's own naming, in every wire, whole and streamed; bad turns are refused when
the script is loaded, and a request that offers no such tool gets an error naming the turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lastexam.errors import LastexamError
from lastexam.gateway.models import Budget
from lastexam.gateway.scripted import load_script
from lastexam.gateway.server import Gateway

from .conftest import Client, write_script
from .test_scripted import answer

SCRIPT = """
turns:
  - computer: {action: click, x: 500, y: 300}
  - computer: {action: type, text: "42"}
  - computer: {action: screenshot}
  - text: "Saved."
"""
POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}}
ACTIONS = ("click", "type", "screenshot")


def _fn(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "parameters": POINT}


# Each client's request, declaring the computer tools as that client names them (names read
# from the clients' own requests: see tests/agents/data/*.native.jsonl).
def request(client: str, stream: bool, token: str) -> tuple[str, dict, dict[str, str]]:
    if client == "claude-code":
        tools = [{"name": "Bash", "input_schema": POINT}] + [
            {"name": f"mcp__computer__{a}", "input_schema": POINT} for a in ACTIONS]
        return "/v1/messages?beta=true", {
            "model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "tools": tools,
            "messages": [{"role": "user", "content": "do it"}]}, {"x-api-key": token}
    if client == "codex":
        tools = [_fn("exec_command"), _fn("click"),  # not the namespaced one: never taken
                 {"type": "namespace", "name": "mcp__computer", "description": "computer",
                  "tools": [_fn(a) for a in ACTIONS]}]
        return "/v1/responses", {
            "model": "gpt-5", "stream": stream, "tools": tools,
            "input": [{"role": "user", "content": "do it"}]}, {"authorization": f"Bearer {token}"}
    if client == "gemini-cli":
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        decls = [{"name": "run_shell_command", "parametersJsonSchema": POINT}] + [
            {"name": f"mcp_computer_{a}", "parametersJsonSchema": POINT} for a in ACTIONS]
        return f"/v1beta/models/gemini-2.5-pro:{method}", {
            "contents": [{"role": "user", "parts": [{"text": "do it"}]}],
            "tools": [{"functionDeclarations": decls}]}, {"x-goog-api-key": token}
    tools = [{"type": "function", "function": {"name": n, "parameters": POINT}}
             for n in ("bash", *ACTIONS)]
    return "/v1/chat/completions", {
        "model": "m", "stream": stream, "tools": tools,
        "messages": [{"role": "user", "content": "do it"}]}, {"authorization": f"Bearer {token}"}


WIRE = {"claude-code": "anthropic", "codex": "responses", "gemini-cli": "gemini",
        "lastexam-agent": "chat"}
NAMES = {"claude-code": "mcp__computer__{}", "codex": "{}", "gemini-cli": "mcp_computer_{}",
         "lastexam-agent": "{}"}


def namespaces(stream: bool, body: Any) -> list[str | None]:
    """The namespace of each function call of a Responses answer (every event that carries
    the item must say it)."""
    if not stream:
        return [i.get("namespace") for i in body["output"] if i["type"] == "function_call"]
    items = [e["item"] for e in body if "item" in e and e["item"]["type"] == "function_call"]
    assert items and len({i.get("namespace") for i in items}) == 1
    return [items[-1].get("namespace")]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("agent", list(WIRE))
def test_computer_turns_in_each_clients_naming(gateway: Gateway, client: Client, tmp_path: Path,
                                               agent: str, stream: bool) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", SCRIPT), Budget(),
                                   tmp_path / "log.jsonl")
    path, body, headers = request(agent, stream, session.token)
    wire = WIRE[agent]
    expected = [("click", {"x": 500, "y": 300}), ("type", {"text": "42"}), ("screenshot", {})]
    for action, args in expected:
        status, out, _ = client.post(path, body, headers)
        assert status == 200, out
        assert answer(wire, stream, out) == ("", [(NAMES[agent].format(action), args)])
        if agent == "codex":
            assert namespaces(stream, out) == ["mcp__computer"]
    assert answer(wire, stream, client.post(path, body, headers)[1]) == ("Saved.", [])


def test_a_request_without_the_tool_gets_an_error_naming_the_turn(
        gateway: Gateway, client: Client, tmp_path: Path) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", SCRIPT), Budget(),
                                   tmp_path / "log.jsonl")
    path, body, headers = request("claude-code", False, session.token)
    body["tools"] = [t for t in body["tools"] if t["name"] != "mcp__computer__type"]
    assert client.post(path, body, headers)[0] == 200  # turn 1: click
    status, out, _ = client.post(path, body, headers)
    assert status == 400
    message = out["error"]["message"]
    assert "turn 2" in message and "'type'" in message
    assert "Bash, mcp__computer__click, mcp__computer__screenshot" in message


def test_codex_namespace_is_named_in_the_error(gateway: Gateway, client: Client,
                                               tmp_path: Path) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", """
turns:
  - computer: {action: drag, x1: 1, y1: 2, x2: 3, y2: 4}
"""), Budget(), tmp_path / "log.jsonl")
    path, body, headers = request("codex", False, session.token)
    status, out, _ = client.post(path, body, headers)
    assert status == 400
    assert "turn 1" in out["error"]["message"]
    assert "mcp__computer.click" in out["error"]["message"]


@pytest.mark.parametrize(("turn", "problem"), [
    ("{action: clik, x: 1, y: 2}", "unknown action 'clik'"),
    ("{x: 1, y: 2}", "no action"),
    ("{action: click, x: 1}", "field 'y': required key is missing"),
    ("{action: click, x: 1, y: 1001}", "field 'y'"),
    ("{action: click, x: 1.5, y: 2}", "field 'x'"),
    ("{action: click, x: 1, y: 2, button: side}", "field 'button'"),
    ("{action: type, txt: hi}", "field 'txt': unknown key"),
    ("{action: key}", "field 'keys'"),
    ("{action: scroll, x: 1, y: 2, direction: sideways}", "field 'direction'"),
])
def test_bad_computer_turns_are_refused_on_load(tmp_path: Path, turn: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"turns:\n  - text: first\n  - computer: {turn}\n")
    with pytest.raises(LastexamError) as err:
        load_script(path)
    message = str(err.value)
    assert str(path) in message and "turn 2 (computer)" in message and problem in message


def test_every_action_of_the_contract_loads(tmp_path: Path) -> None:
    turns = [
        {"action": "key", "keys": "ctrl+s"}, {"action": "key_down", "key": "shift"},
        {"action": "key_up", "key": "shift"}, {"action": "hold_key", "key": "a", "seconds": 0.5},
        {"action": "type", "text": "x"}, {"action": "mouse_move", "x": 0, "y": 1000},
        {"action": "click", "x": 1, "y": 2, "button": "right", "count": 2},
        {"action": "drag", "x1": 1, "y1": 2, "x2": 3, "y2": 4},
        {"action": "mouse_down"}, {"action": "mouse_up", "button": "middle"},
        {"action": "scroll", "x": 5, "y": 5, "direction": "up", "amount": 2},
        {"action": "wait", "seconds": 1}, {"action": "screenshot", "save": False},
        {"action": "cursor_position"}, {"action": "get_screen_size"},
    ]
    path = tmp_path / "all.yaml"
    path.write_text(json.dumps({"turns": [{"computer": t} for t in turns]}))
    script = load_script(path)
    assert [t.computer for t in script.turns] == turns
    assert script.turns[0].computer_args == {"keys": "ctrl+s"}
