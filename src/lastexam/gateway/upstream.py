"""Upstreams answer a client's request: a real provider (forwarded with the host's key) or a
scripted one. Both write the answer to a Sink (the client's connection) as it comes and say
what happened in an Outcome, from which the session counts tokens and cost."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx

from lastexam.gateway.models import Usage
from lastexam.gateway.providers import Provider
from lastexam.gateway.sink import TrialEnded
from lastexam.gateway.wire import SSEParser, Wire, WireRequest

# The retry policy, in one place: the gateway retries only a connection that could not be
# opened (nothing was sent). Any answer, error or not, goes back to the client, whose own
# retry policy then applies: retrying here too would multiply attempts and hide them.
CONNECT_RETRIES = 2
UPSTREAM_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=60.0)


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
    # False when the provider may have billed more than `usage` says: the stream was cut (by
    # the client, the provider or the trial's end), or the answer never came.
    complete: bool = True


class Upstream(Protocol):
    def call(self, wire: Wire, req: WireRequest, headers: dict[str, str], sink: Sink) -> Outcome: ...

    def upper_bound(self, wire: Wire, req: WireRequest) -> Usage:
        """The most this upstream can bill for the request."""
        ...


class HttpUpstream:
    """Forwards to a real provider; streams pass through byte for byte as they arrive."""

    def __init__(self, provider: Provider, model: str, client: httpx.Client):
        self.provider = provider
        self.model = model
        self.client = client

    def upper_bound(self, wire: Wire, req: WireRequest) -> Usage:
        return wire.upper_bound(req)

    def _headers(self, wire: Wire, client_headers: dict[str, str]) -> dict[str, str]:
        """`client_headers` are those the forwarding policy kept (gateway/policy.py)."""
        headers = {"content-type": "application/json", "accept-encoding": "identity",
                   **client_headers}
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
        if req.query.get("alt"):  # encoded: its value must not add parameters of its own
            url += "?" + urlencode({"alt": req.query["alt"]})
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
                # Sent, but no whole answer came back: the provider may have billed it.
                out = self._fail(wire, sink, 502, f"{self.provider.name} failed: {type(e).__name__}")
                out.complete = False
                return out
        raise AssertionError("unreachable")

    def _relay(self, wire: Wire, resp: httpx.Response, stream: bool, sink: Sink) -> Outcome:
        ctype = resp.headers.get("content-type", "application/json")
        is_sse = "text/event-stream" in ctype
        error = None if resp.status_code < 400 else f"{self.provider.name} answered {resp.status_code}"
        if is_sse:
            parser = SSEParser()
            cut = None
            try:
                sink.start(resp.status_code, ctype, True)
                for chunk in resp.iter_bytes():
                    parser.feed(chunk)  # first: usage in a chunk the client never gets counts
                    try:
                        # Once the client is gone the rest is still read, not sent: the OpenAI
                        # wires report usage only at the end. An empty write only checks that
                        # the trial goes on.
                        sink.write(b"" if cut else chunk)
                    except TrialEnded as e:
                        cut = cut or f"the stream was cut on the client's side ({type(e).__name__}: {e})"
                        break
                    except OSError as e:  # the client hung up
                        cut = f"the stream was cut on the client's side ({type(e).__name__}: {e})"
            except OSError as e:  # the client hung up before the answer started
                cut = f"the stream was cut on the client's side ({type(e).__name__}: {e})"
            except httpx.HTTPError as e:
                cut = cut or f"{self.provider.name} cut the stream ({type(e).__name__})"
            parser.close()
            usage, response = wire.usage_from_events(parser.events), parser.events
            return Outcome(resp.status_code, self.model, usage, response, cut or error,
                           complete=cut is None)
        raw = resp.read()
        sink.start(resp.status_code, ctype, False)
        sink.write(raw)
        try:
            response = json.loads(raw)
        except ValueError:
            response = raw[:4000].decode(errors="replace")
        return Outcome(resp.status_code, self.model, wire.usage_from_body(response), response, error)

    def _fail(self, wire: Wire, sink: Sink, status: int, message: str) -> Outcome:
        body = wire.error_body(status, f"lastexam gateway: {message}")
        sink.start(status, "application/json", False)
        sink.write(json.dumps(body).encode())
        return Outcome(status, self.model, None, body, message)
