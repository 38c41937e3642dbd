"""A sealed task's trial as stored: every file but trial.json in one age archive to the pool's
recipients, and a rubric in the store and trial.json without what could quote the task
(check names, messages, evidence, the grader's error). `--reveal` with a key reads them back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from lastexam.errors import LastexamError
from lastexam.layout import TRIAL
from lastexam.pool import bundle
from lastexam.store.models import CheckResult, GradeRecord, TrialRecord

SEALED_ARCHIVE = "sealed.tar.age"
SEALED_ERROR = "the grader failed (its message is sealed: show --reveal with the pool's key)"
SEALED_TEXT = "(sealed: in errors.json of the trial's sealed archive)"
ERRORS_FILE = "errors.json"  # the clear record's texts that redact_record drops, kept sealed
# "step: ExceptionType: message" (run/trial.py): the step and the type are the harness's words
HARNESS_PREFIX = re.compile(r"^[a-z_]+: [A-Za-z_][\w.]*(?=: )")


def seal_files(folder: Path, dest: Path, recipients: tuple[str, ...] | list[str],
               skip: frozenset[str] = frozenset()) -> None:
    """Every regular file under folder (but those in `skip`, relative paths) in one age
    archive at dest, streamed through a tar (outputs may be large) kept in the folder itself,
    as private as the files it packs (never beside dest: a run folder). Links and special
    files are not kept (nothing sealed is one)."""
    import pyrage

    from lastexam.pool.keys import parse_recipient

    files = []
    for dirpath, _, names in os.walk(folder):
        for name in names:
            p = Path(dirpath) / name
            rel = p.relative_to(folder).as_posix()
            if rel not in skip and p.is_file() and not p.is_symlink():
                files.append((rel, p))
    files.sort()
    plain = folder / f".{dest.name}.tar"
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        with plain.open("wb") as out:
            bundle.pack(files, out)
        pyrage.encrypt_file(str(plain), str(tmp), [parse_recipient(r) for r in recipients])
        os.replace(tmp, dest)
    finally:
        plain.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)


def seal_trial(folder: Path, record: TrialRecord, recipients: tuple[str, ...]) -> None:
    """A sealed task's trial as stored: the texts of its record that could quote the task or
    carry what the agent wrote (errors, the exec log's tamper reason) join its files in the
    sealed archive, and the record keeps their redacted form."""
    texts = {"run_error": record.run_error, "tamper_reason": record.usage.tamper_reason,
             "earlier": [e.error for e in record.policy.earlier] if record.policy else []}
    (folder / ERRORS_FILE).write_text(json.dumps(texts, indent=1))
    seal_trial_folder(folder, recipients)
    redact_record(record)


def seal_trial_folder(folder: Path, recipients: tuple[str, ...]) -> None:
    """Replace the files of a trial folder (all but trial.json) by one archive sealed to the
    pool's recipients."""
    from lastexam.untrusted import remove_tree

    keep = frozenset({TRIAL.record.as_posix(), SEALED_ARCHIVE})
    seal_files(folder, folder / SEALED_ARCHIVE, recipients, skip=keep)
    for child in folder.iterdir():
        if child.name not in keep:
            remove_tree(child)


def redact_record(record: TrialRecord) -> None:
    """What stays in clear of a sealed task's trial: its card's fields, status, score,
    timings, counts and costs. Names the task or the agent's files could give (checks,
    outputs, programs run) go; the sealed archive keeps them all."""
    record.grade = redact_grade(record.grade)
    record.missing_outputs = [f"output {i}" for i, _ in enumerate(record.missing_outputs, 1)]
    record.outputs = {k: v for k, v in record.outputs.items() if not isinstance(v, list | dict)}
    record.usage = record.usage.model_copy(update={
        "programs": {}, "python_imports": {},
        "tamper_reason": SEALED_TEXT if record.usage.tamper_reason else None})
    record.run_error = _redact_text(record.run_error)
    if record.policy is not None:
        earlier = [e.model_copy(update={"error": _redact_text(e.error) or ""})
                   for e in record.policy.earlier]
        record.policy = record.policy.model_copy(update={"earlier": earlier})


def _redact_text(text: str | None) -> str | None:
    """An error's kind (the step and the exception type, when the harness wrote them), not
    its message."""
    if not text:
        return text
    kind = HARNESS_PREFIX.match(text)
    return f"{kind.group(0)}: {SEALED_TEXT}" if kind else SEALED_TEXT


def redact_grade(grade: GradeRecord | None) -> GradeRecord | None:
    """Weights, gates and results stay (metrics and failure analysis need them); what a check
    is called and what it saw does not."""
    if grade is None:
        return None
    checks = [CheckResult(name=f"check {i}", weight=c.weight, gate=c.gate, passed=c.passed,
                          points=c.points) for i, c in enumerate(grade.checks, 1)]
    return grade.model_copy(update={"checks": checks,
                                    "error": SEALED_ERROR if grade.error else None})


def open_trial_folder(folder: Path, identity: Any) -> bundle.Files:
    """The sealed files of a trial folder, decrypted in memory."""
    import pyrage

    path = folder / SEALED_ARCHIVE
    try:
        data = pyrage.decrypt(path.read_bytes(), [identity])
    except OSError as e:
        raise LastexamError(f"cannot read the sealed trial: {e}", path=path) from None
    except pyrage.DecryptError as e:
        raise LastexamError(f"cannot decrypt the sealed trial: {e}", path=path) from None
    return bundle.members(data, path)


def revealed_checks(folder: Path, identity: Any) -> list[CheckResult] | None:
    """The full rubric of a sealed trial, from its grader's own result (grader/result.json);
    None when it was not graded."""
    import json

    files = open_trial_folder(folder, identity)
    raw = files.get(f"{TRIAL.grader.as_posix()}/result.json")
    if raw is None:
        return None
    try:
        data = json.loads(raw[0])
        return [CheckResult(**{k: c.get(k) for k in ("name", "weight", "gate", "passed", "points")},
                            message=c.get("message") or "", evidence=c.get("evidence") or {})
                for c in data["rubric"]["checks"]]
    except (ValueError, KeyError, TypeError) as e:
        raise LastexamError(f"the sealed grader result is malformed: {e}", path=folder) from None


class Revealer:
    """`--reveal` with a key: the full rubric of each sealed trial, read when asked."""

    def __init__(self, identity: Any):
        if identity is None:
            raise LastexamError("--reveal needs the pool's key: give --identity KEYFILE or set "
                                "LASTEXAM_IDENTITY")
        self.identity = identity

    def checks(self, trial_folder: Path) -> list[CheckResult] | None:
        return revealed_checks(trial_folder, self.identity)
