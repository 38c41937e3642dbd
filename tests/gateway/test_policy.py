"""Attack 5 of issue 9, reaching the internet through the provider: server-side tools, remote
MCP servers, service tiers and capability betas never reach the fake provider (the agent gets
a 400 saying why), other fields and headers outside the wire's allowlist are dropped, and a
session can allow a capability explicitly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lastexam.gateway.models import Budget
from lastexam.gateway.server import Gateway

from .conftest import Client

FN = {"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}}}
MSGS = [{"role": "user", "content": "find the paper's published answer"}]
GEMINI = "/v1beta/models/gemini-x:generateContent"

# (wire path, extra body fields, what the refusal names): fields that ask the provider to act,
# and requests whose only tools run on the provider's side.
FORBIDDEN = {
    "anthropic-web-search": ("/v1/messages", {"tools": [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]}, "web_search"),
    "anthropic-web-fetch": ("/v1/messages", {"tools": [
        {"type": "web_fetch_20250910", "name": "web_fetch"}]}, "web_fetch"),
    "anthropic-code-execution": ("/v1/messages", {"tools": [
        {"type": "code_execution_20250825", "name": "code_execution"}]}, "code_execution"),
    "anthropic-computer-use": ("/v1/messages", {"tools": [
        {"type": "computer_20250124", "name": "computer", "display_width_px": 1024,
         "display_height_px": 768}]}, "computer_20250124"),
    "anthropic-mcp-servers": ("/v1/messages", {"mcp_servers": [
        {"type": "url", "url": "https://mcp.example.com/sse", "name": "x"}]}, "mcp_servers"),
    "anthropic-mcp-toolset": ("/v1/messages", {"tools": [
        {"type": "mcp_toolset", "mcp_server_name": "x"}]}, "mcp_toolset"),
    "anthropic-container": ("/v1/messages", {"container": "container_abc"}, "container"),
    "anthropic-service-tier": ("/v1/messages", {"service_tier": "priority"}, "service_tier"),
    "anthropic-count-tokens": ("/v1/messages/count_tokens", {"tools": [
        {"type": "web_search_20250305", "name": "web_search"}]}, "web_search"),
    "chat-web-search-options": ("/v1/chat/completions", {"web_search_options": {}},
                                "web_search_options"),
    "chat-openrouter-web-plugin": ("/v1/chat/completions", {"plugins": [{"id": "web"}]},
                                   "plugins"),
    "chat-service-tier": ("/v1/chat/completions", {"service_tier": "flex"}, "service_tier"),
    "chat-builtin-tool": ("/v1/chat/completions", {"tools": [{"type": "web_search"}]},
                          "web_search"),
    "responses-web-search": ("/v1/responses", {"tools": [{"type": "web_search"}]},
                             "web_search"),
    "responses-namespace": ("/v1/responses", {"tools": [
        {"type": "namespace", "name": "n", "tools": [{"type": "web_search"}]}]}, "web_search"),
    "responses-web-search-preview": ("/v1/responses", {"tools": [
        {"type": "web_search_preview"}]}, "web_search_preview"),
    "responses-file-search": ("/v1/responses", {"tools": [
        {"type": "file_search", "vector_store_ids": ["vs_1"]}]}, "file_search"),
    "responses-code-interpreter": ("/v1/responses", {"tools": [
        {"type": "code_interpreter", "container": {"type": "auto"}}]}, "code_interpreter"),
    "responses-remote-mcp": ("/v1/responses", {"tools": [
        {"type": "mcp", "server_label": "x", "server_url": "https://mcp.example.com"}]}, "mcp"),
    "responses-computer-use": ("/v1/responses", {"tools": [
        {"type": "computer_use_preview"}]}, "computer_use_preview"),
    "responses-string-tool": ("/v1/responses", {"tools": ["web_search"]}, "str entry"),
    "responses-list-type": ("/v1/responses", {"tools": [{"type": ["web_search"]}]},
                            "web_search"),
    "responses-service-tier": ("/v1/responses", {"service_tier": "priority"}, "service_tier"),
    "gemini-google-search": (GEMINI, {"tools": [{"googleSearch": {}}]}, "googleSearch"),
    "gemini-snake-case": (GEMINI, {"tools": [{"google_search": {}}]}, "google_search"),
    "gemini-url-context": (GEMINI, {"tools": [{"urlContext": {}}]}, "urlContext"),
    "gemini-code-execution": (GEMINI, {"tools": [{"codeExecution": {}}]}, "codeExecution"),
    "gemini-nested-request": ("/v1beta/models/gemini-x:countTokens", {"generateContentRequest": {
        "contents": [], "tools": [{"urlContext": {}}]}}, "urlContext"),
}

MODELS = {"/v1/messages": "anthropic:claude-sonnet-4-5", "/v1/chat": "openai:gpt-5",
          "/v1/responses": "openai:gpt-5", "/v1beta": "google:gemini-2.5-flash"}


def model_for(path: str) -> str:
    return next(m for prefix, m in MODELS.items() if path.startswith(prefix))


def base_body(path: str) -> dict:
    if path.startswith("/v1beta"):
        return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    if path.startswith("/v1/responses"):
        return {"model": "m", "input": "hi"}
    return {"model": "m", "max_tokens": 100, "messages": MSGS}


def auth(path: str, token: str) -> dict[str, str]:
    if path.startswith("/v1beta"):
        return {"x-goog-api-key": token}
    if path.startswith("/v1/messages"):
        return {"x-api-key": token}
    return {"authorization": f"Bearer {token}"}


@pytest.mark.parametrize("case", list(FORBIDDEN))
def test_provider_side_capabilities_never_reach_the_provider(
        gateway: Gateway, client: Client, provider, tmp_path: Path, case: str) -> None:
    path, extra, named = FORBIDDEN[case]
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", model_for(path), Budget(), log)
    status, out, _ = client.post(path, {**base_body(path), **extra}, auth(path, session.token))
    message = json.dumps(out)
    assert status == 400, message
    assert "not allowed in this trial" in message
    if named:
        assert named in message
    assert provider.seen == []
    summary = gateway.close_session(session.token)
    assert summary.refused_calls == 1 and summary.model_calls == 0
    assert "request refused" in json.loads(log.read_text())["error"]


def test_fields_and_headers_outside_the_allowlist_are_dropped(
        gateway: Gateway, client: Client, provider, tmp_path: Path) -> None:
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    body = {**base_body("/v1/messages"), "tools": [FN], "smuggled": {"url": "https://x"},
            "service_tier": "auto", "context_management": {"edits": []}}
    headers = {
        "x-api-key": session.token,
        # The same header twice, in two cases: every value is filtered.
        "Anthropic-Beta": "web-fetch-2025-09-10, interleaved-thinking-2025-05-14",
        "anthropic-beta": "mcp-client-2025-04-04",
        "ANTHROPIC-VERSION": "2023-06-01",
        "openai-organization": "org-other", "x-forwarded-for": "1.2.3.4",
    }
    status, _, _ = client.post("/v1/messages", body, headers)
    assert status == 200
    sent = provider.seen[-1]
    sent_headers = {k.lower(): v for k, v in sent["headers"].items()}
    assert sent_headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert sent_headers["anthropic-version"] == "2023-06-01"
    assert "openai-organization" not in sent_headers and "x-forwarded-for" not in sent_headers
    assert set(sent["body"]) == {"model", "max_tokens", "messages", "tools"}
    record = json.loads(log.read_text())
    assert set(record["dropped"]) == {
        "body:smuggled", "body:service_tier", "body:context_management",
        "header:anthropic-beta=web-fetch-2025-09-10",
        "header:anthropic-beta=mcp-client-2025-04-04"}
    gateway.close_session(session.token)


RESPONSES_FN = {"type": "function", "name": "exec_command", "parameters": {}}
# (path, tools sent, tools the provider must get, what the record lists as dropped)
BESIDE = {
    "anthropic": ("/v1/messages", [FN, {"type": "web_search_20250305", "name": "web_search"},
                                   {"type": "mcp_toolset", "mcp_server_name": "x"}],
                  [FN], ["tool:web_search_20250305", "tool:mcp_toolset"]),
    "chat": ("/v1/chat/completions",
             [{"type": "function", "function": {"name": "bash"}}, {"type": "web_search"}],
             [{"type": "function", "function": {"name": "bash"}}], ["tool:web_search"]),
    # What Codex sends in every request: web_search beside its functions, and a namespace.
    "responses-codex": ("/v1/responses", [
        RESPONSES_FN,
        {"type": "namespace", "name": "multi_agent_v1",
         "tools": [RESPONSES_FN, {"type": "code_interpreter"}]},
        {"type": "web_search", "external_web_access": True}],
        [RESPONSES_FN, {"type": "namespace", "name": "multi_agent_v1", "tools": [RESPONSES_FN]}],
        ["tool:code_interpreter", "tool:web_search"]),
    # One Gemini entry that declares functions and also asks for search, then url fetching.
    "gemini": (GEMINI, [{"functionDeclarations": [{"name": "bash"}], "googleSearch": {}},
                        {"urlContext": {}}],
               [{"functionDeclarations": [{"name": "bash"}]}], ["tool:googleSearch", "tool:urlContext"]),
}


@pytest.mark.parametrize("case", list(BESIDE))
def test_provider_side_tools_beside_client_tools_are_removed(
        gateway: Gateway, client: Client, provider, tmp_path: Path, case: str) -> None:
    path, tools, forwarded, dropped = BESIDE[case]
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", model_for(path), Budget(), log)
    status, _, _ = client.post(path, {**base_body(path), "tools": tools}, auth(path, session.token))
    assert status == 200
    assert provider.seen[-1]["body"]["tools"] == forwarded
    assert json.loads(log.read_text())["dropped"] == dropped
    gateway.close_session(session.token)


@pytest.mark.parametrize("wire", ["chat", "responses", "gemini"])
def test_other_wires_forward_only_their_allowlist(
        gateway: Gateway, client: Client, provider, tmp_path: Path, wire: str) -> None:
    path = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "gemini": GEMINI}[wire]
    session = gateway.open_session("t", model_for(path), Budget(), tmp_path / "l.jsonl")
    body = {**base_body(path), "smuggled": 1, "cachedContent": "cachedContents/other-trial",
            "models": ["other/model"]}
    headers = {**auth(path, session.token), "OpenAI-Beta": "assistants=v2",
               "openai-project": "proj_other", "anthropic-beta": "x"}
    status, _, _ = client.post(path, body, headers)
    assert status == 200
    sent = provider.seen[-1]
    assert {"smuggled", "cachedContent", "models"}.isdisjoint(sent["body"])
    lowered = {k.lower() for k in sent["headers"]}
    assert {"openai-beta", "openai-project", "anthropic-beta"}.isdisjoint(lowered)
    gateway.close_session(session.token)


def test_a_session_can_allow_a_capability(gateway: Gateway, client: Client, provider,
                                          tmp_path: Path) -> None:
    from lastexam.gateway.models import Allowances

    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(),
                                   tmp_path / "l.jsonl", allow=Allowances(server_tools=True))
    tool = {"type": "web_search_20250305", "name": "web_search"}
    body = {**base_body("/v1/messages"), "tools": [tool]}
    assert client.post("/v1/messages", body, {"x-api-key": session.token})[0] == 200
    assert provider.seen[-1]["body"]["tools"] == [tool]
    # Allowing server tools does not allow remote MCP servers.
    body = {**base_body("/v1/messages"), "mcp_servers": [{"type": "url", "url": "https://x"}]}
    status, out, _ = client.post("/v1/messages", body, {"x-api-key": session.token})
    assert status == 400 and "'mcp'" in out["error"]["message"]
    assert len(provider.seen) == 1
    gateway.close_session(session.token)
