"""The gateway with the scripted upstream, over its unix socket, in every wire format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lastexam.gateway.models import Budget, Usage
from lastexam.gateway.server import Gateway
from lastexam.trajectory import read_calls

from .conftest import Client, write_script

SCRIPT = """
turns:
  - shell: "echo hi > /task/output/x.txt"
    reasoning: "write the file"
  - text: "All done."
"""

SHELL = {"type": "object", "properties": {"command": {"type": "string"}}}


def request(wire: str, stream: bool, token: str) -> tuple[str, dict, dict[str, str]]:
    msgs = [{"role": "user", "content": "do it"}]
    if wire == "anthropic":
        return "/v1/messages?beta=true", {
            "model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream, "messages": msgs,
            "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {}}},
                      {"name": "Bash", "input_schema": SHELL}],
        }, {"x-api-key": token}
    if wire == "chat":
        return "/v1/chat/completions", {
            "model": "m", "stream": stream, "messages": msgs,
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": SHELL}}],
        }, {"authorization": f"Bearer {token}"}
    if wire == "responses":
        return "/v1/responses", {
            "model": "gpt-5", "stream": stream, "input": [{"role": "user", "content": "do it"}],
            "tools": [{"type": "function", "name": "exec_command",
                       "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
        }, {"authorization": f"Bearer {token}"}
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"/v1beta/models/gemini-2.5-pro:{method}", {
        "contents": [{"role": "user", "parts": [{"text": "do it"}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command",
                                             "parametersJsonSchema": SHELL}]}],
    }, {"x-goog-api-key": token}


def answer(wire: str, stream: bool, body: Any) -> tuple[str, list[tuple[str, dict]]]:
    """(text, [(tool name, arguments)]) of an answer, reassembled from its stream if streamed."""
    text, calls = "", []
    if wire == "anthropic":
        if not stream:
            blocks = body["content"]
        else:
            blocks = []
            for e in body:
                if e["type"] == "content_block_start":
                    blocks.append(dict(e["content_block"], partial=""))
                elif e["type"] == "content_block_delta":
                    d = e["delta"]
                    b = blocks[e["index"]]
                    if d["type"] == "text_delta":
                        b["text"] += d["text"]
                    elif d["type"] == "input_json_delta":
                        b["partial"] += d["partial_json"]
            for b in blocks:
                if b["type"] == "tool_use":
                    b["input"] = json.loads(b["partial"])
            assert body[-1]["type"] == "message_stop"
        text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        calls = [(b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
    elif wire == "chat":
        if not stream:
            msg = body["choices"][0]["message"]
            text = msg["content"] or ""
            calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in msg.get("tool_calls") or []]
        else:
            parts: dict[int, list[str]] = {}
            for e in body:
                for ch in e["choices"]:
                    d = ch["delta"]
                    text += d.get("content") or ""
                    for tc in d.get("tool_calls") or []:
                        parts.setdefault(tc["index"], [tc["function"]["name"], ""])
                        parts[tc["index"]][1] += tc["function"]["arguments"]
            calls = [(n, json.loads(a)) for n, a in parts.values()]
    elif wire == "responses":
        output = body["output"] if not stream else body[-1]["response"]["output"]
        if stream:
            assert body[-1]["type"] == "response.completed"
        for item in output:
            if item["type"] == "message":
                text += "".join(c["text"] for c in item["content"])
            elif item["type"] == "function_call":
                calls.append((item["name"], json.loads(item["arguments"])))
    else:
        chunks = body if stream else [body]
        for c in chunks:
            for p in c["candidates"][0]["content"]["parts"]:
                if "functionCall" in p:
                    calls.append((p["functionCall"]["name"], p["functionCall"]["args"]))
                elif not p.get("thought"):
                    text += p.get("text", "")
    return text, calls


SHELL_NAME = {"anthropic": ("Bash", "command"), "chat": ("bash", "command"),
              "responses": ("exec_command", "cmd"), "gemini": ("run_shell_command", "command")}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", ["anthropic", "chat", "responses", "gemini"])
def test_script_drives_each_wire(gateway: Gateway, client: Client, tmp_path: Path, wire: str,
                                 stream: bool) -> None:
    model = write_script(tmp_path / "s.yaml", SCRIPT)
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t1", model, Budget(), log)
    path, body, headers = request(wire, stream, session.token)

    status, first, ctype = client.post(path, body, headers)
    assert status == 200, first
    assert ("text/event-stream" in ctype) == stream
    _, calls = answer(wire, stream, first)
    name, arg = SHELL_NAME[wire]
    assert calls == [(name, {arg: "echo hi > /task/output/x.txt"})]

    status, second, _ = client.post(path, body, headers)
    assert answer(wire, stream, second) == ("All done.", [])
    _, third, _ = client.post(path, body, headers)
    assert answer(wire, stream, third) == ("Done.", [])  # the turns have run out

    summary = gateway.close_session(session.token)
    assert summary.model_calls == 3
    assert summary.usage.input_tokens > 0 and summary.usage.output_tokens > 0
    assert summary.cost_usd is None  # a script has no price unless it names one
    calls_logged = read_calls(log)
    assert [c.status for c in calls_logged] == [200, 200, 200]
    assert all(c.wire == wire and c.stream == stream for c in calls_logged)
    # Each call's own usage is logged, and the summary is their sum.
    assert all(c.usage is not None and c.usage.output_tokens > 0 for c in calls_logged)
    assert sum((c.usage for c in calls_logged), Usage()) == summary.usage
    assert not any(c.estimated for c in calls_logged)
    assert calls_logged[0].latency_ms > 0


def test_side_requests_do_not_consume_turns(gateway: Gateway, client: Client, tmp_path: Path) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", SCRIPT), Budget(),
                                   tmp_path / "log.jsonl")
    path, body, headers = request("anthropic", False, session.token)
    side = {k: v for k, v in body.items() if k != "tools"}
    _, out, _ = client.post(path, side, headers)
    assert answer("anthropic", False, out) == ("OK", [])
    _, out, _ = client.post(path, body, headers)
    assert answer("anthropic", False, out)[1][0][0] == "Bash"


def test_tokens_refused_when_forged_or_closed(gateway: Gateway, client: Client, tmp_path: Path) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", SCRIPT), Budget(),
                                   tmp_path / "log.jsonl")
    path, body, _ = request("anthropic", False, "")
    status, out, _ = client.post(path, body, {"x-api-key": session.token + "x"})
    assert status == 401 and "unknown gateway token" in out["error"]["message"]
    status, out, _ = client.post(path, body, {})
    assert status == 401
    gateway.close_session(session.token)
    status, out, _ = client.post(path, body, {"x-api-key": session.token})
    assert status == 401 and "closed" in out["error"]["message"]


def test_token_budget_refuses_further_calls(gateway: Gateway, client: Client, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", """
turns:
  - shell: "true"
    usage: {input_tokens: 900, output_tokens: 200}
  - shell: "true"
    usage: {input_tokens: 900, output_tokens: 200}
  - text: never
