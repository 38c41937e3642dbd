"""The gateway: an HTTP server on a unix socket, one per run, shared by the run's trials.

Each trial opens a session and gets a token; a request is served only with the token of an
open session (as x-api-key, Authorization: Bearer, x-goog-api-key or ?key=). The sandbox
sees the socket and the token, never a provider's key.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
import struct
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from lastexam.errors import LastexamError
from lastexam.gateway.limits import (
    BODIES_IN_FLIGHT,
    BodyBytes,
    TooLarge,
    drain,
    expected_size,
    max_body_from_env,
    read_body,
)
from lastexam.gateway.models import MAX_NAME, Allowances, Budget, CallRecord, SessionSummary
from lastexam.gateway.policy import Refused, forward_policy
from lastexam.gateway.prices import PriceTable, price_table
from lastexam.gateway.providers import PROVIDERS, ModelSpec, parse_model
from lastexam.gateway.scripted import ScriptedUpstream, load_script
from lastexam.gateway.session import Session
from lastexam.gateway.sink import ChunkSink
from lastexam.gateway.upstream import UPSTREAM_TIMEOUT, HttpUpstream, Outcome
from lastexam.gateway.wire import Wire, WireRequest, wire_for_path

MAX_CONNECTIONS_PER_SANDBOX = 64  # further connections are closed at once
MAX_IN_FLIGHT_PER_SANDBOX = 8  # further requests wait before their body is read
IDLE_TIMEOUT_S = 600  # a connection silent this long (reading or writing) is closed


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """One thread per connection, with caps per connecting sandbox (told apart by the pid
    namespace of the peer process), so that no trial can flood the run's gateway."""

    daemon_threads = True
    allow_reuse_address = True
    # The listen backlog: the default 5 made connects fail (EAGAIN) when a few clients of the
    # run's trials connected at once.
    request_queue_size = 256
    gateway: Gateway

    def server_activate(self) -> None:
        super().server_activate()
        self._caps_lock = threading.Lock()
        self._connections: dict[str, int] = {}
        self._in_flight: dict[str, threading.BoundedSemaphore] = {}
        self._body_bytes: dict[str, BodyBytes] = {}
        self._peer_of: dict[int, str] = {}

    def process_request(self, request: Any, client_address: Any) -> None:
        peer = _peer_sandbox(request)
        with self._caps_lock:
            n = self._connections.get(peer, 0)
            if n < MAX_CONNECTIONS_PER_SANDBOX:
                self._connections[peer] = n + 1
                self._peer_of[id(request)] = peer
        if n >= MAX_CONNECTIONS_PER_SANDBOX:
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._caps_lock:
                peer = self._peer_of.pop(id(request), "")
                self._connections[peer] = self._connections.get(peer, 1) - 1
                if self._connections[peer] <= 0:  # nothing of this sandbox is in flight
                    self._connections.pop(peer, None)
                    self._in_flight.pop(peer, None)
                    self._body_bytes.pop(peer, None)

    def in_flight(self, request: Any) -> threading.BoundedSemaphore:
        """The semaphore bounding the requests a sandbox has in flight (each holds its body)."""
        with self._caps_lock:
            peer = self._peer_of.get(id(request), "")
            if peer not in self._in_flight:
                self._in_flight[peer] = threading.BoundedSemaphore(MAX_IN_FLIGHT_PER_SANDBOX)
            return self._in_flight[peer]

    def body_bytes(self, request: Any) -> BodyBytes:
        """The bytes of request bodies the sandbox has in flight."""
        with self._caps_lock:
            peer = self._peer_of.get(id(request), "")
            if peer not in self._body_bytes:
                limit = BODIES_IN_FLIGHT * self.gateway.max_body
                self._body_bytes[peer] = BodyBytes(limit)
            return self._body_bytes[peer]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up or sends garbage is its own problem; nothing to print


