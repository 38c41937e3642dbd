"""What a sandbox's cgroup costs on this machine: creating it (with its limits), moving a
process into it (every hierarchy: memory and pids on cgroup v1), and removing it.

    python benchmarks/cgroup_costs.py [--n 50] [--gap 0.1]      (as root)

Sandboxes start a few times a second, not back to back: moving a process between cgroups
takes a lock whose first taker after a quiet spell waits for an RCU grace period, so the
steps are spaced by --gap seconds (0: back to back, which hides that wait).

Prints the median of each step in milliseconds; run by hand (shared machines are noisy).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from lastexam.sandbox import cgroups


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--gap", type=float, default=0.1)
    args = parser.parse_args()
    manager = cgroups.detect()
    if manager is None:
        raise SystemExit("no writable cgroup hierarchy here (run as root)")
    steps: dict[str, list[float]] = {"create": [], "attach": [], "remove": []}
    for i in range(args.n):
        time.sleep(args.gap)
        t0 = time.perf_counter()
        cg = manager.create(f"bench-cgroup-costs-{os.getpid()}-{i}", 512 << 20, 64)
        t1 = time.perf_counter()
        proc = subprocess.Popen(["sleep", "5"])
        time.sleep(args.gap)
        t2 = time.perf_counter()
        for f in cg.procs_files:
            f.write_text(str(proc.pid))
        t3 = time.perf_counter()
        cg.kill_all()
        proc.wait()
        time.sleep(args.gap)
        t4 = time.perf_counter()
        cg.remove()
        t5 = time.perf_counter()
        steps["create"].append(t1 - t0)
        steps["attach"].append(t3 - t2)
        steps["remove"].append(t5 - t4)
    print(f"cgroup v{manager.version}, {len(manager.bases)} hierarchies, {args.n} cgroups, medians in ms:")
    for step, values in steps.items():
        print(f"  {step:>6} {statistics.median(values) * 1000:.2f}")


if __name__ == "__main__":
    main()
