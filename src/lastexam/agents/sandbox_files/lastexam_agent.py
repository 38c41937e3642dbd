#!/usr/bin/env python3
"""lastexam-agent: a reference tool-loop agent that runs inside a lastexam sandbox.

Standard library only: it runs with whatever python3 the task environment provides. It talks
to the lastexam gateway over a unix socket, in the Anthropic Messages API or the OpenAI Chat
Completions API, and offers the model four tools: bash, read_file, write_file, edit_file;
in a desktop trial also the tools of the desktop's `computer` MCP server (computer_tools.py).
Its native log is one JSON event per line on stdout; messages for people go to stderr.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import time

import computer_tools
from computer_tools import ComputerTools, McpError, desktop_present, saved_path

SYSTEM = """You are an autonomous agent doing a professional task on a Linux machine.
The task's instruction is the user's message. Its input files are under /task/inputs; write
every deliverable under /task/output, exactly as the instruction names it. Nobody will answer
questions: decide, act with the tools, and check your work. When the task is done, answer
with a short summary and no tool call."""
DESKTOP = """
A desktop (an X display) is yours too: the computer tools see it (screenshot) and drive it
(click, type, key, ...) with coordinates 0-1000 on each axis, whatever the screen's size."""
KEEP_IMAGES = 3  # screenshots kept in the conversation; older ones become a note

MAX_OBSERVATION = 30_000
RETRIES = 5

