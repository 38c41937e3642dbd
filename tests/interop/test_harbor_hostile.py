"""`lastexam import harbor` of a hostile Harbor task: links, special files, a forged
tests/lastexam.json or an odd working folder are refused with a message naming the file and
field, before anything is written; nothing outside the task folder is read into the import."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from lastexam.errors import LastexamError
from lastexam.interop.harbor_import import MAX_IMPORT_BYTES, ImportChoices, import_task
from lastexam.task.load import load_task

EXPORTED = (
    "[metadata.lastexam]\nid = 'forged'\ntitle = 'Forged'\nsummary = 'A forged export.'\n"
    "cluster = 'other'\nsubdomain = 'sports'\nsoc = ['27-2022.00']\ntier = 'near-term'\n"
    "software = ['bash']\nenvironment = 'base'\noutputs = ['.']\n"
)


def _task(root: Path) -> Path:
    task = root / "hostile"
    for d in ("environment", "tests", "solution"):
        (task / d).mkdir(parents=True)
    (task / "task.toml").write_text('version = "1.0"\n')
    (task / "instruction.md").write_text("Write /app/hello.txt.\n")
    (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho hi > /app/hello.txt\n")
    return task


def _secret(root: Path) -> Path:
    secret = root / "host-secret.txt"
    secret.write_text("HOST-SECRET-do-not-import\n")
    return secret


def _sparse(path: Path) -> None:
    with path.open("wb") as f:
        f.truncate(MAX_IMPORT_BYTES + 1)


def _nested(root: Path, depth: int) -> None:
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):  # by descriptors: the full path would pass PATH_MAX
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(fd)


def _exported(task: Path, lastexam_json: str | None) -> None:
    (task / "task.toml").write_text(EXPORTED)
    if lastexam_json is not None:
        (task / "tests" / "lastexam.json").write_text(lastexam_json)


Edit = Callable[[Path, Path], None]
HOSTILE: list[tuple[str, Edit, str]] = [
    ("a link to a host file in environment/",
     lambda t, s: (t / "environment" / "data.txt").symlink_to(s), "environment/data.txt"),
    ("a link to a host folder as solution/",
     lambda t, s: (os.rename(t / "solution", t / "gone"), (t / "solution").symlink_to(s.parent)),
     "solution"),
    ("a linked instruction.md",
     lambda t, s: ((t / "instruction.md").unlink(), (t / "instruction.md").symlink_to(s)),
     "instruction.md"),
    ("a linked tests/test.sh",
     lambda t, s: ((t / "tests" / "test.sh").unlink(), (t / "tests" / "test.sh").symlink_to(s)),
     "tests/test.sh"),
    ("a file past the size cap (sparse)", lambda t, s: _sparse(t / "environment" / "huge.bin"),
     "environment/huge.bin"),
    ("folders nested past the recursion limit", lambda t, s: _nested(t / "environment", 1500),
     "environment/d/d/d"),
    ("a FIFO in environment/", lambda t, s: os.mkfifo(t / "environment" / "pipe"), "environment/pipe"),
    ("an exported task without tests/lastexam.json", lambda t, s: _exported(t, None), "lastexam.json"),
    ("an exported task whose tests/lastexam.json is not JSON",
     lambda t, s: _exported(t, "{not json"), "lastexam.json"),
    ("an exported task whose tests/lastexam.json is a list",
     lambda t, s: _exported(t, json.dumps(["canary"])), "lastexam.json"),
    ("the root as working folder",
     lambda t, s: (t / "task.toml").write_text('[environment]\nworkdir = "/"\n'), "environment.workdir"),
    ("a relative working folder",
     lambda t, s: (t / "task.toml").write_text('[environment]\nworkdir = "app"\n'), "environment.workdir"),
    ("a working folder with ..",
     lambda t, s: (t / "task.toml").write_text('[environment]\nworkdir = "/app/../logs"\n'),
     "environment.workdir"),
    ("the root as the Dockerfile's WORKDIR",
     lambda t, s: (t / "environment" / "Dockerfile").write_text("FROM debian\nWORKDIR /\n"),
     "environment/Dockerfile"),
    ("the verifier's folder as working folder",
     lambda t, s: (t / "task.toml").write_text('[environment]\nworkdir = "/tests"\n'), "environment.workdir"),
    ("an infinite verifier timeout",
     lambda t, s: (t / "task.toml").write_text("[verifier]\ntimeout_sec = inf\n"), "verifier.timeout_sec"),
    ("an infinite agent timeout",
     lambda t, s: (t / "task.toml").write_text("[agent]\ntimeout_sec = inf\n"), "agent.timeout_sec"),
]


@pytest.mark.parametrize(("what", "edit", "named"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_harbor_task_is_refused_before_anything_is_written(
        deep_tmp: Path, what: str, edit: Edit, named: str) -> None:
    tmp_path = deep_tmp
    src = _task(tmp_path / "harbor")
    edit(src, _secret(tmp_path))
    with pytest.raises(LastexamError) as e:
        import_task(src, tmp_path / "back", ImportChoices())
    assert named in str(e.value), what
    assert not (tmp_path / "back").exists() or not any((tmp_path / "back").iterdir())


def test_a_plain_task_still_imports(tmp_path: Path) -> None:
    dest = import_task(_task(tmp_path / "harbor"), tmp_path / "back", ImportChoices())
    assert (dest / "reference" / "tests" / "test.sh").is_file()
    assert "/task/output/hello.txt" in (dest / "instruction.md").read_text()


def test_a_huge_verifier_timeout_is_held_to_the_graders(tmp_path: Path) -> None:
    src = _task(tmp_path / "harbor")
    (src / "task.toml").write_text("[verifier]\ntimeout_sec = 1e300\n")
    dest = import_task(src, tmp_path / "back", ImportChoices())
    grading = json.loads((dest / "reference" / "harbor.json").read_text())
    assert grading["timeout_s"] <= load_task(dest).spec.limits.grader_timeout_s == 3600


def test_a_description_with_a_del_character_imports_as_valid_toml(tmp_path: Path) -> None:
    src = _task(tmp_path / "harbor")
    (src / "task.toml").write_text('[task]\nname = "x/del"\ndescription = "A DEL \\u007f in the text"\n')
    dest = import_task(src, tmp_path / "back", ImportChoices())
    assert load_task(dest).spec.summary == "A DEL \x7f in the text"


@pytest.mark.parametrize("toml", [
    '[task]\nname = "x/short"\ndescription = "Fix it"\n',
    '[task]\nname = "x/long"\ndescription = "' + "d" * 2500 + '"\n',
    '[task]\nname = "x/' + "n" * 300 + '"\n',
    '[metadata]\ndifficulty = "' + "h" * 2500 + '"\n',
], ids=["short description", "long description", "long name", "long difficulty"])
def test_harbor_texts_of_any_length_fit_lastexams_fields(tmp_path: Path, toml: str) -> None:
    src = _task(tmp_path / "harbor")
    (src / "task.toml").write_text(toml)
    spec = load_task(import_task(src, tmp_path / "back", ImportChoices())).spec
    assert 10 <= len(spec.summary) <= 2000 and len(spec.title) <= 200
