"""Attack 4 of issue 9, spending without being charged, against the fake provider: a stream
cut by the client or the provider is charged an estimate, streams still open when the trial
ends are in the ledger, and a call's upper bound is reserved against the budget before it is
forwarded."""

from __future__ import annotations

import json
import socket
import struct
import threading
from pathlib import Path

import pytest

from lastexam.gateway.models import Budget
from lastexam.gateway.server import Gateway

from .conftest import USAGE, Client, raw_request, read_until, wait_for

MAX_TOKENS = 4096
MODEL = "anthropic:claude-sonnet-4-5"


def anthropic(token: str, max_tokens: int = MAX_TOKENS, stream: bool = True):
    body = {"model": "m", "max_tokens": max_tokens, "stream": stream,
            "messages": [{"role": "user", "content": "hi"}]}
    return "/v1/messages", json.dumps(body).encode(), {"x-api-key": token}


def chat(token: str):
    body = {"model": "m", "max_tokens": MAX_TOKENS, "stream": True,
            "messages": [{"role": "user", "content": "hi " * 100}]}
    return "/v1/chat/completions", json.dumps(body).encode(), {"authorization": f"Bearer {token}"}


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def drop(sock: socket.socket, how: str) -> None:
    if how == "reset":  # an abortive close: RST instead of FIN
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if how == "half-close":  # the client stops reading and says it is done sending
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@pytest.mark.parametrize("how", ["close", "reset", "half-close"])
def test_stream_cut_by_the_client_after_the_first_delta_is_charged(
        gateway: Gateway, provider, tmp_path: Path, how: str) -> None:
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", MODEL, Budget(), log)
    provider.hold_after = 3  # message_start, content_block_start, the first text delta
    sock = raw_request(gateway.socket_path, *anthropic(session.token))
    read_until(sock, b"text_delta")
    drop(sock, how)
    provider.release.set()  # the rest of the answer comes, and finds the client gone
    call = wait_for(lambda: logged(log), "the cut call in the log")[0]
    assert call["estimated"] is True and "cut" in call["error"]
    # The input the provider reported at message_start; the output at the request's limit.
    assert call["usage"]["input_tokens"] == USAGE.input_tokens
    assert call["usage"]["cache_read_tokens"] == USAGE.cache_read_tokens
    assert call["usage"]["output_tokens"] == MAX_TOKENS
    assert call["cost_usd"] is not None
    summary = gateway.close_session(session.token)
    assert summary.model_calls == 1 and summary.estimated_calls == 1
    assert summary.usage.output_tokens == MAX_TOKENS
    assert summary.cost_usd == pytest.approx(call["cost_usd"])


