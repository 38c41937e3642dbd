"""A real MCP client (the mcp SDK's stdio client) of the computer server, driven by the test
through its own stdin and stdout: run with the desktop toolchain's python.

argv: the server's command. stdin: one JSON object a line, {"tool": name, "args": {...}};
stdout: first {"tools": [names]}, then one {"error", "text", "images"} a call."""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def answer(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def main() -> None:
    env = {k: os.environ[k] for k in ("DISPLAY", "PATH", "LASTEXAM_SCREENS_DIR") if k in os.environ}
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        answer({"tools": [t.name for t in (await session.list_tools()).tools]})
        while line := await anyio.to_thread.run_sync(sys.stdin.readline):
            req = json.loads(line)
            res = await session.call_tool(req["tool"], req.get("args") or {})
            answer({"error": bool(res.is_error),
                    "text": "\n".join(c.text for c in res.content if c.type == "text"),
                    "images": [[c.mime_type, c.data] for c in res.content if c.type == "image"]})


anyio.run(main)
