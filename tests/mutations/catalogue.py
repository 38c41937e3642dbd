"""The mutation catalogue: tests/mutations/*.toml, each a list of [[mutation]] tables.

A mutation is one search/replace in one file of src/ that breaks one guarantee the docs promise,
with the tests that must fail when it is applied. Read by tests/test_mutation_catalogue.py (which
checks every entry still applies) and by tests/mutations/run.py (which applies them)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class Mutation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME.pattern)
    guarantee: str = Field(min_length=20)  # the promise it breaks, and where the docs make it
    description: str = Field(min_length=10)  # what the patch does
    file: str = Field(pattern=r"^src/")
    old: str = Field(min_length=1)
    new: str
    tests: list[str] = Field(min_length=1)  # pytest node ids, relative to the repository
    source: str = ""  # the catalogue file it comes from (set by load)

    def apply(self, root: Path) -> None:
        """Replace `old` by `new` in root/file; ValueError unless `old` occurs exactly once."""
        path = root / self.file
        text = path.read_text(encoding="utf-8")
        found = text.count(self.old)
        if found != 1:
            raise ValueError(f"{self.name}: the old text occurs {found} times in {self.file}, not once")
        path.write_text(text.replace(self.old, self.new), encoding="utf-8")


def load(folder: Path = HERE) -> list[Mutation]:
    """Every mutation of every catalogue file, in file then entry order. Bad entries raise
    ValueError naming the file, the entry and the field."""
    mutations: list[Mutation] = []
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: not valid TOML: {e}") from None
        extra = set(data) - {"mutation"}
        if extra:
            raise ValueError(f"{path}: unknown top-level keys {sorted(extra)}")
        for i, entry in enumerate(data.get("mutation", []), 1):
            try:
                mutations.append(Mutation.model_validate({**entry, "source": path.name}))
            except ValidationError as e:
                why = "; ".join(f"field {'.'.join(map(str, err['loc']))!r}: {err['msg']}"
                                for err in e.errors())
                raise ValueError(f"{path}: mutation #{i} ({entry.get('name', '?')}): {why}") from None
    return mutations


def test_files(mutation: Mutation) -> list[str]:
    """The test files its node ids name, relative to the repository."""
    return sorted({t.split("::", 1)[0] for t in mutation.tests})
