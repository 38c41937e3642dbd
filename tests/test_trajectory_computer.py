"""Computer use in trajectories: every client's computer tool call is a step named by its
action with the arguments as sent; a screenshot's observation references the saved image by
its path in the trial folder; no image is inlined; a reference the agent could have forged
(a path that is not a plain screens/NNNN.png, a file the folder does not hold) is not kept.

The native logs under tests/agents/data are the clients' own output: the npm clients'
recorded from a desktop launch of each adapter with a stand-in computer server, lastexam-
agent's from a desktop trial with the real server (a click, then a screenshot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lastexam.trajectory import build_trajectory
from lastexam.trajectory.native import (
    StepBuilder,
    claude_code_steps,
    codex_steps,
    gemini_cli_steps,
    lastexam_agent_steps,
)
from lastexam.trajectory.schema import SCHEMA_VERSION, Step

DATA = Path(__file__).parent / "agents" / "data"
PARSERS = {"claude-code": claude_code_steps, "codex": codex_steps,
           "gemini-cli": gemini_cli_steps, "lastexam-agent": lastexam_agent_steps}
# The clients whose native log inlines the screenshot (Gemini CLI's shows a placeholder;
# lastexam-agent's counts the images).
INLINED = ("claude-code", "codex")


def _calls(steps: list[Step]) -> list[tuple[str, dict]]:
    return [(c.function_name, c.arguments) for s in steps for c in s.tool_calls or []]


def _results(steps: list[Step]):
    return [r for s in steps for r in (s.observation.results if s.observation else [])]


def _build(steps: list[Step], root: Path):
    return build_trajectory(session_id="t", agent="a", agent_version="1", model="m",
                            instruction="do it", native=steps, calls=[], summary=None,
                            duration_s=1.0, trial_root=root)


@pytest.mark.parametrize("agent", list(PARSERS))
def test_each_clients_computer_calls_become_action_steps(agent: str, tmp_path: Path) -> None:
    log = DATA / f"{agent}.computer.jsonl"
    assert ("iVBORw0KGgo" in log.read_text()) == (agent in INLINED)
    steps = PARSERS[agent](log)
    assert steps is not None
    assert _calls(steps) == [("click", {"x": 500, "y": 300}), ("screenshot", {})]
    click, shot = _results(steps)
    assert click.content in ("click done", "left click at 500,300")
    assert shot.images() == ["screens/0001.png"]
    assert shot.extra is None  # the one image is the saved screenshot: nothing else left out

    (tmp_path / "screens").mkdir()
    (tmp_path / "screens" / "0001.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    traj = _build(steps, tmp_path)
    assert traj.schema_version == SCHEMA_VERSION == "ATIF-v1.6"
    text = json.dumps(traj.model_dump(mode="json"))
    assert "iVBORw0KGgo" not in text and "base64" not in text
    image = [p for p in _results(traj.steps)[1].content if p.type == "image"]
    assert image[0].source.model_dump() == {"media_type": "image/png", "path": "screens/0001.png"}


def test_a_screenshot_missing_from_the_trial_folder_is_not_referenced(tmp_path: Path) -> None:
    steps = claude_code_steps(DATA / "claude-code.computer.jsonl")
    assert steps is not None
    traj = _build(steps, tmp_path)
    shot = _results(traj.steps)[1]
    assert shot.images() == []
    assert shot.extra == {"missing_image": "screens/0001.png"}
    assert "1 screenshot(s) named by tool results are not in the trial folder" in (traj.notes or "")


def test_a_symlink_is_not_a_screenshot(tmp_path: Path) -> None:
    (tmp_path / "screens").mkdir()
    (tmp_path / "secret").write_text("x")
    (tmp_path / "screens" / "0001.png").symlink_to(tmp_path / "secret")
    steps = codex_steps(DATA / "codex.computer.jsonl")
    assert steps is not None
    assert _results(_build(steps, tmp_path).steps)[1].images() == []


def _one_result(name: str, content: object) -> list[Step]:
    b = StepBuilder()
    b.call("c1", name, {})
    b.result("c1", content)
    return b.done()


@pytest.mark.parametrize("text", [
    "saved screens/../trial.json", "saved /etc/passwd", "saved screens/1.png",
    "saved screens/0001.png.html", "saved screens/00001.png", "I saved screens/0001.png",
])
def test_only_a_plain_screens_name_is_taken(text: str) -> None:
    [step] = _one_result("mcp__computer__screenshot", text)
    assert step.observation.results[0].images() == []
    assert step.observation.results[0].content == text


def test_other_tools_cannot_claim_a_screenshot() -> None:
    [step] = _one_result("Bash", "saved screens/0001.png")
    assert step.observation.results[0].images() == []


def test_images_without_a_saved_file_are_dropped_with_a_note() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo" * 1000}}
    [step] = _one_result("Read", [image, {"type": "text", "text": "a picture"}])
    result = step.observation.results[0]
    assert result.content == "a picture"
    assert result.extra and result.extra["images_dropped"] == 1
    [shot] = _one_result("mcp__computer__screenshot", [image])  # screenshot {save: false}
    assert shot.observation.results[0].extra["images_dropped"] == 1


def test_gemini_and_claude_names_map_to_the_action_and_others_are_kept() -> None:
    b = StepBuilder()
    for i, name in enumerate(["mcp_computer_type", "mcp__computer__key", "mcp__other__key",
                              "mcp_computer_", "Bash"]):
        b.call(f"c{i}", name, {"a": i})
    assert [c.function_name for c in b.done()[0].tool_calls or []] == [
        "type", "key", "mcp__other__key", "mcp_computer_", "Bash"]


def test_steps_without_a_time_are_dated_by_their_model_call(tmp_path: Path) -> None:
    """Codex's log has no times: paired with the gateway's calls, each step gets the time its
    answer was complete (what the viewer matches to the screen recording)."""
    from lastexam.gateway.models import CallRecord, SessionSummary

    steps = codex_steps(DATA / "codex.computer.jsonl")
    assert steps is not None and all(s.timestamp is None for s in steps)
    calls = [CallRecord(seq=i, started_at=f"2026-12-03T11:00:0{i}.000+00:00", wire="responses",
                        path="/v1/responses", stream=True, requested_model="m", model="m",
                        status=200, latency_ms=250.0, request={"tools": True})
             for i in range(len(steps))]
    traj = build_trajectory(session_id="t", agent="codex", agent_version="1", model="m",
                            instruction="x", native=steps, calls=calls,
                            summary=SessionSummary(model="m"), duration_s=1.0)
    assert [s.timestamp for s in traj.steps[1:]] == [
        f"2026-12-03T11:00:0{i}.250+00:00" for i in range(len(steps))]


@pytest.mark.parametrize("agent", list(PARSERS))
def test_without_a_native_log_the_gateway_log_gives_the_same_steps(agent: str,
                                                                    tmp_path: Path) -> None:
    """The last model call of each real client (its system prompt and tool list cut short,
    the screenshot replaced by a small PNG), logged as the gateway logs it."""
    from lastexam.trajectory.gateway_log import gateway_steps

    log = DATA / f"{agent}.gateway.jsonl"
    assert "iVBORw0KGgo" in log.read_text()  # the client sent the screenshot to the model
    steps = gateway_steps(log)
    assert steps is not None
    assert _calls(steps) == [("click", {"x": 500, "y": 300}), ("screenshot", {})]
    click, shot = _results(steps)
    assert "click" in _text(click.content)
    assert shot.images() == ["screens/0001.png"]
    assert steps[-1].message == "done" and not steps[-1].tool_calls
    traj = _build(steps, tmp_path)  # no screens/ folder: the reference is dropped
    assert "iVBORw0KGgo" not in json.dumps(traj.model_dump(mode="json"))
    assert gateway_steps(tmp_path / "absent.jsonl") is None


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.text or "" for p in content)  # type: ignore[union-attr]


def test_the_trajectory_says_its_steps_come_from_the_gateway_log(tmp_path: Path) -> None:
    from lastexam.trajectory.gateway_log import gateway_steps

    steps = gateway_steps(DATA / "codex.gateway.jsonl")
    traj = build_trajectory(session_id="t", agent="codex", agent_version="1", model="m",
                            instruction="x", native=steps, calls=[], summary=None,
                            duration_s=1.0, trial_root=tmp_path, from_gateway=True)
    assert "rebuilt from the conversation in the gateway log" in (traj.notes or "")
    empty = build_trajectory(session_id="t", agent="codex", agent_version="1", model="m",
                             instruction="x", native=None, calls=[], summary=None,
                             duration_s=1.0, from_gateway=True)
    assert empty.notes == "no native agent log could be read: the steps hold the instruction only"
    assert len(empty.steps) == 1


def test_codex_namespaces_name_other_servers_tools(tmp_path: Path) -> None:
    from lastexam.trajectory.gateway_log import gateway_steps

    items = [{"type": "function_call", "call_id": "a", "name": "click",
              "namespace": "mcp__computer", "arguments": "{}"},
             {"type": "function_call", "call_id": "b", "name": "query",
              "namespace": "mcp__db", "arguments": '{"q": 1}'},
             {"type": "function_call", "call_id": "c", "name": "spawn_agent",
              "namespace": "multi_agent_v1", "arguments": "not json"}]
    log = tmp_path / "gateway.jsonl"
    log.write_text(json.dumps({"wire": "responses", "status": 200, "stream": False,
                               "request": {"tools": [{}], "input": items}}) + "\n")
    steps = gateway_steps(log)
    assert steps is not None
    assert _calls(steps) == [("click", {}), ("mcp__db__query", {"q": 1}),
                             ("spawn_agent", {"input": "not json"})]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", ["anthropic", "chat", "responses", "gemini"])
def test_the_last_answer_is_read_in_every_wire(wire: str, stream: bool, tmp_path: Path) -> None:
    """The final answer of the gateway-log fallback, as the gateway logs it (a body, or the
    payloads of its events) for an answer the wire itself rendered."""
    from lastexam.gateway.wire import WIRES, Reply, SSEParser
    from lastexam.trajectory.gateway_log import gateway_steps

    chunks = b"".join(WIRES[wire].render(Reply(text="All saved."), "m", stream))
    if stream:
        parser = SSEParser()
        parser.feed(chunks)
        parser.close()
        response = parser.events
    else:
        response = json.loads(chunks)
    log = tmp_path / "gateway.jsonl"
    log.write_text(json.dumps({"wire": wire, "status": 200, "stream": stream,
                               "request": {"tools": [{}]}, "response": response}) + "\n")
    steps = gateway_steps(log)
    assert steps is not None and [s.message for s in steps] == ["All saved."]


# Lines of the wrong shape, as an agent (or a client's bug) can print them on the stdout the
# Codex and Gemini CLI logs are read from: each is skipped, not the whole log.
MALFORMED_OLDER = [
    '{"type": "message", "role": "assistant", "content": "x", "timestamp": 5}',
    '{"type": "item.completed", "item": ["not", "an", "object"]}',
    '{"type": "item.completed", "item": {"type": "reasoning", "text": 5}}',
    '{"type": "item.completed", "item": {"type": "mcp_tool_call", "id": "x", "arguments": "a"}}',
    '{"type": "tool_use", "tool_id": "t", "tool_name": "x", "parameters": ["a"]}',
    '{"type": "message", "role": "assistant", "content": {"no": "text"}}',
    '{"type": "tool_result", "tool_id": "t", "output": null, "error": {"message": [1]}}',
]


@pytest.mark.parametrize("agent", ["codex", "gemini-cli"])
def test_a_malformed_line_is_skipped_not_the_whole_log(agent: str, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    good = (DATA / f"{agent}.computer.jsonl").read_text()
    log.write_text("\n".join(MALFORMED_OLDER) + "\n" + good)
    steps = PARSERS[agent](log)
    expected = PARSERS[agent](DATA / f"{agent}.computer.jsonl")
    assert steps is not None and expected is not None
    names = [name for name, _ in _calls(steps)]
    assert names[-len(_calls(expected)):] == [name for name, _ in _calls(expected)]
    assert all(isinstance(args, dict) for _, args in _calls(steps))
