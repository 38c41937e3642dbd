"""A sealed pool opened with a key: its tasks as Task objects that plan, run and grade like task
folders, each part decrypted only where a trial or a validation needs it."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from lastexam.config_file import load_model
from lastexam.errors import LastexamError, describe_validation_error
from lastexam.pool import bundle
from lastexam.pool.canary import canary_key
from lastexam.pool.keys import recipient_of
from lastexam.pool.model import PART_FILES, PARTS, POOL_FILE, PoolManifest, TaskCard, utc_day
from lastexam.task.load import Task, tree_hash
from lastexam.task.spec import TaskSpec

GRADING_PARTS = ("grader.py", "reference", "solution")  # of the hidden part, for grading


def is_pool(path: Path) -> bool:
    return (path / POOL_FILE).is_file()


def load_manifest(pool_dir: Path) -> PoolManifest:
    return load_model(pool_dir / POOL_FILE, PoolManifest, what="pool manifest")


@dataclass(frozen=True)
class SealedTask(Task):
    """`path` is the task's bundle folder (no plaintext in it); `spec` was decrypted in memory."""

    card: TaskCard = field(default=None, compare=False)  # type: ignore[assignment]
    identity: Any = field(default=None, compare=False, repr=False)
    recipients: tuple[str, ...] = ()
    run_day: dt.date = field(default_factory=utc_day, compare=False)

    sealed: ClassVar[bool] = True

    @property
    def private(self) -> bool:  # type: ignore[override]
        """Not yet due for release on the day the run started: its score is a private one."""
        return self.card.is_private_on(self.run_day)

    def part(self, name: str) -> bytes:
        return bundle.read_part(self.path, name, self.card.bundle[name], self.identity)

    def part_files(self, name: str) -> bundle.Files:
        return bundle.members(self.part(name), self.path / PART_FILES[name])

    @cached_property
    def content_hash(self) -> str:
        return self.card.content_hash

    @cached_property
    def grader_hash(self) -> str:
        return self.card.grader_version

    @cached_property
    def uses_probes(self) -> bool:
        return self.card.probes

    @cached_property
    def _inputs(self) -> dict[str, tuple[str, int]]:
        files = self.part_files("agent")
        return {rel.removeprefix("inputs/"): (hashlib.sha256(data).hexdigest(), len(data))
                for rel, (data, _) in sorted(files.items()) if rel.startswith("inputs/")}

    @property
    def input_hashes(self) -> dict[str, str]:  # type: ignore[override]
        return {rel: h for rel, (h, _) in self._inputs.items()}

    @property
    def input_sizes(self) -> dict[str, int]:
        return {rel: size for rel, (_, size) in self._inputs.items()}

    def stage_agent_part(self, dest: Path, instruction: Path | None = None) -> None:
        """instruction.md and inputs/ into a trial's workspace: dest/inputs, and the instruction
        at `instruction` (default dest/instruction.md), made read-only to its owner alone before
        a byte is written: it is never open to other local users, not even for a moment."""
        files = dict(self.part_files("agent"))
        if "instruction.md" not in files or any(bundle.part_of(rel) != "agent" for rel in files):
            raise bundle.SealedBundleError("the agent part must hold instruction.md and inputs/ "
                                           "only", path=self.path / PART_FILES["agent"])
        text, _ = files.pop("instruction.md")
        fd = os.open(instruction or dest / "instruction.md", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with open(fd, "wb") as f:
            f.write(text)
        bundle.write_files(files, dest)

    def grading_copy(self, dest: Path) -> None:
        """What a grading (or the oracle) mounts at /grade/task: task.toml, the grader, the
        reference, the solution and the pristine inputs; not the fixtures."""
        files = {rel: f for rel, f in self.part_files("hidden").items()
                 if rel.split("/", 1)[0] in GRADING_PARTS}
        files |= {rel: f for rel, f in self.part_files("agent").items() if rel.startswith("inputs/")}
        files["task.toml"] = (self.part("spec"), 0o644)
        bundle.write_files(files, dest)

    def unseal(self, dest: Path) -> Path:
        """The whole task folder at dest/<id>, checked against the card's content hash."""
        folder = dest / self.id
        for name in ("agent", "hidden"):
            bundle.write_files(self.part_files(name), folder)
        (folder / "task.toml").write_bytes(self.part("spec"))
        if tree_hash(folder) != self.card.content_hash:
            raise LastexamError("the unsealed task does not match the content hash on its card",
                                path=self.path)
        return folder


def load_pool(pool_dir: Path, identity: Any | None, day: dt.date | None = None) -> list[SealedTask]:
    """The pool's tasks, their specs decrypted (in memory) with the identity; private or
    public as on `day`, the day their run started (default: today, UTC)."""
    if identity is None:
        raise LastexamError("a sealed pool needs a key: give --identity KEYFILE or set "
                            "LASTEXAM_IDENTITY", path=pool_dir)
    manifest = load_manifest(pool_dir)
    today = day or utc_day()
    tasks = []
    for card in manifest.task:
        folder = (pool_dir / card.id).resolve()
        probe = SealedTask(path=folder, spec=None, card=card, identity=identity,  # type: ignore[arg-type]
                           recipients=tuple(manifest.recipients), run_day=today)
        # Trials are sealed to pool.toml's recipients, which anyone who can write it could
        # change: every age file must be sealed to as many as it lists (a recipient added
        # without the task's plaintext cannot be one of its files'), and the key (below) be one.
        for part in PARTS:  # every file as its card says, before any trial
            sealed_to = bundle.x25519_recipients(bundle.check_part(folder, part, card.bundle[part]))
            if sealed_to != len(manifest.recipients):
                raise LastexamError(f"sealed to {sealed_to} recipients, but pool.toml lists "
                                    f"{len(manifest.recipients)}: pool.toml's recipients were changed",
                                    path=folder / PART_FILES[part])
        raw = probe.part("spec")
        where = folder / "task.toml"
        try:
            spec = TaskSpec.model_validate(tomllib.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise LastexamError(f"the sealed task.toml is not readable TOML: {e}", path=where) from None
        except ValidationError as e:
            raise LastexamError(describe_validation_error(e), path=where) from None
        mismatch = [f for f in ("id", "cluster", "subdomain", "tier", "software", "environment",
                                "gui", "timeout_s") if getattr(spec, f) != getattr(card, f)]
        if canary_key(spec.canary) != canary_key(card.canary):  # what the canary scan looks for
            mismatch.append("canary")
        if mismatch:
            raise LastexamError(f"the card in pool.toml does not match the sealed task.toml in "
                                f"{', '.join(mismatch)}", path=folder)
        tasks.append(SealedTask(path=folder, spec=spec, card=card, identity=identity,
                                recipients=tuple(manifest.recipients), run_day=today))
    if recipient_of(identity) not in manifest.recipients:  # it opened the bundles: a swap
        raise LastexamError("the key opens the bundles but its recipient is not among pool.toml's "
                            "recipients: pool.toml was changed", path=pool_dir / POOL_FILE)
    return tasks


@contextmanager
def unsealed_pools(paths: list[Path], identity: Any, private: Path) -> Iterator[list[Path]]:
    """The paths with each sealed pool replaced by a folder of its unsealed tasks in `private`
    (a folder only the harness's user opens, which the caller removes even if the process
    is killed: run/leftovers.py private_area), removed on exit."""
    from lastexam.untrusted import remove_tree

    made = []
    try:
        result = []
        for i, p in enumerate(paths):
            if not is_pool(p):
                result.append(p)
                continue
            dest = private / str(i)
            made.append(dest)
            dest.mkdir()
            for task in load_pool(p, identity):
                task.unseal(dest)
            result.append(dest)
        yield result
    finally:
        for dest in made:
            remove_tree(dest)