def test_chat_stream_cut_before_any_usage_is_charged_its_bound(
        gateway: Gateway, provider, tmp_path: Path) -> None:
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", "openai:gpt-5", Budget(), log)
    provider.hold_after = 2  # the role chunk, then the first content delta
    provider.drop_after = 3  # then the finish chunk, and the provider hangs up: no usage
    path, body, headers = chat(session.token)
    sock = raw_request(gateway.socket_path, path, body, headers)
    read_until(sock, b"hello from upstream")
    drop(sock, "close")
    provider.release.set()
    call = wait_for(lambda: logged(log), "the cut call in the log")[0]
    assert call["estimated"] is True and "cut" in call["error"]
    # No usage was seen: the input is estimated from the body's size (2 bytes a token).
    assert call["usage"]["input_tokens"] == -(-len(body) // 2)
    assert call["usage"]["output_tokens"] == MAX_TOKENS
    assert gateway.close_session(session.token).usage.total_tokens > MAX_TOKENS


def test_stream_cut_by_the_provider_is_charged(gateway: Gateway, provider,
                                               tmp_path: Path) -> None:
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", MODEL, Budget(), log)
    provider.drop_after = 3
    sock = raw_request(gateway.socket_path, *anthropic(session.token))
    sock.settimeout(30)
    got = b""
    while piece := sock.recv(65536):
        got += piece
    assert b"text_delta" in got
    summary = gateway.close_session(session.token)
    assert summary.estimated_calls == 1
    assert summary.usage.input_tokens == USAGE.input_tokens
    assert summary.usage.output_tokens == MAX_TOKENS
    assert "anthropic cut the stream" in logged(log)[0]["error"]


def test_streams_open_when_the_trial_ends_are_in_the_ledger(
        gateway: Gateway, provider, tmp_path: Path) -> None:
    log = tmp_path / "gateway.jsonl"
    session = gateway.open_session("t", MODEL, Budget(), log)
    provider.hold_after = 3
    socks = []
    for _ in range(3):
        sock = raw_request(gateway.socket_path, *anthropic(session.token))
        read_until(sock, b"text_delta")
        socks.append(sock)
    summary = gateway.close_session(session.token)  # the agent is still reading all three
    assert summary.model_calls == 3 and summary.estimated_calls == 3
    _, body, _ = anthropic("")
    bound = -(-len(body) // 2) + MAX_TOKENS
    assert summary.usage.total_tokens == 3 * bound
    calls = logged(log)
    assert len(calls) == 3 and all(c["estimated"] and "still open" in c["error"] for c in calls)
    provider.release.set()
    # The gateway cuts the streams of the closed session; their late end changes nothing.
    for sock in socks:
        sock.settimeout(30)
        while sock.recv(65536):
            pass
        sock.close()
    assert len(logged(log)) == 3 and session.summary.model_calls == 3


def test_budget_reserves_the_upper_bound_before_forwarding(
        gateway: Gateway, client: Client, provider, tmp_path: Path) -> None:
    session = gateway.open_session("t", MODEL, Budget(max_tokens=5000), tmp_path / "l.jsonl")
    path, body, headers = anthropic(session.token, max_tokens=8000, stream=False)
    status, out, _ = client.post(path, json.loads(body), headers)
    assert status == 400
    assert "could use up to" in out["error"]["message"]
    assert "--max-tokens 5000" in out["error"]["message"]
    assert provider.seen == []  # never forwarded
    # It could not fit even alone: the budget is spent as far as the agent's calls go, and
    # the trial ends as over its budget.
    summary = gateway.close_session(session.token)
    assert summary.refused_calls == 1 and summary.model_calls == 0
    assert summary.budget_exhausted and "--max-tokens 5000" in summary.budget_exhausted


def test_the_largest_output_limit_is_reserved(gateway: Gateway, client: Client, provider,
                                              tmp_path: Path) -> None:
    session = gateway.open_session("t", "openai:gpt-5", Budget(max_tokens=20_000),
                                   tmp_path / "l.jsonl")
    auth = {"authorization": f"Bearer {session.token}"}
    msgs = [{"role": "user", "content": "hi"}]
    two = {"model": "m", "messages": msgs, "max_completion_tokens": 10, "max_tokens": 30_000}
    status, out, _ = client.post("/v1/chat/completions", two, auth)
    assert status == 400 and "30000 of output at its limit" in out["error"]["message"]
    assert provider.seen == []
    gateway.close_session(session.token)
    # A limit written as a float is read (else the 32,768 default would be reserved).
    session = gateway.open_session("t2", "openai:gpt-5", Budget(max_tokens=20_000),
                                   tmp_path / "l2.jsonl")
    auth = {"authorization": f"Bearer {session.token}"}
    assert client.post("/v1/chat/completions", {"model": "m", "messages": msgs,
                                                 "max_tokens": 9000.0}, auth)[0] == 200
    gateway.close_session(session.token)
    # A request that sets no limit is reserved at the default bound.
    session = gateway.open_session("t3", "openai:gpt-5", Budget(max_tokens=20_000),
                                   tmp_path / "l3.jsonl")
    auth = {"authorization": f"Bearer {session.token}"}
    forwarded = len(provider.seen)
    status, out, _ = client.post("/v1/chat/completions", {"model": "m", "messages": msgs}, auth)
    assert status == 400 and "32768 of output at its limit" in out["error"]["message"]
    assert len(provider.seen) == forwarded
    gateway.close_session(session.token)


def test_each_answer_asked_for_is_reserved(gateway: Gateway, client: Client, provider,
                                           tmp_path: Path) -> None:
    """Gemini bills every candidate it is asked for (candidateCount, up to 8): a request for
    eight answers of 5,000 tokens could use 40,000, not 5,000."""
    session = gateway.open_session("t", "google:gemini-2.5-flash", Budget(max_tokens=20_000),
                                   tmp_path / "l.jsonl")
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"maxOutputTokens": 5000, "candidateCount": 8}}
    status, out, _ = client.post("/v1beta/models/gemini-x:generateContent", body,
                                 {"x-goog-api-key": session.token})
    assert status == 400 and "40000 of output at its limit" in out["error"]["message"]
    assert provider.seen == []
    gateway.close_session(session.token)


