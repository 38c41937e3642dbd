"""Upstreams answer a client's request: a real provider (forwarded with the host's key) or a
scripted one. Both write the answer to a Sink (the client's connection) as it comes and say
what happened in an Outcome, from which the session counts tokens and cost."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from lastexam.gateway.models import Usage
from lastexam.gateway.providers import Provider
from lastexam.gateway.wire import SSEParser, Wire, WireRequest

# The retry policy, in one place: the gateway retries only a connection that could not be
# opened (nothing was sent). Any answer, error or not, goes back to the client, whose own
# retry policy then applies: retrying here too would multiply attempts and hide them.
CONNECT_RETRIES = 2
UPSTREAM_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=60.0)
# Request headers a client may pass through to the provider (never its credentials).
PASS_HEADERS = ("anthropic-version", "anthropic-beta", "openai-beta")


class Sink(Protocol):
    """The client's connection. A streamed answer is written in any number of chunks; an
    answer that is not streamed is written in exactly one."""

    def start(self, status: int, content_type: str, stream: bool) -> None: ...

    def write(self, chunk: bytes) -> None: ...


@dataclass
class Outcome:
    status: int
    model: str
    usage: Usage | None = None
    response: Any = None
    error: str | None = None


class Upstream(Protocol):
    def call(self, wire: Wire, req: WireRequest, headers: dict[str, str], sink: Sink) -> Outcome: ...


class HttpUpstream:
    """Forwards to a real provider; streams pass through byte for byte as they arrive."""

    def __init__(self, provider: Provider, model: str, client: httpx.Client):
        self.provider = provider
        self.model = model
        self.client = client

    def _headers(self, wire: Wire, client_headers: dict[str, str]) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept-encoding": "identity"}
        for name in PASS_HEADERS:
            if name in client_headers:
                headers[name] = client_headers[name]
        if wire.name == "anthropic":
            headers.setdefault("anthropic-version", "2023-06-01")
        key = self.provider.key()
        if key:
            if self.provider.bearer:
                headers["authorization"] = f"Bearer {key}"
            else:
                headers[wire.key_header] = wire.key_prefix + key
        return headers

    def call(self, wire: Wire, req: WireRequest, headers: dict[str, str], sink: Sink) -> Outcome:
        path, body = wire.with_model(req, self.model)
        url = self.provider.url(path)
        if req.query.get("alt"):
            url += f"?alt={req.query['alt']}"
        stream = wire.is_stream(req)
        send = self._headers(wire, headers)
        payload = json.dumps(body).encode()
        for attempt in range(CONNECT_RETRIES + 1):
            try:
                with self.client.stream("POST", url, content=payload, headers=send) as resp:
                    return self._relay(wire, resp, stream, sink)
            except httpx.ConnectError as e:
                if attempt == CONNECT_RETRIES:
                    return self._fail(wire, sink, 502, f"cannot reach {self.provider.name}: {e}")
            except httpx.HTTPError as e:
                return self._fail(wire, sink, 502, f"{self.provider.name} failed: {type(e).__name__}")
        raise AssertionError("unreachable")

    def _relay(self, wire: Wire, resp: httpx.Response, stream: bool, sink: Sink) -> Outcome:
        ctype = resp.headers.get("content-type", "application/json")
        is_sse = "text/event-stream" in ctype
        sink.start(resp.status_code, ctype, is_sse)
        if is_sse:
            parser = SSEParser()
            for chunk in resp.iter_bytes():
                sink.write(chunk)
                parser.feed(chunk)
            parser.close()
            usage, response = wire.usage_from_events(parser.events), parser.events
        else:
            raw = resp.read()
            sink.write(raw)
            try:
                response = json.loads(raw)
            except ValueError:
                response = raw[:4000].decode(errors="replace")
            usage = wire.usage_from_body(response)
        error = None if resp.status_code < 400 else f"{self.provider.name} answered {resp.status_code}"
        return Outcome(resp.status_code, self.model, usage, response, error)

    def _fail(self, wire: Wire, sink: Sink, status: int, message: str) -> Outcome:
        body = wire.error_body(status, f"lastexam gateway: {message}")
        sink.start(status, "application/json", False)
        sink.write(json.dumps(body).encode())
        return Outcome(status, self.model, None, body, message)