""")
    session = gateway.open_session("t", script, Budget(max_tokens=1500), tmp_path / "log.jsonl")
    path, body, headers = request("chat", True, session.token)
    assert client.post(path, body, headers)[0] == 200
    assert client.post(path, body, headers)[0] == 200  # the call that crosses is answered
    status, out, _ = client.post(path, body, headers)
    assert status == 400
    assert "budget is exhausted" in out["error"]["message"]
    summary = gateway.close_session(session.token)
    assert summary.usage.total_tokens == 2200
    assert summary.refused_calls == 1 and summary.model_calls == 2
    assert summary.budget_exhausted and "--max-tokens 1500" in summary.budget_exhausted


def test_priced_script_and_cost_budget(gateway: Gateway, client: Client, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", """
price_as: claude-sonnet-4-5
turns:
  - text: one
    usage: {input_tokens: 1000000, output_tokens: 0}
  - text: two
""")
    session = gateway.open_session("t", script, Budget(max_cost_usd=2.0), tmp_path / "log.jsonl")
    path, body, headers = request("anthropic", False, session.token)
    assert client.post(path, body, headers)[0] == 200
    assert client.post(path, body, headers)[0] == 400  # $3 spent of $2
    summary = gateway.close_session(session.token)
    assert summary.cost_usd == pytest.approx(3.0)
    assert summary.budget_exhausted and "cost budget" in summary.budget_exhausted


def test_count_tokens_is_not_a_model_call(gateway: Gateway, client: Client, tmp_path: Path) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", SCRIPT), Budget(),
                                   tmp_path / "log.jsonl")
    status, out, _ = client.post("/v1/messages/count_tokens", {"messages": []},
                                 {"x-api-key": session.token})
    assert status == 200 and out["input_tokens"] > 0
    assert gateway.close_session(session.token).model_calls == 0


def test_unknown_path_is_404(gateway: Gateway, client: Client, tmp_path: Path) -> None:
    session = gateway.open_session("t", write_script(tmp_path / "s.yaml", SCRIPT), Budget(),
                                   tmp_path / "log.jsonl")
    status, _, _ = client.post("/v1/embeddings", {}, {"x-api-key": session.token})
    assert status == 404


def test_a_shell_tool_taking_a_list_gets_the_command_in_a_list(gateway: Gateway, client: Client,
                                                                tmp_path: Path) -> None:
    """Cline's `run_commands` takes `commands: [string]`."""
    model = write_script(tmp_path / "s.yaml", SCRIPT)
    session = gateway.open_session("t1", model, Budget(), tmp_path / "gateway.jsonl")
    listed = {"type": "object", "properties": {"commands": {"type": "array", "items": {"type": "string"}}}}
    body = {"model": "m", "messages": [{"role": "user", "content": "do it"}],
            "tools": [{"type": "function", "function": {"name": "run_commands", "parameters": listed}}]}
    status, first, _ = client.post("/v1/chat/completions", body,
                                   {"authorization": f"Bearer {session.token}"})
    assert status == 200, first
    assert answer("chat", False, first)[1] == [("run_commands",
                                                {"commands": ["echo hi > /task/output/x.txt"]})]
    gateway.close_session(session.token)