TOOLS = [
    ("bash", "Run a shell command with bash -c and return its exit code and output.",
     {"command": {"type": "string", "description": "The command line."},
      "timeout_s": {"type": "integer", "description": "Seconds before it is killed (default 600)."}},
     ["command"]),
    ("read_file", "Read a text file, optionally a range of lines (1-based).",
     {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
     ["path"]),
    ("write_file", "Create or overwrite a text file with the given content.",
     {"path": {"type": "string"}, "content": {"type": "string"}},
     ["path", "content"]),
    ("edit_file", "Replace one exact, unique occurrence of old_text with new_text in a file.",
     {"path": {"type": "string"}, "old_text": {"type": "string"}, "new_text": {"type": "string"}},
     ["path", "old_text", "new_text"]),
]


def tool_specs(computer: ComputerTools | None) -> list[tuple[str, str, dict]]:
    """(name, description, JSON schema of the arguments) of every tool offered."""
    specs = [(n, d, {"type": "object", "properties": p, "required": r}) for n, d, p, r in TOOLS]
    for t in computer.tools if computer else []:
        specs.append((t["name"], t.get("description") or "",
                      t.get("inputSchema") or {"type": "object", "properties": {}}))
    return specs


def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class ModelError(Exception):
    pass


class Client:
    def __init__(self, socket_path: str, api: str, model: str, token: str, max_tokens: int,
                 system: str, tools: list[tuple[str, str, dict]]):
        self.socket_path, self.api, self.model = socket_path, api, model
        self.token, self.max_tokens = token, max_tokens
        self.system, self.tools = system, tools
        self.conn: UnixConnection | None = None

    def post(self, path: str, body: dict, headers: dict) -> dict:
        payload = json.dumps(body).encode()
        last = ""
        for attempt in range(RETRIES):
            try:
                if self.conn is None:
                    self.conn = UnixConnection(self.socket_path, timeout=900)
                self.conn.request("POST", path, payload, {"content-type": "application/json", **headers})
                resp = self.conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                self.conn, last = None, f"{type(e).__name__}: {e}"
                time.sleep(min(30, 2**attempt))
                continue
            if resp.status == 429 or resp.status >= 500:
                last = f"HTTP {resp.status}: {data[:500].decode(errors='replace')}"
                time.sleep(min(30, 2**attempt))
                continue
            try:
                parsed = json.loads(data)
            except ValueError:
                raise ModelError(f"HTTP {resp.status}: not JSON: {data[:300]!r}") from None
            if resp.status >= 400:
                raise ModelError(f"HTTP {resp.status}: {json.dumps(parsed)[:1000]}")
            return parsed
        raise ModelError(f"gave up after {RETRIES} attempts: {last}")

    def turn(self, messages: list) -> tuple[str, str, list, dict]:
        """One model call: (text, reasoning, tool calls [(id, name, args)], usage)."""
        if self.api == "anthropic":
            body = {"model": self.model, "max_tokens": self.max_tokens, "system": self.system,
                    "messages": messages,
                    "tools": [{"name": n, "description": d, "input_schema": schema}
                              for n, d, schema in self.tools]}
            out = self.post("/v1/messages", body, {"x-api-key": self.token,
                                                   "anthropic-version": "2023-06-01"})
            text = "".join(b.get("text", "") for b in out.get("content", []) if b.get("type") == "text")
            reasoning = "".join(b.get("thinking", "") for b in out.get("content", [])
                                if b.get("type") == "thinking")
            calls = [(b["id"], b["name"], b.get("input") or {}) for b in out.get("content", [])
                     if b.get("type") == "tool_use"]
            messages.append({"role": "assistant", "content": out.get("content", [])})
            return text, reasoning, calls, out.get("usage") or {}
        body = {"model": self.model, "max_tokens": self.max_tokens,
                "messages": [{"role": "system", "content": self.system}, *messages],
                "tools": [{"type": "function",
                           "function": {"name": n, "description": d, "parameters": schema}}
                          for n, d, schema in self.tools]}
        out = self.post("/v1/chat/completions", body, {"authorization": f"Bearer {self.token}"})
        msg = (out.get("choices") or [{}])[0].get("message") or {}
        calls = []
        for c in msg.get("tool_calls") or []:
            try:
                args = json.loads(c["function"].get("arguments") or "{}")
            except ValueError:
                args = {"_unparsed": c["function"].get("arguments")}
            calls.append((c["id"], c["function"]["name"], args))
        kept = {"role": "assistant", "content": msg.get("content") or ""}
        if msg.get("tool_calls"):
            kept["tool_calls"] = msg["tool_calls"]
        messages.append(kept)
        reasoning = msg.get("reasoning_content") or msg.get("reasoning") or ""
        return msg.get("content") or "", reasoning, calls, out.get("usage") or {}

    def add_results(self, messages: list, results: list[tuple[str, str, bool, list[dict]]]) -> None:
        """Tool results; images (base64 PNGs of screenshots) go in the tool result on the
        Anthropic wire and in a user message after the tool messages on Chat Completions."""
        if any(images for *_, images in results):
            forget_images(messages)
        if self.api == "anthropic":
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": cid, "is_error": err,
                 "content": [{"type": "text", "text": text or "(no output)"},
                             *({"type": "image", "source": {"type": "base64", **img}}
                               for img in images)]}
                for cid, text, err, images in results]})
            return
        messages.extend({"role": "tool", "tool_call_id": cid, "content": text}
                        for cid, text, _, _ in results)
        parts = [part for cid, _, _, images in results for img in images for part in (
            {"type": "text", "text": f"The image returned by tool call {cid}:"},
            {"type": "image_url",
             "image_url": {"url": f"data:{img['media_type']};base64,{img['data']}"}})]
        if parts:
            messages.append({"role": "user", "content": parts})


def forget_images(messages: list) -> None:
    """Replace all but the last KEEP_IMAGES - 1 images of the conversation with a note (the
    newest come next): each screenshot costs tokens on every later call."""
    found: list[tuple[list, int]] = []
    stack = [m.get("content") for m in messages if isinstance(m, dict)]
    while stack:
        node = stack.pop(0)
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, dict) and item.get("type") in ("image", "image_url"):
                    found.append((node, i))
                elif isinstance(item, dict):
                    stack.append(item.get("content"))
    for parent, i in found[:max(0, len(found) - (KEEP_IMAGES - 1))]:
        parent[i] = {"type": "text", "text": "[an older screenshot, no longer shown]"}


def clip(text: str) -> str:
    if len(text) <= MAX_OBSERVATION:
        return text
    half = MAX_OBSERVATION // 2
    return f"{text[:half]}\n... [{len(text) - MAX_OBSERVATION} characters cut] ...\n{text[-half:]}"