def test_a_call_that_fits_goes(gateway: Gateway, client: Client, provider,
                               tmp_path: Path) -> None:
    session = gateway.open_session("t", MODEL, Budget(max_tokens=5000), tmp_path / "l.jsonl")
    path, body, headers = anthropic(session.token, max_tokens=1000, stream=False)
    assert client.post(path, json.loads(body), headers)[0] == 200
    summary = gateway.close_session(session.token)
    assert summary.model_calls == 1 and summary.usage == USAGE  # 4,700 of 5,000
    assert summary.budget_exhausted is None


def test_calls_in_flight_hold_their_reservation(gateway: Gateway, provider,
                                               tmp_path: Path) -> None:
    session = gateway.open_session("t", MODEL, Budget(max_tokens=10_000), tmp_path / "l.jsonl")
    provider.hold_after = 3
    first = raw_request(gateway.socket_path, *anthropic(session.token, max_tokens=6000))
    read_until(first, b"text_delta")
    # Alone it would fit (6000 and a little of 10000); beside the first, it would not.
    second = Client(gateway.socket_path)
    path, body, headers = anthropic(session.token, max_tokens=6000, stream=False)
    status, out, _ = second.post(path, json.loads(body), headers)
    assert status == 400 and "held by calls in flight" in out["error"]["message"]
    assert len(provider.seen) == 1
    assert session.summary.budget_exhausted is None  # it fits once the first is settled
    provider.release.set()
    read_until(first, b"message_stop")
    first.close()
    summary = wait_for(lambda: session.summary.model_calls == 1 and session.summary,
                       "the first call's record")
    assert summary.refused_calls == 1 and summary.usage == USAGE
    gateway.close_session(session.token)


def test_cost_budget_reserves_the_bound(gateway: Gateway, client: Client, provider,
                                        tmp_path: Path) -> None:
    session = gateway.open_session("t", MODEL, Budget(max_cost_usd=0.05), tmp_path / "l.jsonl")
    path, body, headers = anthropic(session.token, max_tokens=4000, stream=False)
    status, out, _ = client.post(path, json.loads(body), headers)  # 4000 x $15/M = $0.06
    assert status == 400 and "could cost up to" in out["error"]["message"]
    assert provider.seen == []
    gateway.close_session(session.token)


def test_concurrent_reservations_never_overspend(gateway: Gateway, provider,
                                                 tmp_path: Path) -> None:
    """Eight calls at once, each of which fits alone: only as many as fit together go."""
    session = gateway.open_session("t", MODEL, Budget(max_tokens=20_000), tmp_path / "l.jsonl")
    results: list[int] = []

    def one() -> None:
        path, body, headers = anthropic(session.token, max_tokens=6000, stream=False)
        results.append(Client(gateway.socket_path).post(path, json.loads(body), headers)[0])

    provider.hold_after = 0  # each answer waits until released
    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    wait_for(lambda: session.summary.refused_calls == 5, "five refusals")
    provider.release.set()
    for t in threads:
        t.join(60)
    assert sorted(results) == [200, 200, 200, 400, 400, 400, 400, 400]
    assert len(provider.seen) == 3
    gateway.close_session(session.token)
