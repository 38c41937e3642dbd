"""Attacks on the model gateway from inside a sandbox: forged and replayed tokens, a flood of
connections, oversized and lying requests. The agent is lastexam-agent driven by a scripted
model whose one shell turn runs the task's attack.sh; the gateway's accounting must show only
the trial's own calls, and the honest bystander beside it must be unaffected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import TEST_TASKS, run_cli

from .conftest import make_task, outcomes_of

pytestmark = pytest.mark.usefixtures("base_env_ready")

CLIENT = '''
import http.client, json, os, socket, sys, time
SOCK = "/run/lastexam/gateway/gateway.sock"
OWN = os.environ["LASTEXAM_GATEWAY_TOKEN"]
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]}

class Conn(http.client.HTTPConnection):
    def __init__(self):
        super().__init__("localhost", timeout=20)
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(20)
        self.sock.connect(SOCK)

def post(headers, path="/v1/chat/completions", body=BODY):
    c = Conn()
    c.request("POST", path, json.dumps(body).encode(), {"content-type": "application/json", **headers})
    r = c.getresponse()
    return r.status, r.read()[:300].decode(errors="replace")
'''

FORGED = CLIENT + '''
flip = OWN[:-1] + ("B" if OWN[-1] != "B" else "C")
tries = [{}, {"authorization": "Bearer lxg-" + "A" * 43}, {"authorization": "Bearer " + flip},
         {"x-api-key": OWN + "x"}, {"x-goog-api-key": "lxg-forged"}, {"authorization": "Bearer @REPLAY@"},
         {"x-api-key": "@REPLAY@"}]
for h in tries:
    status, text = post(h)
    print("forged", status, text[:120])
for path in ("/v1/chat/completions?key=lxg-forged", "/v1/messages?key=@REPLAY@"):
    print("forged", post({}, path)[0])
# Tokens of trials running beside this one: none is visible.
import glob
for f in glob.glob("/proc/[0-9]*/environ"):
    try:
        for tok in open(f, "rb").read().split(b"\\0"):
            if b"lxg-" in tok and OWN.encode() not in tok:
                print("FOUND foreign token in", f)
    except OSError:
        pass
print("forgery done")
'''

FLOOD = CLIENT + '''
held, refused = [], 0
for i in range(300):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(SOCK)
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nContent-Length: 1000000\\r\\n\\r\\n")
        held.append(s)
    except OSError:
        refused += 1
time.sleep(1)
alive = 0
for s in held:
    s.settimeout(0.05)
    try:
        alive += len(s.recv(1)) > 0
    except socket.timeout:
        alive += 1
    except OSError:
        pass
print("flood held", alive, "of", len(held))
for s in held:
    s.close()
time.sleep(0.5)
print("after flood", post({"authorization": "Bearer lxg-x"})[0])
'''

OVERSIZE = CLIENT + '''
s = socket.socket(socket.AF_UNIX); s.connect(SOCK)
s.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nAuthorization: Bearer " + OWN.encode()
          + b"\\r\\nContent-Length: 200000000\\r\\n\\r\\n")
print("oversize", s.recv(200).split(b"\\r\\n")[0].decode())
lying = socket.socket(socket.AF_UNIX); lying.connect(SOCK)
lying.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nContent-Length: 5000\\r\\n\\r\\n{")
print("lying sent")
print("junk", post({"authorization": "Bearer " + OWN}, body=[1, 2])[0])
chunked = socket.socket(socket.AF_UNIX); chunked.connect(SOCK)
chunked.sendall(b"POST /v1/chat/completions HTTP/1.1\\r\\nAuthorization: Bearer " + OWN.encode()
                + b"\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n")
try:
    for _ in range(63):
        chunked.sendall(b"100000\\r\\n" + b"x" * 0x100000 + b"\\r\\n")
except OSError:
    pass
print("chunked", chunked.recv(200).split(b"\\r\\n")[0].decode())
'''

PROVIDER_TOOLS = CLIENT + '''
auth = {"authorization": "Bearer " + OWN}
print("search", post(auth, body=dict(BODY, tools=[{"type": "web_search"}]))[0])
mcp = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
       "mcp_servers": [{"type": "url", "url": "https://mcp.example.com/sse", "name": "x"}]}
print("mcp", post({"x-api-key": OWN}, "/v1/messages", mcp)[0])
fetch = dict(mcp, mcp_servers=None, tools=[{"type": "web_fetch_20250910", "name": "web_fetch"}])
print("fetch", post({"x-api-key": OWN}, "/v1/messages", fetch)[0])
'''

ATTACKS = {
    "gw-forged-token": (FORGED, ("forgery done",), ("forged 200", "FOUND")),
    "gw-connection-flood": (FLOOD, ("flood held", "after flood 401"), ()),
    "gw-oversize-request": (OVERSIZE, ("oversize HTTP/1.1 413", "lying sent", "junk 400",
                                       "chunked HTTP/1.1 413"), ()),
    "gw-provider-tools": (PROVIDER_TOOLS, ("search 400", "mcp 400", "fetch 400"), ()),
}


def _script(path: Path) -> Path:
    path.write_text(yaml.safe_dump({"turns": [
        {"shell": "python3 /task/inputs/attack.py 2>&1 || bash /task/inputs/attack.sh"},
        {"text": "Done."},
    ]}))
    return path


def _agent_run(tasks: Path, run_dir: Path, script: Path) -> dict:
    proc = run_cli("run", tasks, "--agent", "lastexam-agent", "--model", f"scripted:{script}",
                   "--concurrency", "2", "--out", run_dir, "--json", check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_gateway_attacks_are_contained(tmp_path: Path) -> None:
    script = _script(tmp_path / "attack.yaml")
    # A first run leaves its trial's token in its output: the replay below uses it.
    first = tmp_path / "first" / "other"
    first.mkdir(parents=True)
    make_task(first, "gw-token-source", "column-total", "echo $LASTEXAM_GATEWAY_TOKEN > /task/output/token.txt")
    ran = _agent_run(tmp_path / "first", tmp_path / "run1", script)
    replay = (tmp_path / "run1" / "trials" / ran["trials"][0]["trial_id"] / "output" / "token.txt").read_text().strip()
    assert replay.startswith("lxg-")

    tasks = tmp_path / "tasks" / "other"
    tasks.mkdir(parents=True)
    for task_id, (code, _, _) in ATTACKS.items():
        make_task(tasks, task_id, "column-total", "exit 3")
        (tasks / task_id / "inputs" / "attack.py").write_text(code.replace("@REPLAY@", replay))
    honest = (TEST_TASKS / "other" / "column-total" / "solution" / "solve.sh").read_text()
    make_task(tasks, "gw-bystander", "column-total", honest)
    run_dir = tmp_path / "run2"
    outcomes = outcomes_of(_agent_run(tmp_path / "tasks", run_dir, script), run_dir)

    bystander = outcomes["gw-bystander"]
    assert bystander.trial["status"] == "completed" and bystander.trial["score"] == 1.0
    for task_id, (_, has, lacks) in ATTACKS.items():
        o = outcomes[task_id]
        log = o.log
        assert o.trial["status"] == "completed", (task_id, o.trial["error"])
        assert o.trial["score"] == 0.0
        for text in has:
            assert text in log, (task_id, log[-3000:])
        for text in lacks:
            assert text not in log, (task_id, log[-3000:])
        # Only the trial's own two scripted calls are on its account.
        assert o.record["gateway"]["model_calls"] == 2, (task_id, o.record["gateway"])
    forged = outcomes["gw-forged-token"].log
    assert forged.count("forged 401") == 9
    assert "unknown gateway token" in forged  # the replayed token of the earlier run
    flood = outcomes["gw-connection-flood"].log
    held = int(flood.split("flood held ")[1].split()[0])
    assert held <= 64  # MAX_CONNECTIONS_PER_SANDBOX; the rest were closed at once


def test_replayed_token_of_a_finished_trial(tmp_path: Path) -> None:
    """Within one gateway: a finished trial's token is refused, and one trial's calls never
    land on another's account."""
    from lastexam.gateway.models import Budget
    from lastexam.gateway.server import Gateway

    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - text: hi\n")
    with Gateway(tmp_path / "gw" / "gateway.sock") as gw:
        a = gw.open_session("a", f"scripted:{script}", Budget(), tmp_path / "a.jsonl")
        b = gw.open_session("b", f"scripted:{script}", Budget(), tmp_path / "b.jsonl")
        assert chat_call(gw.socket_path, a.token)[0] == 200
        summary = gw.close_session(a.token)
        status, body = chat_call(gw.socket_path, a.token)
        assert status == 401 and "closed" in json.dumps(body)
        assert chat_call(gw.socket_path, b.token)[0] == 200
        assert summary.model_calls == 1 and gw.close_session(b.token).model_calls == 1


def chat_call(socket_path: Path, token: str) -> tuple[int, object]:
    from tests.gateway.conftest import Client

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    status, answer, _ = Client(socket_path).post(
        "/v1/chat/completions", body, {"authorization": f"Bearer {token}"})
    return status, answer
