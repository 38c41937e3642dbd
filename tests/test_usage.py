"""The exec log: programs run in the sandbox, short-lived ones included, Python imports, and
whether the declared software was used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_metrics import row

from conftest import run_command_agent, trial_dir
from lastexam.analysis.metrics import software_usage
from lastexam.usage.declared import signals_for, usage
from lastexam.usage.execlog import parse

SAMPLE = (
    "exec\t10\t1\t1795970972.788775\t/usr/bin/dash\tsh\x1f-c\x1fls /x; samtools view a.bam\n"
    "exec\t11\t10\t1795970972.792794\t/usr/bin/ls\tls\x1f/x\n"
    "exit\t11\t2\n"
    "exec\t12\t10\t1795970972.797638\t/usr/bin/samtools\tsamtools\x1fview\x1fa \"quoted\" arg\n"
    "signal\t12\t9\n"
    "exec\t13\t10\t1795970972.8\t/usr/bin/mawk\tawk\x1fBEGIN{}\n"
    "py\t5\trdkit numpy\n"
    "exit\t10\t0\n"
)


def test_parse_exec_log(tmp_path: Path) -> None:
    (tmp_path / "exec.log").write_text(SAMPLE)
    log = parse(tmp_path / "exec.log")
    assert log.traced and log.total == 4 and log.tampered is None
    assert log.first_argv == ["sh", "-c", "ls /x; samtools view a.bam"]
    assert [e.program for e in log.events] == ["dash", "ls", "samtools", "mawk"]
    assert [e.exit_status for e in log.events] == ["0", "2", "killed by signal 9", None]
    assert log.events[2].argv == ["samtools", "view", 'a "quoted" arg']
    assert log.script_execs == 1
    assert usage(["samtools", "RDKit", "ngspice", "awk", "Unheard-of CAD"], log) == {
        "samtools": True, "RDKit": True, "ngspice": False, "awk": True, "Unheard-of CAD": None,
    }


def test_untraced_usage_is_unknown() -> None:
    assert usage(["samtools"], parse(None)) == {"samtools": None}


@pytest.mark.parametrize("bad", [
    "not a line of the shim\n", "exec\tx\t1\t2\t/usr/bin/ls\tls\n", "py\t5\t../etc x\n",
    "exit\t10\n", "exec\t9\t1\t2.0\t/usr/bin/ls",  # the last one cut short
])
def test_a_line_the_shim_did_not_write_marks_the_log_tampered(bad: str, tmp_path: Path) -> None:
    (tmp_path / "exec.log").write_text(SAMPLE + bad)
    log = parse(tmp_path / "exec.log")
    assert log.tampered
    # A tampered log proves nothing: the software counts as not used, even with signals seen.
    assert usage(["samtools", "Unheard-of CAD"], log) == {"samtools": False, "Unheard-of CAD": False}


def test_a_flooded_log_is_tampered(tmp_path: Path) -> None:
    (tmp_path / "exec.log").write_text(SAMPLE + "exec\t9\t1\t2.0\t/usr/bin/l")
    log = parse(tmp_path / "exec.log", flooded=True)
    assert log.tampered == "the exec log passed its size cap (flooded)" and log.total == 4


def test_every_suite_software_name_is_known() -> None:
    """Each software a public task declares must map to exec-log signals, or its use is unknown."""
    from lastexam.paths import default_tasks_dir
    from lastexam.task.load import discover_tasks

    tasks = discover_tasks([default_tasks_dir()])
    unknown = sorted({s for t in tasks for s in t.spec.software if signals_for(s) is None})
    assert unknown == []


@pytest.mark.usefixtures("base_env_ready")
def test_exec_log_in_a_real_trial(tmp_path: Path) -> None:
    cmd = (
        "for i in 1 2 3 4 5; do /bin/true; done; "
        "awk 'BEGIN{print 1}' >/dev/null; python3 -c 'import openpyxl'"
    )
    trial = run_command_agent(cmd, tmp_path / "run")
    record = json.loads((trial_dir(tmp_path / "run", trial) / "trial.json").read_text())
    used = record["usage"]
    assert used["traced"] and used["programs"]["true"] == 5
    assert used["declared_software"] == {"awk": True} and used["used_declared"] is True
    assert used["python_imports"].get("openpyxl") == 1
    events = (trial_dir(tmp_path / "run", trial) / "agent" / "exec.jsonl").read_text().splitlines()
    assert len(events) == used["execs"] >= 8


@pytest.mark.usefixtures("base_env_ready")
def test_the_agent_cannot_read_the_exec_log_channel(tmp_path: Path) -> None:
    """Reading the FIFO from inside would take events before the host drains them: hide the
    agent's programs, or the sandbox's first process (which the harness would read as its own
    fault). The sandbox may only write to it."""
    cmd = (
        "timeout 2 cat /run/lastexam/exec/exec.fifo > /tmp/stolen 2>/tmp/err; echo READ rc=$?; "
        "head -c 300 /tmp/err; for i in 1 2 3; do /bin/true; done"
    )
    trial = run_command_agent(cmd, tmp_path / "run")
    folder = trial_dir(tmp_path / "run", trial)
    log = (folder / "agent" / "agent.stdout.log").read_text()
    assert "READ rc=1" in log and "Permission denied" in log, log[-500:]
    used = json.loads((folder / "trial.json").read_text())["usage"]
    assert trial["status"] == "completed" and used["traced"] and not used["tampered"], used
    assert used["programs"]["true"] == 3


def test_software_usage_metric() -> None:
    rows = [
        row("A", 1, True, 1.0, used_software=True, script_share=0.5),
        row("B", 1, False, 0.2, used_software=False, script_share=1.0),
        row("C", 1, True, 1.0, used_software=True, script_share=0.0),
        row("D", 1, False, 0.0, used_software=None),
    ]
    u = software_usage(rows)["a"]
    assert u["known"] == 3 and u["used_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert u["fpr_used"] == 1.0 and u["fpr_not_used"] == 0.0
    assert u["script_share"] == 0.5


def test_channel_keeps_lines_and_caps_a_flood(tmp_path: Path) -> None:
    import os

    from lastexam.usage.channel import FIFO_NAME, ExecLogChannel

    channel = ExecLogChannel(Path("/bin/true"), tmp_path / "exec", uid=None, max_bytes=1000)
    channel.open()
    fd = os.open(channel.fifo_dir / FIFO_NAME, os.O_WRONLY)
    line = b"exec\t1\t0\t1.0\t/bin/sh\tsh\n"
    os.write(fd, line)
    os.write(fd, b"x" * 5000)
    os.close(fd)
    result = channel.close()
    assert result.flooded and result.bytes == 1000 and result.discarded == len(line) + 5000 - 1000
    assert parse(result.source, flooded=True).total == 1
    assert result.data is not None and not result.log.exists()  # under 1 MB: kept in memory


def test_channel_spills_a_long_log_to_the_host_file_whole(tmp_path: Path, monkeypatch) -> None:
    import os

    from lastexam.usage import channel as channel_mod

    monkeypatch.setattr(channel_mod, "MEMORY_BYTES", 100)
    channel = channel_mod.ExecLogChannel(Path("/bin/true"), tmp_path / "exec", uid=None)
    channel.open()
    fd = os.open(channel.fifo_dir / channel_mod.FIFO_NAME, os.O_WRONLY)
    lines = [f"exec\t{i}\t0\t1.0\t/bin/true\ttrue\n".encode() for i in range(1, 40)]
    for line in lines:
        os.write(fd, line)
    os.close(fd)
    result = channel.close()
    assert result.data is None and result.log.read_bytes() == b"".join(lines)
    assert result.source == result.log and parse(result.source).total == len(lines)


def test_spilled_log_is_written_whole_through_short_writes(tmp_path: Path, monkeypatch) -> None:
    """A write that takes part of the bytes is continued; one that takes none is an error."""
    import io

    from lastexam.usage import channel as channel_mod

    class Short(io.BytesIO):
        def __init__(self, most: int) -> None:
            super().__init__()
            self.most = most

        def write(self, data) -> int:
            return super().write(bytes(data[:self.most]))

    short = Short(3)
    monkeypatch.setattr(channel_mod, "MEMORY_BYTES", 10)
    monkeypatch.setattr(channel_mod, "open", lambda *a, **k: short, raising=False)  # the spill's file
    channel = channel_mod.ExecLogChannel(Path("/bin/true"), tmp_path / "exec", uid=None)
    channel._keep(b"0123456789")  # in memory
    channel._keep(b"abcdefghij")  # spilled: the held bytes, then the new ones
    assert short.getvalue() == b"0123456789abcdefghij"
    short.most = 0
    with pytest.raises(OSError, match="took no more bytes"):
        channel._keep(b"klm")


def test_usage_mounts_cannot_be_hidden() -> None:
    from lastexam.sandbox.base import Mount
    from lastexam.usage.channel import ExecLogChannel, check_not_hidden

    usage_mounts = ExecLogChannel(Path("/x/shim.so"), Path("/x/exec"), None).mounts(Path("/x/hook"))
    # Mounted before them, a parent cannot hide them; beside them, nothing can.
    for fine in ("/opt/lastexam", "/run/lastexam", "/run"):
        check_not_hidden([Mount(Path("/a"), fine), *usage_mounts, Mount(Path("/b"), "/opt/x")])
    for hiding in ("/run", "/run/lastexam", "/", "/run/lastexam/usage/hook/x", "/run/lastexam/exec"):
        with pytest.raises(ValueError, match="would hide"):
            check_not_hidden([*usage_mounts, Mount(Path("/a"), hiding)])


def test_a_sandbox_whose_first_process_is_not_logged_is_a_harness_fault(tmp_path: Path) -> None:
    """The shim reports the sandbox's first process before any of the agent's code runs: if
    that line is missing, the shim was not loaded (as when a mount hid it)."""
    from lastexam.usage.channel import ChannelResult
    from lastexam.usage.record import ShimNotLoaded, record_usage

    log = tmp_path / "exec.log"
    log.write_text(SAMPLE)
    used = record_usage(ChannelResult(1, 0, log), tmp_path / "e.jsonl", ["samtools"], "sh")
    assert used["declared_software"] == {"samtools": True} and not used["tampered"]
    for text, argv0 in (("", "sh"), (SAMPLE, "/bin/bash")):
        log.write_text(text)
        with pytest.raises(ShimNotLoaded, match="did not report the sandbox's first process"):
            record_usage(ChannelResult(1, 0, log), tmp_path / "e.jsonl", ["samtools"], argv0)
    # Without a shim (no compiler) there is no log to check: usage is unknown.
    assert record_usage(None, tmp_path / "e.jsonl", ["samtools"], "sh")["used_declared"] is None


def test_a_log_the_host_cannot_keep_is_drained_and_a_harness_fault(tmp_path: Path) -> None:
    import os
    import threading

    from lastexam.sandbox.base import SandboxError
    from lastexam.usage.channel import FIFO_NAME, ExecLogChannel
    from lastexam.usage.record import record_usage

    channel = ExecLogChannel(Path("/bin/true"), tmp_path / "exec", uid=None)
    channel.log = Path("/dev/full")  # every write fails: ENOSPC
    channel.open()
    fd = os.open(channel.fifo_dir / FIFO_NAME, os.O_WRONLY)
    # Three times the FIFO's buffer: the writer would block for ever if nobody drained it.
    writer = threading.Thread(target=lambda: [os.write(fd, b"x" * 4000 + b"\n") for _ in range(800)],
                              daemon=True)
    writer.start()
    writer.join(60)
    assert not writer.is_alive(), "the writer blocked: the FIFO was not drained"
    os.close(fd)
    result = channel.close()
    assert result.error and "No space left" in result.error
    with pytest.raises(SandboxError, match="cannot write the exec log on the host"):
        record_usage(result, tmp_path / "e.jsonl", ["samtools"], "sh")
