"""A red-team neighbour of attack 7 of issue 9 (exhausting the host): the trajectory is rebuilt
on the host from the agent's native log, its stdout, which the agent writes. A command the
model runs takes a copy of the agent program's stdout (pidfd_getfd: same uid, no Yama) and
floods it with tiny, valid events. Before, each became a step: 21 MB of log cost the harness
1.6 GB of memory and 13 s outside every cgroup, and an 83 MB trajectory.json on the results
disk; the log may grow to twice the task's output_mb (2 GB by default). The steps kept from a
native log are now capped, and the trajectory says it was cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lastexam.trajectory.native as native
from lastexam.trajectory.native import MAX_ITEMS

from .conftest import make_task
from .test_gateway_attacks import _agent_run, _script

FLOOD = '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)

def parent(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("PPid:"):
            return int(line.split()[1])

pid = os.getpid()
while pid > 1:
    pid = parent(pid)
    if b"lastexam_agent" in open(f"/proc/{pid}/cmdline", "rb").read():
        break
fd = libc.syscall(438, os.pidfd_open(pid), 1, 0)  # pidfd_getfd: the agent's stdout
print("agent stdout fd", fd, "errno", ctypes.get_errno())
block = b'{"type": "assistant", "text": "x"}\\n' * 10000
for _ in range(30):
    os.write(fd, block)
print("flooded")
'''


@pytest.mark.usefixtures("base_env_ready")
def test_a_flooded_native_log_is_cut_to_a_bounded_trajectory(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks" / "other"
    tasks.mkdir(parents=True)
    make_task(tasks, "native-log-flood", "column-total", "exit 3")
    (tasks / "native-log-flood" / "inputs" / "attack.py").write_text(FLOOD)
    run_dir = tmp_path / "run"
    result = _agent_run(tmp_path / "tasks", run_dir, _script(tmp_path / "attack.yaml"))
    trial = result["trials"][0]
    folder = run_dir / "trials" / trial["trial_id"]
    log = (folder / "agent" / "agent.stdout.log").read_bytes()
    assert log.count(b'{"type": "assistant", "text": "x"}') == 300_000  # the flood landed
    assert trial["status"] == "completed" and trial["score"] == 0.0
    steps = json.loads((folder / "trajectory.json").read_text())["steps"]
    assert len(steps) <= MAX_ITEMS + 2 < 300_000, len(steps)  # one step per event before
    assert "cut" in steps[-1]["message"] and steps[-1]["source"] == "system"


def test_reading_stops_once_the_log_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cap nothing more is kept, so nothing more is read: texts that join one open
    step were read and parsed to the end of the log (up to its byte cap) after the cut."""
    monkeypatch.setattr(native, "MAX_ITEMS", 50)
    log = tmp_path / "agent.stdout.log"
    log.write_text('{"type": "message", "role": "assistant", "content": "x"}\n' * 1000)
    read: list[str] = []
    iter_lines = native.iter_lines

    def counted(path: Path):
        for line in iter_lines(path):
            read.append(line)
            yield line

    monkeypatch.setattr(native, "iter_lines", counted)
    steps = native.gemini_cli_steps(log)
    assert steps is not None and steps[-1].source == "system" and "cut" in (steps[-1].message or "")
    assert len(read) <= 52, len(read)
