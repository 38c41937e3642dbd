"""Validation time per task and per gate: what `lastexam validate` costs a task author and CI.

    python benchmarks/validate_suite.py                        # from the manifest, nothing run
    python benchmarks/validate_suite.py --run TASK_FOLDER...   # validate these now and time them
    python benchmarks/validate_suite.py --each                 # one line per gate, not per task
    python benchmarks/validate_suite.py --markdown             # the table of docs/performance.md

Without --run it reads the per-gate `seconds` that `lastexam validate --record` wrote in
tasks/validation-manifest.json (or --manifest). With --run it calls `lastexam validate --json`
on the given folders (at --concurrency) and reads the seconds of that run. Either way it prints
each task's seconds per kind of gate, the task's total and the suite's total, and flags the
tasks over the budget of issue 19: a generator over 120 s or an oracle over 300 s. A gate's
seconds are wall time on whatever machine, and load, the validation ran on.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from lastexam.errors import LastexamError
from lastexam.validation.conformance import (
    BLAS_REPRODUCIBLE,
    GENERATE_REPRODUCES,
    MALFORMED_OUTPUTS,
    ORACLE_GATE,
)
from lastexam.validation.manifest import default_manifest_path, load_manifest

# column -> how a gate name is recognised (exact name, or a prefix ending in a space)
KINDS: dict[str, tuple[str, ...]] = {
    "oracle": (ORACLE_GATE,),
    "nop": ("nop scores 0",),
    "negative": ("negative fixture ",),
    "positive": ("positive fixture ",),
    "determinism": ("grading is deterministic",),
    "malformed": (MALFORMED_OUTPUTS,),
    "generate": (GENERATE_REPRODUCES,),
    "blas": (BLAS_REPRODUCIBLE,),
}
OTHER = "other"  # the static gates, the environment check and anything not above
COLUMNS = [*KINDS, OTHER]
BUDGET_S = {"generate": 120.0, "oracle": 300.0}


def kind_of(gate: str) -> str:
    for kind, marks in KINDS.items():
        if any(gate == m or (m.endswith(" ") and gate.startswith(m)) for m in marks):
            return kind
    return OTHER


@dataclass
class TaskTimes:
    task: str
    gates: dict[str, float]
    passed: bool = True
    by_kind: dict[str, float] = field(init=False)

    def __post_init__(self) -> None:
        self.by_kind = dict.fromkeys(COLUMNS, 0.0)
        for name, s in self.gates.items():
            self.by_kind[kind_of(name)] += s

    @property
    def total(self) -> float:
        return sum(self.gates.values())

    def over_budget(self) -> list[str]:
        return [f"{k} {self.by_kind[k]:.0f} s > {limit:.0f} s" for k, limit in BUDGET_S.items()
                if self.by_kind[k] > limit]


def from_manifest(path: Path) -> list[TaskTimes]:
    manifest = load_manifest(path)
    return [TaskTimes(t, dict(e.seconds)) for t, e in sorted(manifest.tasks.items())]


def from_validate_json(data: dict) -> list[TaskTimes]:
    return [TaskTimes(t["task"], {g["name"]: float(g["seconds"]) for g in t["gates"]}, t["passed"])
            for t in data["tasks"]]


def run_validate(folders: list[Path], concurrency: int) -> tuple[list[TaskTimes], float]:
    """`lastexam validate --json` on the folders: the times it reports, and its wall time."""
    exe = shutil.which("lastexam", path=str(Path(sys.executable).parent)) or shutil.which("lastexam")
    if exe is None:
        sys.exit("lastexam is not installed next to this python or on PATH")
    argv = [exe, "validate", "--json", "--concurrency", str(concurrency), *map(str, folders)]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - start
    try:
        return from_validate_json(json.loads(done.stdout)), wall
    except (json.JSONDecodeError, KeyError, TypeError):
        sys.exit(f"lastexam validate printed no usable JSON (exit {done.returncode}):\n{done.stderr[-2000:]}")


def table(rows: list[TaskTimes], markdown: bool) -> str:
    head = ["task", *COLUMNS, "total", "over budget"]
    body = [[r.task + ("" if r.passed else " (FAILED)"), *(f"{r.by_kind[c]:.1f}" for c in COLUMNS),
             f"{r.total:.1f}", "; ".join(r.over_budget())] for r in rows]
    sums = {c: sum(r.by_kind[c] for r in rows) for c in COLUMNS}
    body.append([f"all {len(rows)} tasks", *(f"{sums[c]:.1f}" for c in COLUMNS),
                 f"{sum(r.total for r in rows):.1f}", ""])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head))]
    fmt = [lambda s, w=w: s.ljust(w) for w in widths[:1]] + \
        [lambda s, w=w: s.rjust(w) for w in widths[1:-1]] + [lambda s: s]
    return "\n".join("  ".join(f(str(x)) for f, x in zip(fmt, row, strict=True)).rstrip()
                     for row in [head, *body])


def each_gate(rows: list[TaskTimes]) -> str:
    lines = [f"{r.task}\t{name}\t{s:.1f}" for r in rows for name, s in r.gates.items()]
    lines.append(f"total\t\t{sum(r.total for r in rows):.1f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", nargs="+", type=Path, metavar="TASK_FOLDER",
                    help="validate these folders now (every gate) instead of reading the manifest")
    ap.add_argument("--concurrency", type=int, default=2, help="with --run: tasks validated at once")
    ap.add_argument("--manifest", type=Path, default=None,
                    help="the manifest to read (default: tasks/validation-manifest.json)")
    ap.add_argument("--each", action="store_true", help="one tab-separated line per gate")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = ap.parse_args()
    if args.run:
        rows, wall = run_validate(args.run, args.concurrency)
        source = f"lastexam validate --json --concurrency {args.concurrency}: {wall:.1f} s wall"
    else:
        path = args.manifest or default_manifest_path()
        if not path.is_file():
            sys.exit(f"{path}: no such manifest")
        try:
            rows = from_manifest(path)
        except LastexamError as e:
            sys.exit(e.render())
        source = f"recorded in {path}"
    print(each_gate(rows) if args.each else table(rows, args.markdown))
    print(f"\nseconds per gate kind; {source}", file=sys.stderr)


if __name__ == "__main__":
    main()
