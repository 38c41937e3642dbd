"""The scripted upstream: answers each model request of a trial with the script's next turn,
in the wire format and streaming mode the client asked in.

A `computer:` turn becomes a call of the computer-use tool of its action under the name the
client gives it (docs/agents.md, "Computer use"). Requests that declare no tools (titles,
summaries, routing checks some clients make on the side) do not consume a turn: they get a
short text answer. Once the turns have run out, every request gets the script's final text.
"""

from __future__ import annotations

import base64
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lastexam.config_file import load_model
from lastexam.errors import LastexamError
from lastexam.gateway.models import Script, ScriptTurn, Usage
from lastexam.gateway.upstream import Outcome, Sink
from lastexam.gateway.wire import (
    Reply,
    SSEParser,
    ToolCall,
    Wire,
    WireRequest,
    estimate_tokens,
)

SIDE_ANSWER = "OK"


def load_script(path: Path) -> Script:
    return load_model(path, Script, what="script file", shape="a mapping with a `turns:` list")


def oracle_script(task_dir: Path) -> Script:
    """A script whose one shell turn unpacks the task's solution/ in the sandbox and runs its
    solve.sh: the oracle's steps, carried out through a client's own shell tool (for demos and
    tests of a harness on a real task; the agent still never sees the solution otherwise)."""
    solution = task_dir / "solution"
    if not (solution / "solve.sh").is_file():
        raise LastexamError("the task has no solution/solve.sh", path=task_dir)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(solution, arcname="solution",
                filter=lambda t: None if "__pycache__" in t.name else t)
    packed = base64.b64encode(buf.getvalue()).decode()
    command = (f"mkdir -p /tmp/oracle && cd /tmp/oracle && echo {packed} | base64 -d | tar xz"
               " && bash /tmp/oracle/solution/solve.sh")
    return Script(turns=[ScriptTurn(shell=command), ScriptTurn(text="Done.")])


class ScriptedUpstream:
    def __init__(self, script: Script, name: str):
        self.script = script
        self.name = name  # the model name answers carry
        self._next = 0
        self._lock = threading.Lock()
        numbered = list(enumerate(script.turns, start=1))
        self._keyed = [(n, t) for n, t in numbered if t.when is not None]
        self._ordered = [(n, t) for n, t in numbered if t.when is None]

    def _take(self, req: WireRequest) -> tuple[int, ScriptTurn | None]:
        """The first `when:` turn the request's text contains, else the next ordered turn, with
        its number (from 1); None once the ordered turns have run out."""
        if self._keyed:
            text = "\n".join(_strings(req.body))
            for number, turn in self._keyed:
                if turn.when in text:
                    return number, turn
        with self._lock:
            if self._next >= len(self._ordered):
                return 0, None
            number, turn = self._ordered[self._next]
            self._next += 1
            return number, turn

    def upper_bound(self, wire: Wire, req: WireRequest) -> Usage:
        """Nothing: a script bills no one (what its turns claim is charged when answered)."""
        return Usage()

    def call(self, wire: Wire, req: WireRequest, headers: dict[str, str], sink: Sink) -> Outcome:
        if not wire.is_model_call(req):
            return self._count(wire, req, sink)
        stream = wire.is_stream(req)
        if not wire.tools(req):
            reply = Reply(text=SIDE_ANSWER)
        else:
            number, turn = self._take(req)
            try:
                reply = self._reply(turn, wire, req)
            except ValueError as e:
                body = wire.error_body(400, f"lastexam scripted upstream: turn {number}: {e}")
                sink.start(400, "application/json", False)
                sink.write(json.dumps(body).encode())
                return Outcome(400, self.name, None, body, str(e))
            if turn is not None and turn.usage is not None:
                reply.usage = Usage(**turn.usage.model_dump())
        if reply.usage.total_tokens == 0:
            out_bytes = len(reply.text) + len(reply.reasoning) + sum(
                len(json.dumps(c.arguments)) + len(c.name) for c in reply.tool_calls
            )
            reply.usage = Usage(input_tokens=estimate_tokens(req.size),
                                output_tokens=estimate_tokens(out_bytes))
        chunks = list(wire.render(reply, self.name, stream))
        try:
            sink.start(200, "text/event-stream" if stream else "application/json", stream)
            for chunk in chunks:
                sink.write(chunk)
        except OSError as e:  # the client hung up: the script's usage is still known exactly
            return Outcome(200, self.name, reply.usage, _logged(chunks, stream),
                           f"the stream was cut on the client's side ({type(e).__name__})")
        return Outcome(200, self.name, reply.usage, _logged(chunks, stream))

    def _reply(self, turn: ScriptTurn | None, wire: Wire, req: WireRequest) -> Reply:
        if turn is None:
            return Reply(text=self.script.final_text)
        reasoning = turn.reasoning or ""
        if turn.text is not None:
            return Reply(text=turn.text, reasoning=reasoning)
        if turn.shell is not None:
            call = wire.shell_call(req, turn.shell)
            if call is None:
                raise ValueError(f"the request declares no shell tool (tools: {_names(wire, req)})")
            return Reply(tool_calls=[call], reasoning=reasoning)
        if turn.computer is not None:
            action = turn.computer["action"]
            decl = wire.computer_tool(req, action)
            if decl is None:
                raise ValueError(f"the request offers no computer tool {action!r} "
                                 f"(tools: {_names(wire, req)})")
            call = ToolCall(decl.name, turn.computer_args, namespace=decl.namespace)
            return Reply(tool_calls=[call], reasoning=reasoning)
        assert turn.tool is not None
        declared = {d.name for d in wire.tools(req)}
        if turn.tool.name not in declared:
            raise ValueError(f"the request declares no tool {turn.tool.name!r}")
        return Reply(tool_calls=[ToolCall(turn.tool.name, dict(turn.tool.input))],
                     reasoning=reasoning)

    def _count(self, wire: Wire, req: WireRequest, sink: Sink) -> Outcome:
        n = estimate_tokens(req.size)
        body = {"totalTokens": n} if wire.name == "gemini" else {"input_tokens": n}
        sink.start(200, "application/json", False)
        sink.write(json.dumps(body).encode())
        return Outcome(200, self.name, None, body)


def _names(wire: Wire, req: WireRequest, limit: int = 80) -> str:
    """The tools a request offers, for a message (namespaced ones as `namespace.name`)."""
    names = [f"{d.namespace}.{d.name}" if d.namespace else d.name for d in wire.tools(req)]
    more = f", ... {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more or "none"


def _logged(chunks: list[bytes], stream: bool) -> object:
    """What the log keeps of an answer: its JSON body, or its streamed events' payloads."""
    if not stream:
        return json.loads(b"".join(chunks))
    parser = SSEParser()
    for c in chunks:
        parser.feed(c)
    parser.close()
    return parser.events


def _strings(value: Any) -> Iterator[str]:
    """Every string in a request body, depth first (what a `when:` turn is matched against)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
