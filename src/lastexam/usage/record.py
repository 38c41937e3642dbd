"""Turn a trial's raw exec log into its usage record and the exec.jsonl artifact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lastexam.usage.declared import usage as declared_usage
from lastexam.usage.execlog import parse


def record_usage(exec_dir: Path, events_out: Path, software: list[str]) -> dict[str, Any]:
    log = parse(exec_dir)
    with open(events_out, "w", encoding="utf-8") as f:
        for e in log.events:
            f.write(json.dumps({"pid": e.pid, "time": e.time, "path": e.path, "argv": e.argv,
                                "exit": e.exit_status}) + "\n")
    declared = declared_usage(software, log)
    known = [v for v in declared.values() if v is not None]
    return {
        **log.summary(),
        "declared_software": declared,
        # True when every declared software whose use can be seen was used; None: unknowable
        "used_declared": all(known) if known else None,
        "script_share": round(log.script_execs / log.total, 4) if log.total else None,
    }
