"""The exec log: every program started inside an agent's sandbox, with its arguments, start
time and exit status, recorded by a preloaded shim (execlog.c), plus the third-party Python
packages each Python process imported (sitecustomize hook). Both write to a FIFO the agent
cannot remove or replace (usage/channel.py); the harness keeps what comes out on the host.

The shim sees dynamically linked programs (statically linked ones are not recorded); it costs
a process start a few tens of microseconds, against about a third more for ptrace-based
tracing on exec-heavy work (benchmarks/exec_log_overhead.py). The agent can still write to
the FIFO: a line the shim or the hook cannot have written, or a flood past the cap, marks the
log `tampered`, which is reported as not having used the software. The log feeds usage
metrics only, never a score.
"""

from __future__ import annotations

import io
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from lastexam.untrusted import open_regular

MAX_EVENTS = 5000  # events kept verbatim per trial; counts cover them all
MAX_LINE = 4096  # the shim and the hook write less than PIPE_BUF a line
MAX_ARGS = 32
MAX_IMPORTS_PER_LINE = 200
INTERPRETERS = {"python", "python3", "sh", "bash", "dash", "perl", "node", "ruby"}
MODULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")


@dataclass
class ExecEvent:
    pid: int
    time: float
    path: str
    argv: list[str]
    exit_status: str | None = None

    @property
    def program(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass
class ExecLog:
    events: list[ExecEvent] = field(default_factory=list)
    total: int = 0
    programs: Counter = field(default_factory=Counter)  # by executable (after symlinks)
    invoked: Counter = field(default_factory=Counter)  # by the name it was called as (argv[0])
    script_execs: int = 0
    python_imports: Counter = field(default_factory=Counter)
    traced: bool = False
    tampered: str | None = None  # why the log cannot be trusted (None: it can)
    first_argv: list[str] | None = None  # of the first line: the sandbox's first process

    def mark_tampered(self, why: str) -> None:
        if self.tampered is None:
            self.tampered = why

    def summary(self) -> dict:
        return {
            "traced": self.traced,
            "tampered": self.tampered is not None,
            "tamper_reason": self.tampered,
            "execs": self.total,
            "script_execs": self.script_execs,
            "programs": dict(self.programs.most_common(40)),
            "python_imports": dict(self.python_imports.most_common(40)),
        }


def parse(source: Path | bytes | None, flooded: bool = False) -> ExecLog:
    """Read the host's copy of a trial's exec log: a file, or the bytes the drain kept in
    memory (None: the trial ran without the shim)."""
    log = ExecLog()
    if source is None:
        return log
    log.traced = True
    if flooded:
        log.mark_tampered("the exec log passed its size cap (flooded)")
    by_pid: dict[int, ExecEvent] = {}
    if isinstance(source, bytes):
        stream: BinaryIO = io.BytesIO(source)
    else:
        fd = open_regular(source)
        if fd is None:
            log.mark_tampered("the exec log is missing")
            return log
        stream = os.fdopen(fd, "rb")
    with stream as f:
        first = True
        while raw := f.readline(MAX_LINE + 1):
            if not raw.endswith(b"\n"):
                if len(raw) > MAX_LINE:
                    log.mark_tampered("a line longer than the shim writes")
                    while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                        pass
                elif not flooded:  # the cap may cut the last line of a flood
                    log.mark_tampered("a line cut short")
                continue
            line = raw.decode("utf-8", errors="replace")
            if not _read_line(line, log, by_pid, first):
                log.mark_tampered(f"a line the shim did not write: {line[:80]!r}")
            first = False
    return log


def _read_line(line: str, log: ExecLog, by_pid: dict[int, ExecEvent], first: bool) -> bool:
    fields = line.rstrip("\n").split("\t")
    try:
        if fields[0] == "exec" and len(fields) == 6:
            event = ExecEvent(pid=int(fields[1]), time=float(fields[3]), path=fields[4],
                              argv=fields[5].split("\x1f")[:MAX_ARGS])
            int(fields[2])
        elif fields[0] in ("exit", "signal") and len(fields) == 3:
            found = by_pid.get(int(fields[1]))
            int(fields[2])
            if found is not None and found.exit_status is None:
                found.exit_status = fields[2] if fields[0] == "exit" else f"killed by signal {fields[2]}"
            return True
        elif fields[0] == "py" and len(fields) == 3:
            int(fields[1])
            names = fields[2].split(" ")
            if not all(MODULE.fullmatch(n) for n in names):
                return False
            log.python_imports.update(names[:MAX_IMPORTS_PER_LINE])
            return True
        else:
            return False
    except ValueError:
        return False
    if first:
        log.first_argv = event.argv
    log.total += 1
    log.programs[event.program] += 1
    if event.argv and event.argv[0]:
        log.invoked[event.argv[0].rsplit("/", 1)[-1]] += 1
    if event.program.rstrip("0123456789.") in INTERPRETERS:
        log.script_execs += 1
    if len(log.events) < MAX_EVENTS:
        log.events.append(event)
        by_pid[event.pid] = event  # a later exec by the same process replaces it
    return True
