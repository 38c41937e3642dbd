"""Latency the gateway adds to a model call, and time to the first streamed byte.

    python benchmarks/gateway_latency.py [--calls 2000] [--body-kb 2 100]

An upstream that answers instantly with a scripted reply (a local HTTP server on
127.0.0.1, rendering the scripted upstream's answers) is called two ways, alternately, with
the same request over a kept-alive connection:
    direct    client -> upstream
    gateway   client -> gateway's unix socket -> (auth, forward, usage, cost, log) -> upstream
Added latency is gateway minus direct, per pair of calls. Also measured: the gateway answering
from a script itself (what the tests use), and through the in-sandbox socat bridge
(TCP -> unix socket) that Claude Code, Codex and Gemini CLI use.
Prints p50 and p99 of each; run by hand (shared machines are noisy).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lastexam.gateway.models import Budget, Usage
from lastexam.gateway.server import Gateway
from lastexam.gateway.wire import WIRES, Reply


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as a provider's server would: no 40 ms delayed-ACK stalls

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        stream = bool(body.get("stream"))
        reply = Reply(text="Done.", usage=Usage(input_tokens=100, output_tokens=5))
        chunks = list(WIRES["anthropic"].render(reply, "bench", stream))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if stream else "application/json")
        if stream:
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for c in chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            self.wfile.write(b"0\r\n\r\n")
        else:
            data = b"".join(chunks)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("localhost", timeout=30)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.socket_path)


def call(conn: http.client.HTTPConnection, payload: bytes, headers: dict) -> tuple[float, float]:
    """(total seconds, seconds to the first body byte)"""
    start = time.perf_counter()
    conn.request("POST", "/v1/messages", payload, headers)
    resp = conn.getresponse()
    resp.read1(1) if hasattr(resp, "read1") else resp.read(1)
    first = time.perf_counter()
    resp.read()
    return time.perf_counter() - start, first - start


def body(kb: int, stream: bool) -> bytes:
    filler = "x" * (kb * 1024)
    return json.dumps({"model": "m", "max_tokens": 10, "stream": stream,
                       "messages": [{"role": "user", "content": filler}],
                       "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]}).encode()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def row(name: str, xs: list[float]) -> str:
    return f"  {name:<44} p50 {pct(xs, 0.5):7.3f} ms   p99 {pct(xs, 0.99):7.3f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--body-kb", type=int, nargs="+", default=[2, 100])
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gw-bench-"))
    up = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=up.serve_forever, daemon=True).start()
    os.environ["LASTEXAM_LOCAL_BASE_URL"] = f"http://127.0.0.1:{up.server_address[1]}"
    gw = Gateway(tmp / "gateway.sock")
    gw.start()
    fwd = gw.open_session("bench-forward", "local:bench", Budget(), tmp / "forward.jsonl")
    script = tmp / "script.yaml"
    script.write_text("turns: []\nfinal_text: Done.\n")
    scripted = gw.open_session("bench-scripted", f"scripted:{script}", Budget(), tmp / "s.jsonl")
    bridge = None
    if shutil.which("socat"):
        bridge = subprocess.Popen(["socat", "TCP-LISTEN:18765,bind=127.0.0.1,reuseaddr,fork,nodelay",
                                   f"UNIX-CONNECT:{gw.socket_path}"], stderr=subprocess.DEVNULL)
        time.sleep(0.3)
    print(f"gateway latency, {a.calls} calls per case, python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cpus")
    try:
        for kb in a.body_kb:
            for stream in (False, True):
                payload = body(kb, stream)
                direct = http.client.HTTPConnection("127.0.0.1", up.server_address[1])
                via = UnixConnection(str(gw.socket_path))
                own = UnixConnection(str(gw.socket_path))
                tcp = http.client.HTTPConnection("127.0.0.1", 18765) if bridge else None
                h_up = {"content-type": "application/json"}
                h_fwd = {**h_up, "x-api-key": fwd.token}
                h_own = {**h_up, "x-api-key": scripted.token}
                d, g, s, b, added = [], [], [], [], []
                d_first, g_first = [], []
                for _ in range(50):  # warm up connections and code paths
                    call(direct, payload, h_up), call(via, payload, h_fwd)
                for _ in range(a.calls):
                    td, fd = call(direct, payload, h_up)
                    tg, fg = call(via, payload, h_fwd)
                    d.append(td), g.append(tg), added.append(tg - td)
                    d_first.append(fd), g_first.append(fg)
                    s.append(call(own, payload, h_own)[0])
                    if tcp is not None:
                        b.append(call(tcp, payload, h_fwd)[0])
                mode = "streamed" if stream else "whole"
                print(f"\nrequest body {kb} KB, answer {mode}")
                print(row("direct to upstream", d))
                print(row("through the gateway (forwarding)", g))
                print(row("added by the gateway (paired difference)", added))
                print(f"  {'':<44} p50 of totals: {pct(g, .5) - pct(d, .5):.3f} ms added")
                if stream:
                    print(row("time to first byte, direct", d_first))
                    print(row("time to first byte, through the gateway", g_first))
                print(row("gateway answering from a script", s))
                if b:
                    print(row("through socat bridge + gateway (forwarding)", b))
                print(f"  median ratio gateway/direct: {statistics.median(g) / statistics.median(d):.2f}")
    finally:
        if bridge is not None:
            bridge.terminate()
        gw.stop()
        up.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
