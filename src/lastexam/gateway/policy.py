"""What the gateway forwards to a provider, per wire format: the one table.

A request reaches the provider with only the body fields and headers its wire needs to be
answered by the trial's model (the allowlist below). Whatever would make the provider act on
the agent's behalf beyond answering - run tools on its side (web search and fetch, code
execution, computer use, file search), connect to remote MCP servers, bill a paid service
tier, or switch on a beta capability - is kept from it unless the session's Allowances allow
it: a body field asking for it is refused with a 400 the agent sees, and so is a request whose
only tools run on the provider's side (a client's search sub-request); such tools declared
beside the client's own (Codex declares web_search in every request) are removed from the
list. Those, and fields and header values outside the allowlist, are dropped and listed on
the call's record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lastexam.gateway.models import MAX_DROPPED, MAX_NAME, Allowances
from lastexam.gateway.wire import Wire, WireRequest


class Refused(Exception):
    """The request asks for a capability the session does not allow."""


@dataclass(frozen=True)
class WirePolicy:
    body: frozenset[str]  # body fields forwarded
    refused: dict[str, str]  # body field -> the allowance that lets it through
    client_tools: frozenset[Any]  # `type` values of tool entries the client runs itself
    headers: frozenset[str]  # client headers forwarded (their values filtered by BETAS)
    nested: frozenset[str] = field(default_factory=frozenset)  # fields holding a whole request
    # True when a tool entry names its tools by its keys (Gemini), not by its `type`
    kinds_are_keys: bool = False


_ANTHROPIC_BODY = (
    "model messages system max_tokens stream stop_sequences temperature top_p top_k tools "
    "tool_choice thinking metadata"
)
_CHAT_BODY = (
    "model messages stream stream_options max_tokens max_completion_tokens temperature top_p "
    "top_k min_p stop tools tool_choice parallel_tool_calls response_format seed "
    "presence_penalty frequency_penalty logit_bias logprobs top_logprobs reasoning_effort "
    "reasoning user"
)
_RESPONSES_BODY = (
    "model input instructions stream tools tool_choice parallel_tool_calls reasoning text "
    "include store prompt_cache_key max_output_tokens temperature top_p truncation user "
    "previous_response_id safety_identifier"
)
_GEMINI_BODY = (
    "contents systemInstruction system_instruction generationConfig generation_config "
    "toolConfig tool_config safetySettings safety_settings tools generateContentRequest "
    "generate_content_request"
)

POLICIES: dict[str, WirePolicy] = {
    "anthropic": WirePolicy(
        body=frozenset(_ANTHROPIC_BODY.split()),
        refused={"mcp_servers": "mcp", "container": "server_tools",
                 "service_tier": "service_tier"},
        client_tools=frozenset({None, "custom"}),
        headers=frozenset({"anthropic-version", "anthropic-beta"}),
    ),
    "chat": WirePolicy(
        body=frozenset(_CHAT_BODY.split()),
        refused={"web_search_options": "server_tools", "plugins": "server_tools",
                 "service_tier": "service_tier"},
        client_tools=frozenset({"function", "custom"}),
        headers=frozenset(),
    ),
    "responses": WirePolicy(
        body=frozenset(_RESPONSES_BODY.split()),
        refused={"service_tier": "service_tier", "previous_response_id": "remote_content"},
        client_tools=frozenset({"function", "custom", "local_shell"}),
        headers=frozenset({"openai-beta"}),
    ),
    "gemini": WirePolicy(
        body=frozenset(_GEMINI_BODY.split()),
        refused={},
        client_tools=frozenset({"functionDeclarations", "function_declarations"}),
        headers=frozenset(),
        nested=frozenset({"generateContentRequest", "generate_content_request"}),
        kinds_are_keys=True,
    ),
}

# Keys of content parts whose string value (other than a data: URL) names something the
# provider fetches or holds: OpenAI image and file URLs, file ids of every wire.
REMOTE_KEYS = ("image_url", "file_url", "file_id", "fileUri", "file_uri")

# Tool entries that group other tools (Codex declares its sub-agent tools in one).
CONTAINER_TOOLS = frozenset({"namespace"})

# Values of refused fields that ask for the provider's default: dropped, not refused.
DEFAULT_VALUES: dict[str, tuple[str, ...]] = {"service_tier": ("auto", "default", "standard_only")}

# Beta header values that change how an answer is shaped, never what the provider may do.
HARMLESS_BETAS = (
    "claude-code-", "interleaved-thinking-", "fine-grained-tool-streaming-",
    "prompt-caching-", "token-efficient-tools-", "output-128k-", "extended-cache-ttl-",
    "responses=experimental",
)


def _need(kind: str) -> str:
    """The allowance a provider-side tool needs."""
    return "mcp" if "mcp" in kind.lower() else "server_tools"


def _filter_tools(wire: str, tools: list[Any], allow: Allowances,
                  removed: list[str]) -> tuple[list[Any], int]:
    """The tools list without the provider-side tools the session does not allow (looking
    inside namespaces and inside each Gemini entry), and how many client tools it keeps."""
    policy = POLICIES[wire]
    kept: list[Any] = []
    n_client = 0
    for tool in tools:
        if not isinstance(tool, dict):
            removed.append(f"{type(tool).__name__} entry")  # no wire declares tools so
            continue
        if policy.kinds_are_keys:
            entry = {}
            for key, value in tool.items():
                if key in policy.client_tools:
                    entry[key] = value
                    n_client += 1
                elif getattr(allow, _need(key)):
                    entry[key] = value
                else:
                    removed.append(key)
            if entry:
                kept.append(entry)
            continue
        kind = tool.get("type")
        if kind is not None and not isinstance(kind, str):  # a list or object: no tool's type
            kind = str(kind)
        if kind in CONTAINER_TOOLS and isinstance(tool.get("tools"), list):
            inner, n = _filter_tools(wire, tool["tools"], allow, removed)
            n_client += n
            if inner:
                kept.append({**tool, "tools": inner})
        elif kind in policy.client_tools:
            kept.append(tool)
            n_client += 1
        elif getattr(allow, _need(str(kind))):
            kept.append(tool)
        else:
            removed.append(str(kind))
    return kept, n_client


def _filter_body(wire: str, body: dict[str, Any], allow: Allowances,
                 dropped: list[str], where: str = "") -> dict[str, Any]:
    policy = POLICIES[wire]
    out: dict[str, Any] = {}
    for key, value in body.items():
        need = policy.refused.get(key)
        if need is not None and value is not None and value not in DEFAULT_VALUES.get(key, ()):
            # (an empty {} is refused too: it switches web_search_options on)
            if not getattr(allow, need):
                raise Refused(f"the body field {where}{key!r} is not allowed in this trial "
                              f"(it needs the {need!r} allowance)")
            out[key] = value
        elif key in policy.nested and isinstance(value, dict):
            out[key] = _filter_body(wire, value, allow, dropped, f"{where}{key}.")
        elif key in policy.body:
            out[key] = value
        else:
            dropped.append(f"body:{where}{key}")
    tools = out.get("tools")
    if isinstance(tools, list):
        removed: list[str] = []
        out["tools"], n_client = _filter_tools(wire, tools, allow, removed)
        if removed and not n_client:
            # A request for the provider-side tool alone (a client's search sub-request).
            raise Refused(f"the tool {removed[0][:MAX_NAME]!r} is not one the client runs: tools the "
                          "provider runs (search, fetch, code execution, MCP) are not allowed "
                          f"in this trial (they need the {_need(removed[0])!r} allowance)")
        dropped.extend(f"tool:{where}{kind}" for kind in removed)
    elif tools is not None:
        raise Refused("the body field 'tools' must be a list")
    return out


def _remote_content(body: dict[str, Any]) -> str | None:
    """A content part (anywhere in the messages, at any depth, tools aside) that the provider
    would fetch from a URL or read from the operator's account, described; None if there is
    none. Inline data (base64, data: URLs) is carried by the request and allowed."""
    stack: list[Any] = [v for k, v in body.items() if k not in ("tools", "tool_choice")]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "url" and isinstance(node.get("url"), str):
            return f"a source fetched from {node['url'][:100]!r}"
        if node.get("type") == "item_reference":  # a stored item of the operator's account
            return f"a stored item {str(node.get('id'))[:100]!r}"
        for key in REMOTE_KEYS:
            value = node.get(key)
            if isinstance(value, dict) and key == "image_url":
                value = value.get("url")
            if isinstance(value, str) and value and not value.startswith("data:"):
                return f"{key} {value[:100]!r}"
        for key in ("fileData", "file_data"):
            if key in node:
                return f"a {key} part"
        stack.extend(node.values())
    return None


def _filter_headers(wire: str, headers: dict[str, str], allow: Allowances,
                    dropped: list[str]) -> dict[str, str]:
    """Headers are lower-cased and repeated ones joined with commas by the server."""
    out: dict[str, str] = {}
    for name in POLICIES[wire].headers:
        if name not in headers:
            continue
        if not name.endswith("-beta"):
            out[name] = headers[name]
            continue
        kept = []
        for value in (v.strip() for v in headers[name].split(",")):
            if not value:
                continue
            if allow.beta or value.lower().startswith(HARMLESS_BETAS):
                kept.append(value)
            else:
                dropped.append(f"header:{name}={value}")
        if kept:
            out[name] = ",".join(kept)
    return out


def forward_policy(
    wire: Wire, req: WireRequest, headers: dict[str, str], allow: Allowances
) -> tuple[WireRequest, dict[str, str], list[str]]:
    """The request and headers to forward, and what was dropped; raises Refused."""
    dropped: list[str] = []
    body = _filter_body(wire.name, req.body, allow, dropped)
    if not allow.remote_content and (remote := _remote_content(body)):
        raise Refused(f"{remote}: content the provider fetches or holds is not allowed in this "
                      "trial (it needs the 'remote_content' allowance)")
    kept = _filter_headers(wire.name, headers, allow, dropped)
    more = [f"... and {len(dropped) - MAX_DROPPED} more"] if len(dropped) > MAX_DROPPED else []
    listed = [d[:MAX_NAME] for d in dropped[:MAX_DROPPED]] + more
    return WireRequest(req.path, req.query, body, req.size), kept, listed
