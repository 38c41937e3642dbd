"""A neighbour of attack 5 of issue 9 (red-team review): reaching the internet, or the
operator's provider account, through the *content* of a request rather than its tools. A
content part that names a URL makes the provider fetch it (Anthropic document and image
sources, OpenAI image and file URLs, Gemini file URIs): enough to read a published paper or
answer. A file id or a stored response id reads what the operator's account holds (other
trials' conversations, uploaded files), and a stored response's tokens are billed without
being in the body the gateway bounds. None of these may reach the fake provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lastexam.gateway.models import Allowances, Budget
from lastexam.gateway.server import Gateway

from .conftest import Client
from .test_policy import GEMINI, auth, base_body, model_for

PAPER = "https://arxiv.org/pdf/2501.00001"
PNG = "data:image/png;base64,iVBORw0KGgo="


def _user(*parts: dict) -> dict:
    return {"messages": [{"role": "user", "content": [*parts, {"type": "text", "text": "answer"}]}]}


# (wire path, body fields replacing the base body's): each asks the provider to fetch or read
# something the request does not carry.
REMOTE = {
    "anthropic-document-url": ("/v1/messages", _user(
        {"type": "document", "source": {"type": "url", "url": PAPER}})),
    "anthropic-image-url": ("/v1/messages", _user(
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}})),
    "anthropic-file-id": ("/v1/messages", _user(
        {"type": "document", "source": {"type": "file", "file_id": "file_011other"}})),
    "anthropic-url-in-tool-result": ("/v1/messages", {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "document", "source": {"type": "url", "url": PAPER}}]}]}]}),
    "anthropic-system-url": ("/v1/messages", {"system": [
        {"type": "document", "source": {"type": "url", "url": PAPER}}]}),
    "chat-image-url": ("/v1/chat/completions", _user(
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}})),
    "chat-file-id": ("/v1/chat/completions", _user(
        {"type": "file", "file": {"file_id": "file-other"}})),
    "responses-file-url": ("/v1/responses", {"input": [{"role": "user", "content": [
        {"type": "input_file", "file_url": PAPER}]}]}),
    "responses-image-url": ("/v1/responses", {"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": "https://example.com/a.png"}]}]}),
    "responses-file-id": ("/v1/responses", {"input": [{"role": "user", "content": [
        {"type": "input_file", "file_id": "file-other"}]}]}),
    "responses-previous-response": ("/v1/responses", {"previous_response_id": "resp_other"}),
    "responses-item-reference": ("/v1/responses", {"input": [
        {"type": "item_reference", "id": "msg_of_another_trial"},
        {"role": "user", "content": "go on"}]}),
    "gemini-file-uri": (GEMINI, {"contents": [{"role": "user", "parts": [
        {"fileData": {"mimeType": "application/pdf", "fileUri": PAPER}}, {"text": "answer"}]}]}),
    "gemini-file-uri-snake": (GEMINI, {"contents": [{"role": "user", "parts": [
        {"file_data": {"mime_type": "application/pdf", "file_uri": PAPER}}]}]}),
}


@pytest.mark.parametrize("case", list(REMOTE))
def test_content_the_provider_would_fetch_never_reaches_it(
        gateway: Gateway, client: Client, provider, tmp_path: Path, case: str) -> None:
    path, fields = REMOTE[case]
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", model_for(path), Budget(), log)
    status, out, _ = client.post(path, {**base_body(path), **fields}, auth(path, session.token))
    message = json.dumps(out)
    assert status == 400, message
    assert "not allowed in this trial" in message and "remote_content" in message
    assert provider.seen == []
    summary = gateway.close_session(session.token)
    assert summary.refused_calls == 1 and summary.model_calls == 0


# Content the request carries itself, and a client tool whose arguments name a URL: forwarded.
CARRIED = {
    "anthropic-inline-image": ("/v1/messages", _user(
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBORw0KGgo="}})),
    "anthropic-client-fetch-tool": ("/v1/messages", {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "WebFetch",
                                           "input": {"url": PAPER, "prompt": "read"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "no network in the sandbox"}]}]}),
    "chat-data-image": ("/v1/chat/completions", _user(
        {"type": "image_url", "image_url": {"url": PNG}})),
    "responses-data-image": ("/v1/responses", {"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": PNG}]}], "previous_response_id": None}),
    "gemini-inline": (GEMINI, {"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}]}),
}


@pytest.mark.parametrize("case", list(CARRIED))
def test_content_the_request_carries_is_forwarded(
        gateway: Gateway, client: Client, provider, tmp_path: Path, case: str) -> None:
    path, fields = CARRIED[case]
    session = gateway.open_session("t", model_for(path), Budget(), tmp_path / "l.jsonl")
    status, out, _ = client.post(path, {**base_body(path), **fields}, auth(path, session.token))
    assert status == 200, json.dumps(out)
    assert len(provider.seen) == 1
    gateway.close_session(session.token)


def test_a_session_can_allow_remote_content(gateway: Gateway, client: Client, provider,
                                            tmp_path: Path) -> None:
    path, fields = REMOTE["anthropic-document-url"]
    session = gateway.open_session("t", model_for(path), Budget(), tmp_path / "l.jsonl",
                                   allow=Allowances(remote_content=True))
    status, _, _ = client.post(path, {**base_body(path), **fields}, auth(path, session.token))
    assert status == 200
    assert provider.seen[-1]["body"]["messages"] == fields["messages"]
    gateway.close_session(session.token)


@pytest.mark.parametrize("method", ["batchGenerateContent", "embedContent", "generateAnswer",
                                    "predictLongRunning"])
def test_gemini_methods_that_are_not_counted_are_not_forwarded(
        gateway: Gateway, client: Client, provider, tmp_path: Path, method: str) -> None:
    """Only generateContent, streamGenerateContent (charged) and countTokens (free) reach the
    provider: any other method would be forwarded as an uncounted call, with the key."""
    path = GEMINI.replace(":generateContent", f":{method}")
    session = gateway.open_session("t", model_for(path), Budget(), tmp_path / "l.jsonl")
    status, _, _ = client.post(path, base_body(path), auth(path, session.token))
    assert status == 404
    assert provider.seen == []
    gateway.close_session(session.token)


def test_the_alt_parameter_cannot_add_query_parameters(
        gateway: Gateway, client: Client, provider, tmp_path: Path) -> None:
    """Gemini's `alt` is the one query parameter forwarded: its value, decoded by the gateway,
    must not turn into further parameters of the provider's URL (a `key`, say)."""
    from urllib.parse import parse_qs, urlsplit

    path = GEMINI.replace(":generateContent", ":streamGenerateContent")
    session = gateway.open_session("t", model_for(path), Budget(), tmp_path / "l.jsonl")
    status, _, _ = client.post(f"{path}?alt=sse%26key%3Dother%26%24fields%3Dx",
                               base_body(path), auth(path, session.token))
    assert status == 200
    query = parse_qs(urlsplit(provider.seen[-1]["path"]).query)
    assert query == {"alt": ["sse&key=other&$fields=x"]}
    gateway.close_session(session.token)
