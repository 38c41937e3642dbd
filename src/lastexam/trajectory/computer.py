"""Computer use in trajectories: the computer server's tools under each client's naming, and
tool results whose images are replaced by the path of the saved screenshot.

A screenshot's result says `saved screens/NNNN.png` (docs/agents.md, "Computer use"). The
agent's processes can write anything there, so only a plain four-digit name under screens/ is
taken as a reference, and build.check_images drops references to files the trial folder does
not hold. Images themselves are never kept in a trajectory: inlined, they would make it huge.
"""

from __future__ import annotations

import re
from typing import Any

from lastexam.gateway.wire.base import COMPUTER_PREFIXES, COMPUTER_SERVER
from lastexam.trajectory.schema import ContentPart, ImageSource

# Codex names the server and the tool apart; lastexam-agent's native tools are already
# named by their action.
_NAMED = re.compile("^(?:" + "|".join(map(re.escape, COMPUTER_PREFIXES)) + ")([A-Za-z0-9_]{1,64})$")
SAVED = re.compile(r"^saved (screens/[0-9]{4}\.png)$", re.MULTILINE)


def action_name(name: str) -> str:
    """A tool's name in the trajectory: the action for a computer tool, else the name."""
    m = _NAMED.match(name)
    return m.group(1) if m else name


def mcp_name(server: str, tool: str) -> str:
    """How a trajectory names a tool that a client reports as (server, tool)."""
    return tool if server == COMPUTER_SERVER else f"mcp__{server}__{tool}"


def result_content(content: Any, screenshot: bool
                   ) -> tuple[str | list[ContentPart], dict[str, Any] | None]:
    """A tool result (text, or a list of MCP or Anthropic content blocks) as an observation's
    content: its text, and for the result of a `screenshot` call an image part for the
    screenshot it says it saved. Returns the content and what to note about images left out
    (None: nothing)."""
    dropped = 0
    if isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "image":
                dropped += 1
        text = "\n".join(texts)
    elif isinstance(content, str):
        text = content
    else:
        text = "" if content is None else str(content)
    saved = SAVED.findall(text) if screenshot else []
    extra = None
    if dropped > len(saved[:1]):
        extra = {"images_dropped": dropped - len(saved[:1]),
                 "note": "images of tool results are not kept in the trajectory"}
    if not saved:
        return text, extra
    image = ContentPart(type="image", source=ImageSource(media_type="image/png", path=saved[0]))
    return [ContentPart(type="text", text=text), image], extra