def _peer_sandbox(sock: socket.socket) -> str:
    """The pid namespace of the process at the other end of a unix socket: one per sandbox."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid = struct.unpack("3i", creds)[0]
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return "unknown"


class Gateway:
    def __init__(self, socket_path: Path, prices: PriceTable | None = None,
                 max_body: int | None = None):
        self.socket_path = socket_path
        self.max_body = max_body or max_body_from_env()  # bytes
        self.prices = prices or price_table()
        self._sessions: dict[str, Session] = {}
        self._closed: set[str] = set()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._http: httpx.Client | None = None

    # lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        server = _Server(str(self.socket_path), _Handler)
        server.gateway = self
        # Sandboxes run as another uid: connecting needs write permission on the socket.
        os.chmod(self.socket_path, 0o666)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="gateway", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._http is not None:
            self._http.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def __enter__(self) -> Gateway:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def http_client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                # Without TCP_NODELAY a request's body waits for the ACK of its headers
                # (Nagle's algorithm against delayed ACKs): about 40 ms per call.
                transport = httpx.HTTPTransport(
                    socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
                )
                self._http = httpx.Client(timeout=UPSTREAM_TIMEOUT, transport=transport)
            return self._http

    # sessions ----------------------------------------------------------------------------
    def open_session(
        self, trial_id: str, model: ModelSpec | str, budget: Budget, log_path: Path,
        allow: Allowances | None = None,
    ) -> Session:
        """A trial's session. A run passes the model it parsed when planning; the text form
        is for callers outside a run."""
        spec = model if isinstance(model, ModelSpec) else parse_model(model)
        if spec.scripted:
            script = load_script(Path(spec.model))
            upstream: Any = ScriptedUpstream(script, f"scripted-{Path(spec.model).stem}")
            price_as = ("", script.price_as or "")
        else:
            upstream = HttpUpstream(PROVIDERS[spec.provider], spec.model, self.http_client())
            price_as = (spec.provider, spec.model)
        session = Session(trial_id, spec, upstream, budget, log_path, self.prices, price_as,
                          allow)
        with self._lock:
            self._sessions[session.token] = session
        return session

    def close_session(self, token: str) -> SessionSummary:
        with self._lock:
            session = self._sessions.pop(token)
            self._closed.add(token)
        return session.close()

    def lookup(self, token: str | None) -> tuple[Session | None, str]:
        if not token:
            return None, "no gateway token in the request"
        with self._lock:
            if token in self._closed:
                return None, "this trial's gateway token is closed"
            session = self._sessions.get(token)
        return (session, "") if session else (None, "unknown gateway token")


def check_model(spec: ModelSpec, wire: str, budget: Budget | None = None) -> ModelSpec:
    """Fail before a run starts if the model cannot answer a harness speaking `wire`, or if
    a cost budget could not be enforced because the model has no price."""
    if spec.scripted:
        script = load_script(Path(spec.model))
        priced = script.price_as is not None and price_table().price("", script.price_as)
    else:
        if wire not in spec.wires():
            raise LastexamError(
                f"model {spec.text!r}: provider {spec.provider!r} does not speak the {wire} API "
                f"(it speaks {', '.join(spec.wires())})"
            )
        priced = price_table().price(spec.provider, spec.model) is not None
    if budget is not None and budget.max_cost_usd is not None and not priced:
        raise LastexamError(
            f"--max-cost-usd cannot be enforced for {spec.text!r}: it has no price in the price "
            f"table (version {price_table().version}); use --max-tokens"
        )
    return spec


def _token(headers: Any, query: dict[str, str]) -> str | None:
    if v := headers.get("x-api-key"):
        return v
    auth = headers.get("authorization") or ""
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return headers.get("x-goog-api-key") or query.get("key")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S
    # Buffered: an answer's headers and body leave in one write (a TCP bridge would otherwise
    # relay them as two segments and stall on delayed ACKs); streams flush every event.
    wbufsize = 1 << 16
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def address_string(self) -> str:
        return "sandbox"

    def setup(self) -> None:
        super().setup()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)

    def do_HEAD(self) -> None:
        self._plain(200, b"")

    def do_GET(self) -> None:
        if urlsplit(self.path).path in ("/", ""):
            self._plain(200, b"lastexam gateway\n")
        else:
            self._plain(404, b'{"error": "not found"}', "application/json")

    def do_POST(self) -> None:
        size = expected_size(self.headers, self.server.gateway.max_body)
        with self.server.in_flight(self.request), self.server.body_bytes(self.request).hold(size):
            self._post()

    def _post(self) -> None:
        received = time.monotonic()
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        cap = self.server.gateway.max_body
        try:
            raw = read_body(self.rfile, self.headers, cap)
        except (TooLarge, ValueError) as e:
            self.close_connection = True
            too_large = isinstance(e, TooLarge)
            why = f"request body over {cap} bytes" if too_large else "bad body framing"
            self._plain(413 if too_large else 400, json.dumps({"error": why}).encode(),
                        "application/json")
            self.wfile.flush()
            drain(self.connection, self.rfile)
            return
        wire = wire_for_path(parts.path)
        if wire is None:
            self._plain(404, b'{"error": "no such API path on the lastexam gateway"}',
                        "application/json")
            return
        session, why = self.server.gateway.lookup(_token(self.headers, query))
        if session is None:
            self._error(wire, 401, f"lastexam gateway: {why}")
            return
        try:
            body = json.loads(raw) if raw else {}
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except (ValueError, RecursionError) as e:  # RecursionError: nested too deep
            self._error(wire, 400, f"lastexam gateway: invalid JSON body: {e}")
            return
        req = WireRequest(parts.path, query, body, len(raw))
        self._serve(session, wire, req, received)

    def _headers(self) -> dict[str, str]:
        """Lower-cased names; a header sent more than once has its values joined by commas."""
        out: dict[str, str] = {}
        for k, v in self.headers.items():
            out[k.lower()] = f"{out[k.lower()]},{v}" if k.lower() in out else v
        return out

    def _serve(self, session: Session, wire: Wire, req: WireRequest, received: float) -> None:
        record = CallRecord(
            seq=session.next_seq(), started_at=now_iso(), wire=wire.name, path=req.path,
            stream=wire.is_stream(req), requested_model=wire.requested_model(req)[:MAX_NAME],
            model=session.spec.text, status=0, latency_ms=0.0,
            counted=wire.is_model_call(req), request=req.body,
        )
        try:
            req, headers, dropped = forward_policy(wire, req, self._headers(), session.allow)
            record.dropped = dropped or None
            bound = session.upstream.upper_bound(wire, req)
            refusal = session.begin(record, bound) if record.counted else None
        except Refused as e:
            refusal = f"request refused: {e}"
        if refusal is not None:
            message = f"lastexam gateway: {refusal}"
            record.status, record.error = 400, message
            record.latency_ms = round((time.monotonic() - received) * 1000, 3)
            session.record(record, refused=True)
            self._error(wire, 400, message)
            return
        sink = ChunkSink(self, received, session.closed)
        try:
            outcome = session.upstream.call(wire, req, headers, sink)
        except Exception as e:
            outcome = Outcome(500, session.spec.text, None, None, f"{type(e).__name__}: {e}",
                              complete=False)
            if not sink.started:
                self._error(wire, 500, f"lastexam gateway: {outcome.error}")
        record.status, record.error = outcome.status, outcome.error
        record.response = outcome.response
        record.ttfb_ms = sink.ttfb_ms
        record.latency_ms = round((time.monotonic() - received) * 1000, 3)
        # Counted before the answer's last byte leaves: once a client has its answer, the trial
        # may end and close the session at any moment.
        session.settle(record, outcome.usage, outcome.complete)
        sink.finish()
        if not outcome.complete:
            self.close_connection = True

    def _plain(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, wire: Wire, status: int, message: str) -> None:
        self._plain(status, json.dumps(wire.error_body(status, message)).encode(),
                    "application/json")
