"""CPU-seconds of validating each task alone: where the suite's CPU goes.

    sudo python benchmarks/validate_cpu.py [TASK_FOLDER ...]    # default: every task of tasks/

Runs `lastexam validate <task> --json`, one task at a time, each in a cgroup of its own (the
cpuacct controller of cgroup v1, or cpu.stat of cgroup v2), and prints each task's CPU-seconds
(every process it started: sandboxes, tools, gradings), its wall time and whether it passed,
costliest first, then the totals. The full suite's validation at concurrency 2 is CPU-bound on a
2-core machine (docs/performance.md): its wall time is about half its CPU-seconds, so this table
says which tasks to make cheaper. Needs root (it makes cgroups); run by hand.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CGROUP = Path("/sys/fs/cgroup")


class CpuGroup:
    """A cgroup that a child joins before it runs; `seconds()` is the CPU of all in it."""

    @staticmethod
    def counts_sandboxes() -> bool:
        """Whether the sandboxes a member starts stay counted: cgroup v1's cpuacct hierarchy,
        which they never leave (under v2 they move to cgroups of their own). Root only."""
        return os.geteuid() == 0 and (CGROUP / "cpuacct" / "cpuacct.usage").is_file()

    def __init__(self, name: str, make: bool = True) -> None:
        self.v1 = (CGROUP / "cpuacct" / "cpuacct.usage").is_file()
        self.path = (CGROUP / "cpuacct" / name) if self.v1 else (CGROUP / name)
        if make:
            self.path.mkdir()

    @classmethod
    def existing(cls, name: str) -> CpuGroup:
        """One made by another process (benchmarks/harness_ab.py's runs join the script's)."""
        return cls(name, make=False)

    def join(self) -> None:  # in the child, before exec
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        if self.v1:
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6

    def remove(self) -> None:
        for _ in range(50):  # the last processes may take a moment to leave
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)
        print(f"could not remove {self.path}: remove it by hand", file=sys.stderr)


def validate(task: Path) -> tuple[float, float, bool]:
    group = CpuGroup(f"lastexam-validate-cpu-{os.getpid()}")
    try:
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "lastexam", "validate", str(task), "--json"],
                              cwd=ROOT, capture_output=True, check=False, preexec_fn=group.join)
        return group.seconds(), time.monotonic() - started, proc.returncode == 0
    finally:
        group.remove()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tasks", nargs="*", type=Path)
    args = parser.parse_args()
    tasks = args.tasks or sorted(p.parent for p in (ROOT / "tasks").glob("*/*/task.toml"))
    rows = []
    for i, task in enumerate(tasks, 1):
        cpu, wall, ok = validate(task)
        rows.append((cpu, wall, ok, task.name))
        print(f"[{i}/{len(tasks)}] {task.name}: {cpu:.1f} CPU-s, {wall:.1f} s{'' if ok else ', FAILED'}",
              file=sys.stderr)
    print(f"{'task':<34} {'CPU-s':>7} {'wall s':>7}  passed")
    for cpu, wall, ok, name in sorted(rows, reverse=True):
        print(f"{name:<34} {cpu:>7.1f} {wall:>7.1f}  {'yes' if ok else 'NO'}")
    print(f"{'all ' + str(len(rows)) + ' tasks':<34} {sum(r[0] for r in rows):>7.1f} {sum(r[1] for r in rows):>7.1f}  "
          f"{sum(r[2] for r in rows)} of {len(rows)}")


if __name__ == "__main__":
    main()
