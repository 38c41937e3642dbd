"""The warm worker's network namespaces (sandbox/warm_worker.py, Networks): a grading's serves
a later grading only when nothing in it tells it from a new one, and nothing a grading leaves
in its namespace reaches another."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_warm_grading import _request, _session, _task

from lastexam.run.grading import grade
from lastexam.sandbox import warm
from lastexam.task.load import load_task

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="warm gradings need root and cgroups")

LEFT_NAME = "lastexam-left-behind"

# Reports its network namespace and whether what another grading left (a unix socket's name, a
# flow label's destination) is listed there;
# then, as the output's mode.txt says, leaves nothing, tries loopback (refused for want of a
# route: a counter moves), leaves an abstract unix socket in flight (a socket that holds
# itself and the named one: it outlives every process), or an IPv6 flow label.
NETWORK_GRADER = f'''
import array
import os
import socket
import struct
from lastexam.grading import Outcome, Rubric


def grade(ctx):
    r = Rubric()
    r.check("namespace", 1, Outcome(True, str(os.stat("/proc/self/ns/net").st_ino)))
    labels = open("/proc/net/ip6_flowlabel").read() if os.path.exists("/proc/net/ip6_flowlabel") else ""
    listed = "{LEFT_NAME}" in open("/proc/net/unix").read() or any(
        bytes.fromhex(line.split()[6]) == b"{LEFT_NAME[:16]}" for line in labels.splitlines()[1:])
    r.check("no name left by another", 1, Outcome(not listed))
    mode = (ctx.output / "mode.txt").read_text()
    if mode == "connect":
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=1).close()
            refused = "connected"
        except OSError as e:
            refused = e.errno
        r.check("loopback down", 1, Outcome(refused == 101, str(refused)))  # ENETUNREACH
    if mode == "flow-label" and os.path.exists("/proc/net/ip6_flowlabel"):
        # An IPv6 flow label kept 150 s after its socket, its destination field of the
        # grading's choosing (found by a review): IPV6_FLOWLABEL_MGR, IPV6_FL_F_CREATE.
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(41, 32, struct.pack("=16sIBBHHHI", b"{LEFT_NAME[:16]}", socket.htonl(0xA0001),
                                         0, 255, 1, 0, 150, 0))
        s.close()
    if mode == "in-flight":
        named = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        named.bind("\\0{LEFT_NAME}")
        named.listen()
        a, b = socket.socketpair()
        fds = array.array("i", [b.fileno(), named.fileno()])
        a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    return r
'''


def _graded(session, task, name: str, mode: str) -> dict[str, str]:
    record = grade(session.provider, session.area,
                   _request(session.area.root, task, name, {"mode.txt": mode}))
    assert record.ok, record.error
    return {c.name: c.message for c in record.checks if c.name != "namespace" and not c.passed} | {
        "namespace": next(c.message for c in record.checks if c.name == "namespace")}


def test_a_namespace_serves_the_next_grading_only_as_new(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, NETWORK_GRADER))
    with _session(tmp_path) as session:
        assert warm.usable(session.provider)
        seen = [_graded(session, task, f"g{i}", mode) for i, mode in enumerate(
            ["nothing", "nothing", "connect", "in-flight", "nothing", "flow-label", "nothing", "nothing"])]
    for found in seen:
        assert set(found) == {"namespace"}, found  # loopback down, no name from another
    ns = [found["namespace"] for found in seen]
    assert ns[1] == ns[0]  # nothing left: the same namespace again
    assert ns[2] == ns[1]  # its own counter moved after it was given
    assert ns[3] != ns[2]  # the counter moved: a new one
    assert ns[4] != ns[3]  # the socket in flight: a new one (and its name not seen above)
    assert ns[5] == ns[4]
    if Path("/proc/net/ip6_flowlabel").exists():
        assert ns[6] != ns[5]  # the flow label kept: a new one (and its destination not seen)
    assert ns[7] == ns[6]
