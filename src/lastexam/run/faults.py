"""Fault points, for the fault-injection tests only (tests/faults): the harness calls point()
at the named moments of a run, and it does nothing unless the environment asks for it.

    LASTEXAM_FAULT_TRACE=FILE      append "<time> <phase> <run-id> <trial-id>" at each point
    LASTEXAM_FAULT_DELAY=stage=0.3,grade=0.5,...   sleep that long at those points

Phases: preflight, create (the run's store), stage, agent, collect, grade, record (artifacts),
commit (the store transaction), cleanup. A test kills the run at a chosen phase by waiting for
its line in the trace, inside the delay.
"""

from __future__ import annotations

import os
import time
from functools import cache

PHASES = ("preflight", "create", "stage", "agent", "collect", "grade", "record", "commit", "cleanup")


@cache
def _delays() -> dict[str, float]:
    spec = os.environ.get("LASTEXAM_FAULT_DELAY", "")
    pairs = (item.split("=", 1) for item in spec.split(",") if "=" in item)
    return {k.strip(): float(v) for k, v in pairs}


def point(phase: str, run_id: str = "", trial_id: str = "") -> None:
    trace = os.environ.get("LASTEXAM_FAULT_TRACE")
    if trace:
        line = f"{time.time():.3f} {phase} {run_id or '-'} {trial_id or '-'}\n".encode()
        fd = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    delay = _delays().get(phase) if "LASTEXAM_FAULT_DELAY" in os.environ else None
    if delay:
        time.sleep(delay)
