"""Red-team review: the write cap is a 0.5 s poll plus RLIMIT_FSIZE per file, and fallocate
allocates without writing (1 GB in about 20 ms on this machine's disk). Between two polls an
agent could allocate thousands of files, each under the per-file cap, on the host's disk: with
the default output_mb (2 GB a file) tens of GB, enough to fill the disk of the machine and
stop every run on it. Sandboxes now refuse fallocate (seccomp: EOPNOTSUPP); glibc's
posix_fallocate then writes zeros, as fast as any write, which the poll and the cap bound.
Here 200 files of 9 MB (under a 10 MB per-file cap) are asked for in one go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import command_run, make_task

pytestmark = pytest.mark.usefixtures("base_env_ready")

ATTACK = """
for i in $(seq 1 200); do
  if fallocate -l 9M /home/agent/f$i 2>/tmp/err; then echo "allocated f$i"; else echo "refused: $(head -c 200 /tmp/err)"; fi
done
echo '{"total": 1, "count": 1}' > /task/output/result.json
"""


def test_fallocate_cannot_outrun_the_write_cap(tmp_path: Path, sandbox: str) -> None:
    tasks = tmp_path / "tasks" / "other"
    tasks.mkdir(parents=True)
    make_task(tasks, "fallocate-flood", "column-total", ATTACK)
    toml = tasks / "fallocate-flood" / "task.toml"
    toml.write_text(toml.read_text() + "[limits]\noutput_mb = 5\n")
    proc = command_run(tmp_path / "tasks", tmp_path / "run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    trial = json.loads(proc.stdout)["trials"][0]
    log = (tmp_path / "run" / "trials" / trial["trial_id"] / "agent" / "agent.stdout.log").read_text()
    assert "allocated" not in log, log[:500]
    assert log.count("refused") == 200 and "not supported" in log, log[-500:]
    assert trial["status"] in ("completed", "agent_error") and trial["score"] == 0.0
