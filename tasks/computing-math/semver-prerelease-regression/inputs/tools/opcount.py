"""Count the bytecode instructions that semverkit's own code executes for a workload (its
files, and code generated at run time for it, such as dataclass methods).

    python3 tools/opcount.py            # runs tools/bench.py's workload, prints the count

The count is deterministic for one Python version (3.11 here): unlike wall time it does not
depend on the machine or its load, so the performance budget in CONTRIBUTING.md is stated in it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import semverkit

PACKAGE_DIR = str(Path(semverkit.__file__).resolve().parent)


def count_opcodes(workload: Callable[[], Any]) -> int:
    total = 0
    own: dict[str, bool] = {}

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal total
        if event == "opcode":
            total += 1
        return local

    def global_trace(frame: FrameType, event: str, arg: Any) -> Any:
        name = frame.f_code.co_filename
        inside = own.get(name)
        if inside is None:
            inside = own[name] = (str(Path(name).resolve()).startswith(PACKAGE_DIR)
                                  or not Path(name).is_file())
        if not inside:
            return None
        frame.f_trace_opcodes = True
        return local

    sys.settrace(global_trace)
    try:
        workload()
    finally:
        sys.settrace(None)
    return total


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    import bench

    print(count_opcodes(bench.workload))
