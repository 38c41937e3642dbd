"""Harbor's verifier of a task exported by lastexam (tests/verify.py, run by tests/test.sh after
the agent): grades the agent's /task/output with the task's own grader and lastexam's grading
library, both under /tests, which Harbor copies into the container only for verification.

Writes /logs/verifier/reward.json ({"reward": score, "full_pass": 0 or 1}) and the whole rubric
to /logs/verifier/rubric.json. A grader that fails writes no reward: Harbor then records the
verification as failed, as lastexam records a grader_error, rather than a score of 0.
Standard library only: it runs under the task environment's python3."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK = HERE / "task"  # grader.py, reference/, the pristine inputs/, probes.json
LIB = HERE / "lib"  # lastexam/grading
OUTPUT = Path("/task/output")
INPUTS = Path("/task/inputs")
LOGS = Path("/logs/verifier")
MAX_DEPTH = 32  # as lastexam's own snapshot of a trial's output


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def inputs_state(pristine: Path, staged: Path) -> dict[str, str]:
    state = {}
    for p in sorted(pristine.rglob("*")):
        if p.is_file():
            rel = p.relative_to(pristine).as_posix()
            seen = staged / rel
            state[rel] = ("missing" if not seen.exists() else
                          "not-regular" if seen.is_symlink() or not seen.is_file() else sha256(seen))
    return state


def snapshot(src: Path, dest: Path) -> None:
    """The regular files under src, copied to dest with their folders: what lastexam grades.
    Links are left out (one may point into /tests, which is there only while verifying), and
    so are devices, FIFOs, sockets and folders nested deeper than MAX_DEPTH."""
    stack = [(Path(), 0)]
    while stack:
        rel, depth = stack.pop()
        dest.joinpath(rel).mkdir(exist_ok=True)
        try:
            entries = list(os.scandir(src / rel))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 < MAX_DEPTH:
                    stack.append((rel / entry.name, depth + 1))
                continue
            try:
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as f:
                if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    with open(dest / rel / entry.name, "wb") as out:
                        shutil.copyfileobj(f, out)


def main(output: Path = OUTPUT, inputs: Path = INPUTS, logs: Path = LOGS) -> int:
    meta = json.loads((HERE / "lastexam.json").read_text())
    probes = TASK / "probes.json"
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        snapshot(output, Path(tmp) / "output")
        context = {
            "output": str(Path(tmp) / "output"), "reference": str(TASK / "reference"),
            "inputs": str(TASK / "inputs"), "task": str(TASK), "scratch": str(scratch),
            "canary": meta["canary"],
            "inputs_after": inputs_state(TASK / "inputs", inputs),
            "inputs_pristine": None,
            "probe_answers": json.loads(probes.read_text()) if probes.is_file() else {},
        }
        (Path(tmp) / "context.json").write_text(json.dumps(context))
        result_path = Path(tmp) / "result.json"
        env = {**os.environ, "PYTHONPATH": str(LIB), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("LASTEXAM_RESULT_FD", None)
        proc = subprocess.run(
            [sys.executable, "-B", str(LIB / "lastexam" / "grading" / "harness.py"),
             str(Path(tmp) / "context.json"), str(result_path)],
            cwd=scratch, env=env, timeout=meta["grader_timeout_s"],
        )
        result = json.loads(result_path.read_text()) if result_path.is_file() else {
            "status": "error", "error": f"the grading harness wrote no result (exit {proc.returncode})"}
    logs.mkdir(parents=True, exist_ok=True)
    if result.get("status") == "ok" and result.get("pending_probes"):
        result = {"status": "error", "error": "the grader asks model probes with no recorded answer"}
    (logs / "rubric.json").write_text(json.dumps(result, indent=1))
    if result.get("status") != "ok":
        print(result.get("error", "grader failed"), file=sys.stderr)
        return 1
    sys.path.insert(0, str(LIB))
    from lastexam.grading.rubric import Check, full_pass_of, score_of

    checks = [Check(**c) for c in result["rubric"]["checks"]]
    reward = {"reward": score_of(checks), "full_pass": 1.0 if full_pass_of(checks) else 0.0}
    (logs / "reward.json").write_text(json.dumps(reward))
    print(json.dumps(reward))
    return 0


if __name__ == "__main__":
    sys.exit(main())
