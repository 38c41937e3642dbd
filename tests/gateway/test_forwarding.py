"""Forwarding to a real provider, played by a local HTTP server on 127.0.0.1 (no network here):
the key is added on the host, the trial's model replaces the client's, streams pass through,
usage and cost are counted, provider errors reach the client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lastexam.gateway.models import Budget
from lastexam.gateway.server import Gateway

from .conftest import KEY, USAGE, Client


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_forwarding(gateway: Gateway, client: Client, provider, tmp_path: Path,
                              stream: bool) -> None:
    log = tmp_path / "log.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    body = {"model": "claude-3-haiku", "max_tokens": 10, "stream": stream,
            "messages": [{"role": "user", "content": "hi"}]}
    status, out, _ = client.post("/v1/messages?beta=true", body,
                                 {"x-api-key": session.token,
                                  "anthropic-beta": "interleaved-thinking-2025-05-14"})
    assert status == 200
    if stream:
        assert out[0]["type"] == "message_start" and out[-1]["type"] == "message_stop"
    else:
        assert out["content"][0]["text"] == "hello from upstream"
    sent = provider.seen[-1]
    assert sent["path"] == "/v1/messages"
    assert sent["headers"]["x-api-key"] == KEY
    assert session.token not in json.dumps(sent)
    assert sent["headers"]["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert sent["body"]["model"] == "claude-sonnet-4-5"  # the trial's model, not the client's
    summary = gateway.close_session(session.token)
    assert summary.usage == USAGE
    # 1000 x $3 + 200 x $15 + 3000 x $0.30 + 500 x $3.75, per million tokens
    assert summary.cost_usd == pytest.approx((3000 + 3000 + 900 + 1875) / 1e6)
    assert KEY not in log.read_text()


def test_chat_stream_gets_usage_requested(gateway: Gateway, client: Client, provider,
                                          tmp_path: Path) -> None:
    session = gateway.open_session("t", "openai:gpt-5", Budget(), tmp_path / "log.jsonl")
    body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    status, _, _ = client.post("/v1/chat/completions", body,
                                 {"authorization": f"Bearer {session.token}"})
    assert status == 200
    sent = provider.seen[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert sent["body"]["stream_options"] == {"include_usage": True}
    summary = gateway.close_session(session.token)
    assert summary.usage.output_tokens == 200 and summary.cost_usd is not None


def test_gemini_model_goes_in_the_path(gateway: Gateway, client: Client, provider,
                                       tmp_path: Path) -> None:
    session = gateway.open_session("t", "google:gemini-2.5-flash", Budget(), tmp_path / "l.jsonl")
    status, out, _ = client.post("/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
                                 {"contents": []}, {"x-goog-api-key": session.token})
    assert status == 200 and out[0]["candidates"][0]["content"]["parts"][0]["text"]
    sent = provider.seen[-1]
    assert sent["path"] == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert sent["headers"]["x-goog-api-key"] == KEY
    assert gateway.close_session(session.token).usage.cache_read_tokens == 3000


def test_unknown_price_is_null_not_zero(gateway: Gateway, client: Client, provider,
                                        tmp_path: Path) -> None:
    session = gateway.open_session("t", "openai:some-unpriced-model", Budget(), tmp_path / "l.jsonl")
    client.post("/v1/chat/completions", {"messages": []}, {"authorization": f"Bearer {session.token}"})
    summary = gateway.close_session(session.token)
    assert summary.usage.total_tokens > 0
    assert summary.cost_usd is None


def test_provider_errors_reach_the_client(gateway: Gateway, client: Client, provider,
                                          tmp_path: Path) -> None:
    provider.fail_with = 529
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), tmp_path / "l.jsonl")
    status, out, _ = client.post("/v1/messages", {"messages": []}, {"x-api-key": session.token})
    assert status == 529 and out["error"]["type"] == "overloaded_error"
    summary = gateway.close_session(session.token)
    assert summary.failed_calls == 1 and summary.usage.total_tokens == 0


def test_unreachable_provider_is_502(gateway: Gateway, client: Client, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LASTEXAM_ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), tmp_path / "l.jsonl")
    status, out, _ = client.post("/v1/messages", {"messages": []}, {"x-api-key": session.token})
    assert status == 502 and "cannot reach anthropic" in out["error"]["message"]
    assert KEY not in json.dumps(out)
    gateway.close_session(session.token)
