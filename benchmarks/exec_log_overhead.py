"""Overhead of the exec log on an exec-heavy workload: 1,000 short processes in a sandbox,
with and without strace recording every execve. Target: under 20% added wall time.

    python benchmarks/exec_log_overhead.py [--processes 1000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from lastexam.run.runner import new_run_id
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import Mount, SandboxLimits, SandboxRequest
from lastexam.sandbox.bwrap import BwrapProvider
from lastexam.usage.execlog import EXEC_DIR_IN_SANDBOX, parse, trace_argv


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    area = RunWorkArea.for_run(new_run_id("execbench"))
    area.prepare()
    provider = BwrapProvider(area.etc)
    provider.preflight()
    script = f"i=0; while [ $i -lt {args.processes} ]; do /bin/true; i=$((i+1)); done"
    times: dict[str, list[float]] = {"plain": [], "traced": []}
    with tempfile.TemporaryDirectory(dir=area.root) as d:
        exec_dir = Path(d)
        os.chmod(exec_dir, 0o777)
        for i in range(args.repeats):
            for mode in ("plain", "traced"):
                argv = ["/bin/sh", "-c", script]
                request = SandboxRequest(
                    name=f"execbench-{mode}-{i}",
                    argv=trace_argv(argv) if mode == "traced" else argv,
                    mounts=[Mount(exec_dir, EXEC_DIR_IN_SANDBOX, writable=True)],
                    env={"PATH": "/usr/bin:/bin"}, cwd="/",
                    limits=SandboxLimits(wall_s=300, memory_mb=1024, max_processes=64, watch_bytes=0),
                    stdout=Path(os.devnull), stderr=Path(os.devnull),
                )
                started = time.perf_counter()
                provider.run(request)
                times[mode].append(time.perf_counter() - started)
        execs = parse(exec_dir).total
    area.remove()
    plain, traced = statistics.median(times["plain"]), statistics.median(times["traced"])
    print(f"{args.processes} short processes, median of {args.repeats}: plain {plain:.3f} s, "
          f"traced {traced:.3f} s, overhead {100 * (traced / plain - 1):+.1f}% "
          f"(last traced run recorded {execs} execs)")


if __name__ == "__main__":
    main()
