"""Red-team review, a neighbour of attack 4 of issue 9: the OpenAI wires report usage only at
the end of a stream. A client that hangs up after the first delta was charged its input as
estimated from the body's size (2 bytes a token), however many tokens the provider counted:
compressed media (a large one-colour PNG, a PDF of blank pages) is billed far above that, so
cutting the stream spent without being charged. The gateway now reads the rest of the answer
(without sending it) to learn the provider's count, until it ends or the trial does."""

from __future__ import annotations

from pathlib import Path

from lastexam.gateway.models import Budget
from lastexam.gateway.server import Gateway

from .conftest import USAGE, raw_request, read_until, wait_for
from .test_charging import MAX_TOKENS, chat, drop, logged


def test_a_cut_stream_is_charged_the_input_the_provider_counted(
        gateway: Gateway, provider, tmp_path: Path) -> None:
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", "openai:gpt-5", Budget(), log)
    provider.hold_after = 2  # the role chunk, then the first content delta
    provider.gap_s = 0.2  # each later event comes apart: the usage after the client is gone
    path, body, headers = chat(session.token)
    assert -(-len(body) // 2) < USAGE.prompt_tokens  # the body's estimate is below the count
    sock = raw_request(gateway.socket_path, path, body, headers)
    read_until(sock, b"hello from upstream")
    drop(sock, "close")
    provider.release.set()  # the rest, usage included, comes after the client is gone
    call = wait_for(lambda: logged(log), "the cut call in the log")[0]
    assert call["estimated"] is True and "cut" in call["error"]
    # Chat reports prompt tokens, cached ones among them (no cache writes).
    assert call["usage"]["input_tokens"] == USAGE.prompt_tokens - USAGE.cache_read_tokens
    assert call["usage"]["cache_read_tokens"] == USAGE.cache_read_tokens
    assert call["usage"]["output_tokens"] == MAX_TOKENS
    gateway.close_session(session.token)
