"""Grader of a task imported from Harbor (written by `lastexam import harbor`): runs the Harbor
verifier, reference/tests/test.sh, on a copy of the agent's output, and scores its reward.

Harbor runs test.sh in the agent's container, with the tests at /tests and the reward written
to /logs/verifier/. Here the same script runs in the grading sandbox: the container paths it
names (reference/harbor.json: /tests, /logs and the task's working folder) are rewritten, in
every text file of the tests, to folders of the grading scratch. The reward (reward.json's
"reward", else reward.txt) is one weighted check that passes at 1.0."""

import json
import os
import re
import shutil
import subprocess

from lastexam.grading import GradeContext, Outcome, Rubric, near

TAIL = 600


def _rewrite(root, mapping):
    pattern = re.compile("(?<![\\w./-])(" + "|".join(
        re.escape(p) for p in sorted(mapping, key=len, reverse=True)) + ")(?![\\w.-])")
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            new = pattern.sub(lambda m: mapping[m.group(1)], text)
            if new != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)


def _writable(root):
    """Copies of read-only mounts keep their modes: the verifier may write beside its files."""
    for dirpath, _, names in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in names:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755 if os.access(path, os.X_OK) else 0o644)


def _reward(logs):
    try:
        with open(os.path.join(logs, "reward.json"), encoding="utf-8") as f:
            data = json.load(f)
        return float(data["reward"] if isinstance(data, dict) else data)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(logs, "reward.txt"), encoding="utf-8") as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    cfg = ctx.reference_json("harbor.json")
    root = str(ctx.scratch / "harbor")
    tests, logs, work = (os.path.join(root, d) for d in ("tests", "logs", "work"))
    shutil.copytree(str(ctx.reference / "tests"), tests)
    for sub in cfg.get("inputs_in_tests", []):  # the pristine inputs, kept once in inputs/
        shutil.copytree(str(ctx.inputs), os.path.join(tests, sub))
    os.makedirs(os.path.join(logs, "verifier"))
    try:
        shutil.copytree(str(ctx.output), work, symlinks=True)
    except (OSError, shutil.Error) as e:
        r.gate("the output folder can be copied", Outcome(False, str(e)[:TAIL]))
        return r
    for d in (tests, work):
        _writable(d)
    roles = {"output": work, "inputs": str(ctx.inputs)}
    mapping = {"/tests": tests, "/logs": logs, **{p: roles[role] for p, role in cfg["paths"].items()}}
    _rewrite(tests, mapping)
    env = {**os.environ, "TEST_DIR": tests, "HOME": str(ctx.scratch)}
    try:
        proc = subprocess.run(["bash", os.path.join(tests, "test.sh")], cwd=work, env=env,
                              capture_output=True, text=True, errors="replace",
                              timeout=cfg["timeout_s"])
        ran = f"test.sh exited {proc.returncode}: {(proc.stdout + proc.stderr)[-TAIL:]}"
    except subprocess.TimeoutExpired:
        ran = f"test.sh ran past {cfg['timeout_s']} s"
    reward = _reward(os.path.join(logs, "verifier"))
    r.gate("the Harbor verifier wrote a reward", Outcome(reward is not None, ran))
    r.check("Harbor verifier reward", 1, near(reward, 1.0, abs=1e-9))
    return r
