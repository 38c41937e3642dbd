"""Attack 7 of issue 9, exhausting the host through the gateway: a 63 MB request body is
refused with 413 before it is read or parsed (by its Content-Length, or counted as a chunked
body arrives), and a huge gateway.jsonl is read with bounded memory."""

from __future__ import annotations

import json
import socket
import threading
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest

from lastexam.errors import LastexamError
from lastexam.gateway.models import Budget
from lastexam.gateway.server import Gateway

from .conftest import Client, wait_for

BIG = 63 * 1024 * 1024
HEAD = "POST /v1/messages HTTP/1.1\r\nHost: gw\r\nx-api-key: {token}\r\n"


def connect(gateway: Gateway) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(str(gateway.socket_path))
    return sock


def status_line(sock: socket.socket) -> str:
    got = b""
    while b"\r\n" not in got:
        piece = sock.recv(4096)
        if not piece:
            break
        got += piece
    return got.split(b"\r\n")[0].decode()


def send_in_background(sock: socket.socket, pieces) -> threading.Thread:
    """Sends until the gateway hangs up (as a client pushing a big body would)."""

    def run() -> None:
        try:
            for piece in pieces:
                sock.sendall(piece)
        except OSError:
            pass

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.fixture
def parse_spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the bodies the gateway parsed as JSON."""
    import lastexam.gateway.server as server

    parsed: list[int] = []

    def loads(raw, *args, **kwargs):
        parsed.append(len(raw))
        return json.loads(raw, *args, **kwargs)

    monkeypatch.setattr(server, "json", SimpleNamespace(loads=loads, dumps=json.dumps))
    return parsed


def test_63_mb_body_is_refused_by_its_length(gateway: Gateway, provider, tmp_path: Path,
                                             parse_spy: list[int]) -> None:
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(),
                                   tmp_path / "l.jsonl")
    sock = connect(gateway)
    head = HEAD.format(token=session.token) + f"content-length: {BIG}\r\n\r\n"
    sock.sendall(head.encode())
    # The answer comes before the body is sent: the gateway never waits for 63 MB.
    assert status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
    filler = b'{"messages": "' + b"x" * (1024 * 1024)
    send_in_background(sock, [filler] * 63).join(60)
    sock.close()
    assert parse_spy == [] and provider.seen == []
    assert gateway.close_session(session.token).model_calls == 0


def test_63_mb_chunked_body_is_counted_and_refused(gateway: Gateway, provider, tmp_path: Path,
                                                   parse_spy: list[int]) -> None:
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(),
                                   tmp_path / "l.jsonl")
    sock = connect(gateway)
    sock.sendall((HEAD.format(token=session.token) + "transfer-encoding: chunked\r\n\r\n").encode())
    piece = b"x" * (1024 * 1024)
    chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
    sender = send_in_background(sock, [chunk] * 63 + [b"0\r\n\r\n"])
    assert status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
    sender.join(60)
    sock.close()
    assert parse_spy == [] and provider.seen == []


def test_endless_chunked_trailers_are_counted_and_refused(gateway: Gateway, provider,
                                                          parse_spy: list[int]) -> None:
    """Trailers after the last chunk count against the cap too: the gateway never reads
    them without end."""
    sock = connect(gateway)
    sock.sendall((HEAD.format(token="x") + "transfer-encoding: chunked\r\n\r\n0\r\n").encode())
    trailer = b"x-pad: " + b"y" * 1000 + b"\r\n"
    sender = send_in_background(sock, [trailer * 1024] * 16)  # 16 MB, twice the cap
    assert status_line(sock) == "HTTP/1.1 413 Request Entity Too Large"
    sender.join(60)
    sock.close()
    assert parse_spy == [] and provider.seen == []


@pytest.mark.parametrize("length", ["-1", "1e9", "0x10"])
def test_lying_lengths_are_refused(gateway: Gateway, length: str) -> None:
    sock = connect(gateway)
    sock.sendall((HEAD.format(token="x") + f"content-length: {length}\r\n\r\n").encode())
    assert status_line(sock).split()[1] in ("400", "413")
    sock.close()


def test_the_cap_is_configurable(tmp_path: Path, provider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LASTEXAM_GATEWAY_MAX_BODY_MB", "0.01")  # 10485 bytes
    with Gateway(tmp_path / "gw" / "gateway.sock") as gateway:
        session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(),
                                       tmp_path / "l.jsonl")
        small = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        big = {**small, "messages": [{"role": "user", "content": "x" * 11_000}]}
        client = Client(gateway.socket_path)
        assert client.post("/v1/messages", small, {"x-api-key": session.token})[0] == 200
        assert Client(gateway.socket_path).post(
            "/v1/messages", big, {"x-api-key": session.token})[0] == 413
        gateway.close_session(session.token)
    monkeypatch.setenv("LASTEXAM_GATEWAY_MAX_BODY_MB", "lots")
    with pytest.raises(LastexamError, match="LASTEXAM_GATEWAY_MAX_BODY_MB"):
        Gateway(tmp_path / "gw2" / "gateway.sock")


def _record(seq: int, request: object) -> str:
    return json.dumps({
        "seq": seq, "started_at": "2026-01-01T00:00:00", "wire": "anthropic",
        "path": "/v1/messages", "stream": False, "requested_model": "m", "model": "m",
        "status": 200, "latency_ms": 1.0, "request": request, "response": {"big": "y" * 10_000},
    })


def test_a_huge_gateway_log_is_read_with_bounded_memory(tmp_path: Path) -> None:
    from lastexam.trajectory import read_calls

    log = tmp_path / "gateway.jsonl"
    with open(log, "w") as f:
        # One line over the cap, then 300 calls of 200 kB each.
        f.write(_record(0, {"tools": [1], "blob": "z" * (40 * 1024 * 1024)}) + "\n")
        for i in range(1, 301):
            f.write(_record(i, {"tools": [1], "blob": "z" * 200_000}) + "\n")
        f.write("not json at all\n" + "{" * 1000 + "\n")
    size = log.stat().st_size
    assert size > 100 * 1024 * 1024
    tracemalloc.start()
    try:
        calls = read_calls(log)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # At most about one line at the cap (16 MB) is held: not the 40 MB line, the 60 MB of
    # request bodies, nor the file.
    assert peak < 24 * 1024 * 1024, peak
    assert [c.seq for c in calls] == list(range(1, 301))  # the line over the cap is skipped
    assert calls[0].request == {"tools": True} and calls[0].response is None
    # Reading stops at the total cap.
    assert len(read_calls(log, max_total=40 * 1024 * 1024 + 50 * 220_000)) < 60


def test_the_gateway_logs_an_overlong_call_without_bodies(
        gateway: Gateway, client: Client, provider, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import lastexam.gateway.session as session_module

    monkeypatch.setattr(session_module, "MAX_LOG_LINE", 2000)
    log = tmp_path / "l.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x" * 5000}]}
    assert client.post("/v1/messages", body, {"x-api-key": session.token})[0] == 200
    record = json.loads(wait_for(log.read_text, "the call's record"))
    assert record["request"] is None and "bodies not logged" in record["error"]
    assert record["usage"]["output_tokens"] == 200
    gateway.close_session(session.token)


def test_past_the_log_cap_a_line_is_bounded_whatever_the_request_held(
        gateway: Gateway, client: Client, provider, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the trial's log is full, calls are logged without bodies: what else a request
    chose (the model it names, its unknown fields, a refused tool's name quoted in the error)
    must not make each line as large as the body, or the log would grow without end."""
    import lastexam.gateway.session as session_module

    monkeypatch.setattr(session_module, "MAX_LOG_BYTES", 1000)
    log = tmp_path / "l.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    body = {"model": "m" * 200_000, "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            **{f"field_{i:05}_{'f' * 100}": 1 for i in range(2000)}}
    refused = {**body, "tools": [{"type": "t" * 200_000}]}
    assert client.post("/v1/messages", refused, {"x-api-key": session.token})[0] == 400
    assert client.post("/v1/messages", body, {"x-api-key": session.token})[0] == 200
    gateway.close_session(session.token)
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and len(provider.seen) == 1
    records = [json.loads(line) for line in lines]
    for line, record in zip(lines, records, strict=True):
        assert len(line) < 10_000 and record["request"] is None
        assert record["requested_model"].startswith("mmm")
    assert "tool" in records[0]["error"]
    assert records[1]["dropped"][-1] == "... and 1980 more"


