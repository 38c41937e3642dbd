#!/usr/bin/env python3
"""lastexam-agent: a reference tool-loop agent that runs inside a lastexam sandbox.

Standard library only: it runs with whatever python3 the task environment provides. It talks
to the lastexam gateway over a unix socket, in the Anthropic Messages API or the OpenAI Chat
Completions API, and offers the model four tools: bash, read_file, write_file, edit_file.
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

SYSTEM = """You are an autonomous agent doing a professional task on a Linux machine.
The task's instruction is the user's message. Its input files are under /task/inputs; write
every deliverable under /task/output, exactly as the instruction names it. Nobody will answer
questions: decide, act with the tools, and check your work. When the task is done, answer
with a short summary and no tool call."""

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
    def __init__(self, socket_path: str, api: str, model: str, token: str, max_tokens: int):
        self.socket_path, self.api, self.model = socket_path, api, model
        self.token, self.max_tokens = token, max_tokens
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
            body = {"model": self.model, "max_tokens": self.max_tokens, "system": SYSTEM,
                    "messages": messages,
                    "tools": [{"name": n, "description": d,
                               "input_schema": {"type": "object", "properties": p, "required": r}}
                              for n, d, p, r in TOOLS]}
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
                "messages": [{"role": "system", "content": SYSTEM}, *messages],
                "tools": [{"type": "function",
                           "function": {"name": n, "description": d,
                                        "parameters": {"type": "object", "properties": p,
                                                       "required": r}}}
                          for n, d, p, r in TOOLS]}
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

    def add_results(self, messages: list, results: list[tuple[str, str, bool]]) -> None:
        if self.api == "anthropic":
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": cid, "content": text, "is_error": err}
                for cid, text, err in results]})
        else:
            messages.extend({"role": "tool", "tool_call_id": cid, "content": text}
                            for cid, text, _ in results)


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
    client = Client(a.socket, a.api, a.model, os.environ.get("LASTEXAM_GATEWAY_TOKEN", ""),
                    a.max_output_tokens)
    emit({"type": "system", "text": SYSTEM})
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
            output, is_error = run_tool(name, args)
            emit({"type": "tool_result", "id": cid, "name": name, "output": output,
                  "is_error": is_error})
            results.append((cid, output, is_error))
        client.add_results(messages, results)
    emit({"type": "end", "reason": "max_steps"})
    return 2


if __name__ == "__main__":
    sys.exit(main())