def run_tool(name: str, args: dict) -> tuple[str, bool]:
    try:
        if name == "bash":
            # Not a login shell: /etc/profile would reset PATH and hide the environment's tools.
            proc = subprocess.run(["bash", "-c", str(args["command"])], capture_output=True,
                                  text=True, errors="replace",
                                  timeout=int(args.get("timeout_s") or 600), cwd="/task")
            return clip(f"exit code {proc.returncode}\n{proc.stdout}{proc.stderr}"), proc.returncode != 0
        if name == "read_file":
            with open(args["path"], encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
            start = max(0, int(args.get("offset") or 1) - 1)
            stop = start + int(args["limit"]) if args.get("limit") else len(lines)
            return clip("".join(lines[start:stop])), False
        if name == "write_file":
            os.makedirs(os.path.dirname(os.path.abspath(args["path"])), exist_ok=True)
            with open(args["path"], "w", encoding="utf-8") as f:
                f.write(args["content"])
            return f"wrote {len(args['content'])} characters to {args['path']}", False
        if name == "edit_file":
            with open(args["path"], encoding="utf-8") as f:
                text = f.read()
            count = text.count(args["old_text"])
            if count != 1:
                return f"old_text occurs {count} times in {args['path']}: it must occur once", True
            with open(args["path"], "w", encoding="utf-8") as f:
                f.write(text.replace(args["old_text"], args["new_text"], 1))
            return f"edited {args['path']}", False
        return f"unknown tool {name!r}", True
    except subprocess.TimeoutExpired:
        return "the command timed out", True
    except (OSError, KeyError, ValueError, TypeError) as e:
        return f"{type(e).__name__}: {e}", True


def start_computer() -> ComputerTools | None:
    """The desktop's computer tools, when this trial has a desktop."""
    if not desktop_present():
        return None
    try:
        computer = ComputerTools([computer_tools.SERVER])
    except (OSError, McpError) as e:
        emit({"type": "computer", "error": str(e)})
        print(f"lastexam-agent: no computer tools: {e}", file=sys.stderr)
        return None
    emit({"type": "computer", "server": computer_tools.SERVER,
          "tools": sorted(computer.names())})
    return computer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--api", choices=("anthropic", "chat"), required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--max-steps", type=int, default=100)
    ap.add_argument("--max-output-tokens", type=int, default=16000)
    a = ap.parse_args()
    instruction = os.environ.get("LASTEXAM_INSTRUCTION", "")
    if not instruction:
        with open("/task/instruction.md", encoding="utf-8") as f:
            instruction = f.read()
    computer = start_computer()
    system = SYSTEM + (DESKTOP if computer else "")
    client = Client(a.socket, a.api, a.model, os.environ.get("LASTEXAM_GATEWAY_TOKEN", ""),
                    a.max_output_tokens, system, tool_specs(computer))
    emit({"type": "system", "text": system})
    emit({"type": "user", "text": instruction})
    messages: list = [{"role": "user", "content": instruction}]
    for _ in range(a.max_steps):
        try:
            text, reasoning, calls, usage = client.turn(messages)
        except ModelError as e:
            emit({"type": "end", "reason": "model_error", "error": str(e)})
            print(f"lastexam-agent: model error: {e}", file=sys.stderr)
            return 1
        emit({"type": "assistant", "text": text, "reasoning": reasoning, "usage": usage,
              "tool_calls": [{"id": c, "name": n, "arguments": args} for c, n, args in calls]})
        if not calls:
            emit({"type": "end", "reason": "done"})
            return 0
        results = []
        for cid, name, args in calls:
            if computer and name in computer.names():
                output, images, is_error = computer.call(name, args if isinstance(args, dict) else {})
            else:
                (output, is_error), images = run_tool(name, args), []
            event = {"type": "tool_result", "id": cid, "name": name, "output": output,
                     "is_error": is_error}
            if images:
                event["images"] = len(images)
                if shot := saved_path(output):
                    event["screenshot"] = shot
            emit(event)
            results.append((cid, output, is_error, images))
        client.add_results(messages, results)
    emit({"type": "end", "reason": "max_steps"})
    return 2


if __name__ == "__main__":
    sys.exit(main())
