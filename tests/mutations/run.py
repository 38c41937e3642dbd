"""Apply each mutation of the catalogue alone to a scratch copy of the repository, run the tests
it names there, and report whether they caught it. Run by scripts/mutations.sh:

    scripts/mutations.sh --all                  every mutation
    scripts/mutations.sh --sample N             N mutations, a different set each day
    scripts/mutations.sh --changed REF          those whose file changed since REF (git)
    scripts/mutations.sh NAME...                the named ones

--changed and --sample combine (the sample is drawn from the others). The named tests first run
unmutated (the baseline): they must pass, or nothing is measured. Exit 0 when every mutation
was caught, 1 when one was missed or its tests could not run, 2 on bad usage or a failed
baseline."""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from tests.mutations.catalogue import ROOT, Mutation, load

PYTEST = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header"]
EXIT_TESTS_FAILED = 1  # pytest's exit code when a test failed: the mutation was caught


@dataclass
class Outcome:
    mutation: Mutation
    verdict: str  # caught, missed, error
    seconds: float
    detail: str = ""


def fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def select(mutations: list[Mutation], args: argparse.Namespace) -> list[Mutation]:
    by_name = {m.name: m for m in mutations}
    if args.names:
        unknown = [n for n in args.names if n not in by_name]
        if unknown:
            fail(f"unknown mutation(s): {', '.join(unknown)} (see tests/mutations/*.toml)")
        return [by_name[n] for n in args.names]
    if args.all:
        return mutations
    chosen: list[Mutation] = []
    if args.changed:
        changed = changed_files(args.changed)
        chosen = [m for m in mutations if m.file in changed]
        print(f"changed since {args.changed}: {len(chosen)} mutation(s) of {len(changed)} changed file(s)")
    if args.sample:
        chosen += sample([m for m in mutations if m not in chosen], args.sample, args.day)
    return chosen


def changed_files(ref: str) -> set[str]:
    proc = subprocess.run(["git", "diff", "--name-only", ref, "--", "src"], cwd=ROOT,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"--changed {ref}: git diff failed: {proc.stderr.strip()}")
    return set(proc.stdout.split())


def sample(pool: list[Mutation], n: int, day: int) -> list[Mutation]:
    """n mutations of the pool: a window that moves by n each day over a fixed shuffled order
    (by a hash of the names, so that one day's sample spans several areas); over
    ceil(len(pool) / n) days every mutation is run."""
    ordered = sorted(pool, key=lambda m: hashlib.sha256(m.name.encode()).hexdigest())
    if not ordered:
        return []
    n = min(n, len(ordered))
    start = (day * n) % len(ordered)
    picked = [ordered[(start + i) % len(ordered)] for i in range(n)]
    print(f"sample of {n} for day {day}: {', '.join(m.name for m in picked)}")
    return picked


def copy_repo(dest: Path) -> None:
    """The repository's files as git sees them (tracked and untracked, not ignored)."""
    listing = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    for rel in filter(None, listing.decode().split("\0")):
        src = ROOT / rel
        if not os.path.lexists(src):
            continue  # deleted in the work tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)


def environment(copy: Path) -> dict[str, str]:
    """The copy's src first on the path (before the editable install), no bytecode written
    (a restored file must not be shadowed by the mutant's .pyc)."""
    return {**os.environ, "PYTHONPATH": str(copy / "src"), "PYTHONDONTWRITEBYTECODE": "1"}


def check_importable(copy: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", "import lastexam; print(lastexam.__file__)"],
                          cwd=copy, env=environment(copy), capture_output=True, text=True)
    where = proc.stdout.strip()
    if proc.returncode != 0 or not Path(where).is_relative_to(copy / "src"):
        fail(f"the copy's lastexam is not the one imported: {where or proc.stderr.strip()}")


