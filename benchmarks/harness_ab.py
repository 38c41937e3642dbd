"""Two checkouts' harness overhead in alternation, with the floor between, on one machine.

    python benchmarks/harness_ab.py OTHER_SRC [--trials 200] [--pairs 4] [--concurrency 1] [--all-cpu]
    python benchmarks/harness_ab.py OTHER_SRC --one-trial [--pairs 12]

Runs harness_overhead.harness() for this checkout and for OTHER_SRC (another checkout's src/,
put first on PYTHONPATH), then the floor, `--pairs` times in alternation, each in a fresh
process. Runs minutes apart differ on a shared virtual machine, and on an ext4 without a
journal a run's removed files slow the next runs' new ones: alternation spreads both over the
two, and every run's folders are kept until the last run has ended (a run's 200 trial folders,
some 2,600 files, removed at once slowed the next run by tens of percent). Prints per run the
wall time per trial and the harness process's CPU (user, system); with --all-cpu (as root) also
the CPU of every process of the run (the harness, its sandboxes, the warm grading worker and
its gradings: a cpuacct cgroup of cgroup v1, benchmarks/validate_cpu.py's; not the kernel's
worker threads), where a change outside the harness process shows. This checkout and the other run
in the opposite order in every other pair; at the end, the medians and, per pair, the other's
figure over this one's. With --one-trial: whole
one-trial `lastexam run`s (harness_overhead.one_trial_cli), this checkout's then the other's,
`--pairs` times after one untimed run of each; their medians and the median difference.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ONE = """
import json, resource, sys, tempfile
from pathlib import Path
sys.path.insert(0, {bench!r})
import harness_overhead as h
from validate_cpu import CpuGroup
trials, k, what, group = {trials}, {k}, {what!r}, {group!r}
tmp = Path(tempfile.mkdtemp(dir={keep!r}))  # removed by main() after the last run
if what == "harness":
    h.harness(10, k, tmp, {{}})  # the warm-up run (imports, first run's files)
cg = CpuGroup.existing(group) if group else None
if cg:
    cg.join()  # the sandboxes and the warm worker started from here on are counted with it
c0 = cg.seconds() if cg else 0.0
r0 = resource.getrusage(resource.RUSAGE_SELF)
per = h.harness(trials, k, tmp, {{}}) if what == "harness" else h.floor(trials, k, tmp)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"ms": per * 1000, "user": (r1.ru_utime - r0.ru_utime) / trials * 1000,
                  "sys": (r1.ru_stime - r0.ru_stime) / trials * 1000,
                  "all": (cg.seconds() - c0) / trials * 1000 if cg else None}}))
"""


def measure(what: str, trials: int, k: int, pythonpath: str | None, keep: Path,
            group: str | None = None) -> dict[str, float]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = ONE.format(bench=str(HERE), trials=trials, k=k, what=what, keep=str(keep), group=group)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def one_trial(other_src: str, pairs: int) -> None:
    sys.path.insert(0, str(HERE))
    import harness_overhead as h

    with tempfile.TemporaryDirectory() as keep:
        for path in (None, other_src):  # untimed: bytecode written, files cached
            h.one_trial_cli(1, Path(keep), path, warm_up=False)
        this, other = [], []
        for _ in range(pairs):
            this += h.one_trial_cli(1, Path(keep), None, warm_up=False)
            other += h.one_trial_cli(1, Path(keep), other_src, warm_up=False)
    diff = statistics.median(a - b for a, b in zip(this, other, strict=True))
    print(f"one-trial run, {pairs} pairs: this {statistics.median(this):.3f} s, "
          f"other {statistics.median(other):.3f} s (median of the differences {diff:+.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("other_src", help="the other checkout's src/ folder")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--one-trial", action="store_true", help="time whole one-trial CLI runs")
    parser.add_argument("--all-cpu", action="store_true",
                        help="also the CPU of every process of each run (root: a cgroup)")
    args = parser.parse_args()
    if args.one_trial:
        one_trial(args.other_src, args.pairs)
        return
    print(f"{args.trials} trials per run at concurrency {args.concurrency}; ms per trial "
          "(the harness process's user and system CPU per trial"
          + ("; all: every process of the run" if args.all_cpu else "") + ")")
    sys.path.insert(0, str(HERE))
    from validate_cpu import CpuGroup

    if args.all_cpu and not CpuGroup.counts_sandboxes():
        parser.error("--all-cpu needs root and cgroup v1's cpuacct hierarchy (under cgroup v2 the "
                     "sandboxes run in cgroups of their own, outside the one measured)")
    group = CpuGroup(f"lastexam-harness-ab-{os.getpid()}") if args.all_cpu else None
    runs: dict[str, list[dict[str, float]]] = {"this": [], "other": [], "floor": []}
    try:
        with tempfile.TemporaryDirectory() as keep:
            for i in range(args.pairs):
                order = [("this", None), ("other", args.other_src)]
                for name, path in (order if i % 2 == 0 else order[::-1]) + [("floor", None)]:
                    r = measure("floor" if name == "floor" else "harness", args.trials,
                                args.concurrency, path, Path(keep), group.path.name if group else None)
                    runs[name].append(r)
                    every = f", all {r['all']:.1f}" if r.get("all") is not None else ""
                    print(f"pair {i + 1} {name:>5}: {r['ms']:7.1f}  (user {r['user']:.1f}, "
                          f"system {r['sys']:.1f}{every})", flush=True)
    finally:
        if group:
            group.remove()
    keys = ["ms", "user", "sys"] + (["all"] if args.all_cpu else [])
    for name, of_name in runs.items():
        print(f"median {name:>5}: " + ", ".join(f"{key} {statistics.median(r[key] for r in of_name):.2f}"
                                                for key in keys))
    for key in keys:
        ratios = [o[key] / t[key] for t, o in zip(runs["this"], runs["other"], strict=True)]
        print(f"other / this, {key}: median {statistics.median(ratios):.3f}, "
              f"this lower in {sum(x > 1 for x in ratios)} of {len(ratios)} pairs")


if __name__ == "__main__":
    main()
