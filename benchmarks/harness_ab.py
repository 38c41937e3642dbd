"""Two checkouts' harness overhead in alternation, with the floor between, on one machine.

    python benchmarks/harness_ab.py OTHER_SRC [--trials 200] [--pairs 4] [--concurrency 1]

Runs harness_overhead.harness() for this checkout and for OTHER_SRC (another checkout's src/,
put first on PYTHONPATH), then the floor, `--pairs` times in alternation, each in a fresh
process. Runs minutes apart differ on a shared virtual machine, and on an ext4 without a
journal a run's removed files slow the next runs' new ones: alternation spreads both over the
two, and every run's folders are kept until the last run has ended (a run's 200 trial folders,
some 2,600 files, removed at once slowed the next run by tens of percent). Prints per run the
wall time per trial and the harness process's CPU (user, system).
"""

from __future__ import annotations

import argparse
import json
import os
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("other_src", help="the other checkout's src/ folder")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
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