def pytest(copy: Path, tests: list[str], log: Path, timeout: float) -> tuple[int | None, float]:
    """Exit code of pytest on these node ids in the copy (None: timed out), and its seconds."""
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, *PYTEST, *tests], cwd=copy, env=environment(copy),
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
    return code, time.monotonic() - started


def tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def run_one(m: Mutation, copy: Path, logs: Path, timeout: float) -> Outcome:
    path = copy / m.file
    original = path.read_bytes()
    try:
        m.apply(copy)
    except ValueError as e:
        return Outcome(m, "error", 0.0, str(e))
    try:
        code, seconds = pytest(copy, m.tests, logs / f"{m.name}.log", timeout)
    finally:
        path.write_bytes(original)
    if code == EXIT_TESTS_FAILED:
        return Outcome(m, "caught", seconds)
    if code == 0:
        return Outcome(m, "missed", seconds, "every named test passed with the mutation")
    why = f"timed out after {timeout:.0f} s" if code is None else f"pytest exited {code}"
    return Outcome(m, "error", seconds, why)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/mutations.sh", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help="mutations to run")
    parser.add_argument("--all", action="store_true", help="every mutation")
    parser.add_argument("--sample", type=int, metavar="N", help="N mutations, rotating by day")
    parser.add_argument("--changed", metavar="REF", help="mutations of files changed since REF")
    parser.add_argument("--day", type=int, default=datetime.datetime.now(datetime.UTC).date().toordinal(),
                        help="the day number that seeds --sample (default: today's, UTC)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy and logs")
    parser.add_argument("--list", action="store_true", help="print the selection and stop")
    args = parser.parse_args(argv)
    if not (args.names or args.all or args.sample or args.changed):
        parser.error("name mutations, or pass --all, --sample N or --changed REF")
    try:
        catalogue = load()
    except ValueError as e:
        fail(str(e))
    chosen = select(catalogue, args)
    if args.list or not chosen:
        for m in chosen:
            print(f"{m.name}\t{m.file}\t{' '.join(m.tests)}")
        print(f"{len(chosen)} mutation(s) selected")
        return 0

    scratch = Path(tempfile.mkdtemp(prefix="lastexam-mutations-"))
    copy, logs = scratch / "repo", scratch / "logs"
    logs.mkdir()
    started = time.monotonic()
    try:
        copy_repo(copy)
        check_importable(copy)
        tests = sorted({t for m in chosen for t in m.tests})
        print(f"baseline: {len(tests)} test node(s) unmutated in {copy}", flush=True)
        code, seconds = pytest(copy, tests, logs / "baseline.log", args.timeout * 2)
        if code != 0:
            print(f"baseline FAILED (pytest exit {code}, {seconds:.0f} s): the named tests must pass "
                  f"unmutated\n{tail(logs / 'baseline.log', 40)}")
            args.keep = True
            return 2
        print(f"baseline passed in {seconds:.0f} s", flush=True)
        outcomes = []
        for i, m in enumerate(chosen, 1):
            o = run_one(m, copy, logs, args.timeout)
            outcomes.append(o)
            print(f"[{i}/{len(chosen)}] {o.verdict:6} {o.seconds:6.0f} s  {m.name}", flush=True)
            if o.verdict != "caught":
                print(f"    {o.detail}; tests: {' '.join(m.tests)}")
                if (logs / f"{m.name}.log").exists():
                    print("    " + tail(logs / f"{m.name}.log").replace("\n", "\n    "))
                args.keep = True
        caught = sum(o.verdict == "caught" for o in outcomes)
        total = time.monotonic() - started
        print(f"\n{caught} caught of {len(outcomes)} in {total:.0f} s"
              f" ({datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC)")
        for o in outcomes:
            if o.verdict != "caught":
                print(f"  {o.verdict}: {o.mutation.name} ({o.mutation.guarantee})")
        return 0 if caught == len(outcomes) else 1
    finally:
        if args.keep:
            print(f"scratch copy and logs kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
