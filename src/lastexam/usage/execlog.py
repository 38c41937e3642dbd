"""The exec log: every program started inside an agent's sandbox, with its arguments, start
time and exit status, recorded by a preloaded shim (execlog.c), plus the third-party Python
packages each Python process imported (sitecustomize hook).

The shim sees dynamically linked programs (statically linked ones are not recorded); it costs
a process start a few tens of microseconds, against about a third more for ptrace-based
tracing on exec-heavy work (benchmarks/exec_log_overhead.py). The log is written from inside
the sandbox, so a hostile agent could tamper with it or unset LD_PRELOAD; it feeds usage
metrics only, never a score.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lastexam.untrusted import iter_lines, read_capped

EXEC_DIR_IN_SANDBOX = "/run/lastexam/exec"
HOOK_DIR_IN_SANDBOX = "/opt/lastexam/usage-hook"
SHIM_IN_SANDBOX = "/opt/lastexam/execlog.so"
EXEC_LOG = "exec.log"
MAX_EVENTS = 5000  # events kept verbatim per trial; counts cover them all
MAX_LINE = 1 << 16  # the shim writes at most 4,352 bytes a line; longer ones are not its
MAX_IMPORT_FILES = 20000
MAX_ARGS = 32
INTERPRETERS = {"python", "python3", "sh", "bash", "dash", "perl", "node", "ruby"}


def launch_env(shim: Path | None) -> dict[str, str]:
    """The environment that turns the exec log on inside the sandbox (empty without a shim)."""
    if shim is None:
        return {}
    return {"LD_PRELOAD": SHIM_IN_SANDBOX, "LASTEXAM_EXEC_LOG": f"{EXEC_DIR_IN_SANDBOX}/{EXEC_LOG}"}


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

    def summary(self) -> dict:
        return {
            "traced": self.traced,
            "execs": self.total,
            "script_execs": self.script_execs,
            "programs": dict(self.programs.most_common(40)),
            "python_imports": dict(self.python_imports.most_common(40)),
        }


def parse(exec_dir: Path) -> ExecLog:
    log = ExecLog()
    path = exec_dir / EXEC_LOG
    by_pid: dict[int, ExecEvent] = {}
    # The folder is the agent's: files are read without following links or blocking, bounded.
    if path.is_file() and not path.is_symlink():
        log.traced = True
        for line in iter_lines(path, MAX_LINE):
            fields = line.rstrip("\n").split("\t")
            try:
                if fields[0] == "exec" and len(fields) == 6:
                    event = ExecEvent(
                        pid=int(fields[1]), time=float(fields[3]), path=fields[4],
                        argv=fields[5].split("\x1f")[:MAX_ARGS],
                    )
                elif fields[0] in ("exit", "signal") and len(fields) == 3:
                    found = by_pid.get(int(fields[1]))
                    if found is not None and found.exit_status is None:
                        found.exit_status = fields[2] if fields[0] == "exit" else f"killed by signal {fields[2]}"
                    continue
                else:
                    continue
            except ValueError:
                continue
            log.total += 1
            log.programs[event.program] += 1
            if event.argv and event.argv[0]:
                log.invoked[event.argv[0].rsplit("/", 1)[-1]] += 1
            if event.program.rstrip("0123456789.") in INTERPRETERS:
                log.script_execs += 1
            if len(log.events) < MAX_EVENTS:
                log.events.append(event)
                by_pid[event.pid] = event  # a later exec by the same process replaces it
    for f in sorted(exec_dir.glob("py-*.txt"))[:MAX_IMPORT_FILES]:
        raw = read_capped(f, 16384)
        if raw is not None:
            log.python_imports.update(raw.decode(errors="replace").split()[:200])
    return log