def held_at_the_provider(gateway: Gateway, provider, content: str, n: int) -> int:
    """Sends `n` requests of one sandbox at once while the provider holds every answer;
    how many reached the provider (after room for one more to arrive, were it let through).
    Then all are answered, and must all succeed."""
    import time

    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(),
                                   gateway.socket_path.parent / "l.jsonl")
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": content}]}
    provider.hold_after = 0  # every answer waits until released
    statuses: list[int] = []

    def call() -> None:
        statuses.append(Client(gateway.socket_path).post(
            "/v1/messages", body, {"x-api-key": session.token})[0])

    threads = [threading.Thread(target=call) for _ in range(n)]
    for t in threads:
        t.start()
    wait_for(lambda: len(provider.seen) >= n - 1, f"{n - 1} requests at the provider")
    time.sleep(1)
    held = len(provider.seen)
    provider.release.set()
    for t in threads:
        t.join(60)
    assert statuses == [200] * n and len(provider.seen) == n
    gateway.close_session(session.token)
    return held


def test_the_log_ends_at_its_total_cap(gateway: Gateway, client: Client, provider,
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused requests cost nothing and are answered by the thousand a second: past its
    total cap the log takes no more lines (the last says so), and the summary counts on."""
    import lastexam.gateway.session as session_module

    monkeypatch.setattr(session_module, "MAX_LOG_BYTES", 2000)
    monkeypatch.setattr(session_module, "MAX_LOG_TOTAL", 10_000)
    log = tmp_path / "l.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "web_search_20250305", "name": "web_search"}]}
    for _ in range(100):
        assert client.post("/v1/messages", body, {"x-api-key": session.token})[0] == 400
    summary = gateway.close_session(session.token)
    assert summary.refused_calls == 100 and provider.seen == []
    lines = log.read_text().splitlines()
    assert 1 < len(lines) < 100 and log.stat().st_size < 10_000 + 2000
    assert "is its last line" in json.loads(lines[-1])["error"]


def test_a_record_keeps_bounded_names_whatever_the_request_chose(
        gateway: Gateway, client: Client, provider, tmp_path: Path) -> None:
    """The model a request names and the fields the gateway drops are the agent's to choose:
    the record (and the calls read back from the log for the trajectory) keeps a bounded part."""
    from lastexam.trajectory import read_calls

    log = tmp_path / "l.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    body = {"model": "m" * 200_000, "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            **{f"field_{i:05}_{'f' * 1000}": 1 for i in range(2000)}}
    assert client.post("/v1/messages", body, {"x-api-key": session.token})[0] == 200
    refused = {**body, "tools": [{"type": "t" * 200_000}]}
    status, out, _ = client.post("/v1/messages", refused, {"x-api-key": session.token})
    assert status == 400 and len(json.dumps(out)) < 2000
    gateway.close_session(session.token)
    calls = read_calls(log)
    assert len(calls) == 2 and all(c.requested_model == "m" * 200 for c in calls)
    dropped = calls[0].dropped or []
    assert len(dropped) == 21 and dropped[-1] == "... and 1980 more"
    assert dropped[0].startswith("body:field_00000_") and len(dropped[0]) == 200


@pytest.mark.parametrize("depth", [400, 5000])
def test_a_deeply_nested_body_is_answered_and_logged(
        gateway: Gateway, client: Client, provider, tmp_path: Path, depth: int) -> None:
    """JSON nested deeper than the log's serializer writes (400) was charged but never logged
    and never answered; deeper than the parser reads (5000), the connection was dropped."""
    log = tmp_path / "l.jsonl"
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(), log)
    nested: object = []
    for _ in range(depth):
        nested = [nested]
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "metadata": {"deep": nested}}
    raw = json.dumps(body) if depth < 1000 else json.dumps({**body, "metadata": None}).replace(
        "null", '{"deep": ' + "[" * depth + "]" * depth + "}")
    conn = client.conn
    conn.request("POST", "/v1/messages", raw.encode(),
                 {"content-type": "application/json", "x-api-key": session.token})
    status = conn.getresponse().status
    summary = gateway.close_session(session.token)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    if depth < 1000:
        assert status == 200 and summary.model_calls == 1 and len(provider.seen) == 1
        assert len(records) == 1 and records[0]["request"] is None and records[0]["usage"]
    else:
        assert status == 400 and records == [] and provider.seen == []


def test_a_sandbox_holds_at_most_two_bodies_at_the_cap(tmp_path: Path, provider) -> None:
    """Bodies under the cap still cost memory once parsed: a sandbox's requests in flight
    may hold two caps' worth of body; a further request waits before its body is read."""
    with Gateway(tmp_path / "gw" / "gateway.sock", max_body=1024 * 1024) as gateway:
        assert held_at_the_provider(gateway, provider, "x" * 700_000, 3) == 2


def test_a_sandbox_has_at_most_eight_requests_in_flight(gateway: Gateway, provider) -> None:
    """A ninth request of the same sandbox waits until one of the eight in flight is answered."""
    assert held_at_the_provider(gateway, provider, "hi", 9) == 8


def test_a_sandbox_leaves_no_state_once_its_connections_close(gateway: Gateway, provider,
                                                               tmp_path: Path) -> None:
    """The caps are kept per sandbox for as long as it has a connection open: a run of many
    trials must not keep one set per trial it ever served."""
    server = gateway._server
    assert server is not None
    session = gateway.open_session("t", "anthropic:claude-sonnet-4-5", Budget(),
                                   tmp_path / "l.jsonl")
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    client = Client(gateway.socket_path)
    assert client.post("/v1/messages", body, {"x-api-key": session.token})[0] == 200
    assert server._in_flight and server._body_bytes and server._connections
    client.conn.close()
    wait_for(lambda: not (server._in_flight or server._body_bytes or server._connections),
             "the sandbox's state to go", limit_s=5)
    gateway.close_session(session.token)


def test_many_clients_connect_at_once(gateway: Gateway) -> None:
    """The run's trials share one gateway: a burst of connections is queued, not refused
    (with the default listen backlog of 5, 16 of these 40 failed with EAGAIN)."""
    errors: list[str] = []

    def one() -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)  # a socket with a timeout connects without blocking
        try:
            sock.connect(str(gateway.socket_path))
        except OSError as e:
            errors.append(type(e).__name__)
        finally:
            sock.close()

    threads = [threading.Thread(target=one) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
