"""The exec log: every program started inside an agent's sandbox, traced by strace, plus the
third-party Python packages each Python process imported (sitecustomize hook).

The log is written from inside the sandbox, so a hostile agent could tamper with it; it
feeds usage metrics only, never a score.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lastexam.untrusted import iter_lines, read_capped

EXEC_DIR_IN_SANDBOX = "/run/lastexam/exec"
HOOK_DIR_IN_SANDBOX = "/opt/lastexam/usage-hook"
STRACE_LOG = "strace.log"
MAX_EVENTS = 5000  # events kept verbatim per trial; counts cover them all
MAX_LINE = 1 << 20  # longer lines are skipped (strace cuts each argv string at 256 bytes)
MAX_IMPORT_FILES = 20000
INTERPRETERS = {"python", "python3", "sh", "bash", "dash", "perl", "node", "ruby"}
_EXEC = re.compile(r'^(\d+)\s+([\d.]+)\s+execve(?:at)?\((?:[^,]*,\s*)?"((?:[^"\\]|\\.)*)",\s*\[(.*?)\](?:\.\.\.)?,.*\)\s*=\s*0\s*$')
_EXEC_END = re.compile(r"\)\s*=\s*0\s*$")
_EXIT = re.compile(r"^(\d+)\s+([\d.]+)\s+\+\+\+ (exited with (\d+)|killed by (\w+).*) \+\+\+$")
_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')


def trace_argv(argv: list[str]) -> list[str]:
    """Wrap an agent's command so that strace records every execve of it and its children.
    --seccomp-bpf stops the tracee only at execve, so short-lived processes cost little. -D
    makes the agent, not strace, the sandbox's main process: when the agent exits, the sandbox
    ends even if it left background processes (strace -f alone would wait for them)."""
    if shutil.which("strace") is None:
        return argv
    return [
        "strace", "-D", "-f", "-q", "--seccomp-bpf", "-e", "trace=execve,execveat", "-e", "signal=none",
        "-ttt", "-s", "256", "-o", f"{EXEC_DIR_IN_SANDBOX}/{STRACE_LOG}", "--", *argv,
    ]


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
    programs: Counter = field(default_factory=Counter)
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


def _unescape(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def parse(exec_dir: Path) -> ExecLog:
    log = ExecLog()
    path = exec_dir / STRACE_LOG
    last_by_pid: dict[int, ExecEvent] = {}
    # The folder is the agent's: files are read without following links or blocking, bounded.
    if path.is_file() and not path.is_symlink():
        log.traced = True
        for line in iter_lines(path, MAX_LINE):
            # _EXEC backtracks quadratically on a line that does not end like an exec's: the
            # log is the agent's to write, so only such lines reach it.
            m = _EXEC.match(line) if _EXEC_END.search(line) else None
            if m:
                event = ExecEvent(
                    pid=int(m[1]), time=float(m[2]), path=_unescape(m[3]),
                    argv=[_unescape(a) for a in _STR.findall(m[4])][:32],
                )
                log.total += 1
                log.programs[event.program] += 1
                if event.program.rstrip("0123456789.") in INTERPRETERS:
                    log.script_execs += 1
                if len(log.events) < MAX_EVENTS:
                    log.events.append(event)
                    last_by_pid[event.pid] = event
                else:
                    last_by_pid.pop(event.pid, None)
                continue
            m = _EXIT.match(line.strip())
            if m and int(m[1]) in last_by_pid:
                last_by_pid[int(m[1])].exit_status = m[4] if m[4] is not None else f"killed by {m[5]}"
    for f in sorted(exec_dir.glob("py-*.txt"))[:MAX_IMPORT_FILES]:
        raw = read_capped(f, 16384)
        if raw is not None:
            log.python_imports.update(raw.decode(errors="replace").split()[:200])
    return log
