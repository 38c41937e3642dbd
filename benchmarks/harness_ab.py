"""Two checkouts' harness overhead in alternation, with the floor between, on one machine.

    python benchmarks/harness_ab.py OTHER_SRC [--trials 200] [--pairs 4] [--concurrency 1]
    python benchmarks/harness_ab.py OTHER_SRC --one-trial [--pairs 12]

Runs harness_overhead.harness() for this checkout and for OTHER_SRC (another checkout's src/,
put first on PYTHONPATH), then the floor, `--pairs` times in alternation, each in a fresh
process. Runs minutes apart differ on a shared virtual machine, and on an ext4 without a
journal a run's removed files slow the next runs' new ones: alternation spreads both over the
two, and every run's folders are kept until the last run has ended (a run's 200 trial folders,
some 2,600 files, removed at once slowed the next run by tens of percent). Prints per run the
wall time per trial and the harness process's CPU (user, system). With --one-trial: whole
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
trials, k, what = {trials}, {k}, {what!r}
tmp = Path(tempfile.mkdtemp(dir={keep!r}))  # removed by main() after the last run
if what == "harness":
    h.harness(10, k, tmp, {{}})  # the warm-up run (imports, first run's files)
r0 = resource.getrusage(resource.RUSAGE_SELF)
per = h.harness(trials, k, tmp, {{}}) if what == "harness" else h.floor(trials, k, tmp)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"ms": per * 1000, "user": (r1.ru_utime - r0.ru_utime) / trials * 1000,
                  "sys": (r1.ru_stime - r0.ru_stime) / trials * 1000}}))
"""


def measure(what: str, trials: int, k: int, pythonpath: str | None, keep: Path) -> dict[str, float]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = ONE.format(bench=str(HERE), trials=trials, k=k, what=what, keep=str(keep))
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
    args = parser.parse_args()
    if args.one_trial:
        one_trial(args.other_src, args.pairs)
        return
    print(f"{args.trials} trials per run at concurrency {args.concurrency}; ms per trial "
          "(the harness process's user and system CPU per trial)")
    with tempfile.TemporaryDirectory() as keep:
        for i in range(args.pairs):
            for name, path in (("this", None), ("other", args.other_src), ("floor", None)):
                r = measure("floor" if name == "floor" else "harness", args.trials, args.concurrency,
                            path, Path(keep))
                print(f"pair {i + 1} {name:>5}: {r['ms']:7.1f}  (user {r['user']:.1f}, "
                      f"system {r['sys']:.1f})", flush=True)


if __name__ == "__main__":
    main()
