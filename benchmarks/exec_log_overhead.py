"""Overhead of the exec log on an exec-heavy workload: 1,000 short processes in a sandbox,
with and without the exec-log shim (usage/execlog.c) preloaded, and, for comparison, under
strace -f (ptrace, stopping at each execve; when strace is installed). Target: under 20%.

    python benchmarks/exec_log_overhead.py [--processes 1000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from lastexam.run.runner import new_run_id
from lastexam.run.workspace import RunWorkArea
from lastexam.sandbox.base import Mount, SandboxLimits, SandboxRequest
from lastexam.sandbox.bwrap import BwrapProvider
from lastexam.usage.channel import ExecLogChannel
from lastexam.usage.execlog import parse
from lastexam.usage.shim import build_shim


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
    shim = build_shim()
    if shim is None:
        raise SystemExit("no C compiler: the exec-log shim cannot be built")
    modes = ["plain", "shim"] + (["strace"] if shutil.which("strace") else [])
    times: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(dir=area.root) as d:
        scratch = Path(d)
        os.chmod(scratch, 0o777)
        for i in range(args.repeats):
            for mode in modes:
                argv = ["/bin/sh", "-c", script]
                env = {"PATH": "/usr/bin:/bin"}
                mounts = [Mount(scratch, "/scratch", writable=True)]
                channel = ExecLogChannel(shim, scratch / f"exec-{mode}-{i}", provider.uid)
                if mode == "shim":
                    env.update(channel.env())
                    mounts += channel.mounts(area.usage_hook)
                    channel.open()
                if mode == "strace":
                    argv = ["strace", "-D", "-f", "-qq", "--seccomp-bpf", "-e", "trace=execve",
                            "-e", "signal=none", "-o", "/scratch/strace.log", "--", *argv]
                request = SandboxRequest(
                    name=f"execbench-{mode}-{i}", argv=argv, mounts=mounts, env=env, cwd="/",
                    limits=SandboxLimits(wall_s=300, memory_mb=1024, max_processes=64, watch_bytes=0),
                    stdout=Path(os.devnull), stderr=Path(os.devnull),
                )
                started = time.perf_counter()
                provider.run(request)
                times[mode].append(time.perf_counter() - started)
                if mode == "shim":
                    execs = parse(channel.close().source).total
    area.remove()
    plain = statistics.median(times["plain"])
    print(f"{args.processes} short processes in a sandbox, median of {args.repeats}: plain {plain:.3f} s")
    for mode in modes[1:]:
        m = statistics.median(times[mode])
        print(f"  {mode}: {m:.3f} s, overhead {100 * (m / plain - 1):+.1f}%")
    print(f"  (the last shim run recorded {execs} execs)")


if __name__ == "__main__":
    main()
