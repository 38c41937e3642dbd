"""A task's fixtures: fixtures/negative/<name>/ (known-wrong deliverables, each with its
declared score range) and fixtures/positive/<name>/ (valid deliverables that must score 1.0),
each an output/ folder or a make.sh beside a fixture.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lastexam.errors import LastexamError, describe_validation_error
from lastexam.task.load import Task
from lastexam.validation.fixture_build import has_make_script

SHORTCUT_SCORE_MAX = 0.5


class FixtureSpec(BaseModel):
    """fixtures/negative/<name>/fixture.toml; the known-wrong output is in output/ beside it.

    kind "mistake": a professional error; "shortcut": a deliverable that skips the crux of the
    job (placeholder, pasted constants, key step left out, naive method), held to at most 0.5."""

    model_config = ConfigDict(extra="forbid")

    mistake: str = Field(min_length=5)
    kind: Literal["mistake", "shortcut"] = "mistake"
    score_min: float = Field(ge=0.0, le=1.0)
    score_max: float = Field(ge=0.0, lt=1.0)

    @model_validator(mode="after")
    def _shortcut_bound(self) -> FixtureSpec:
        if self.kind == "shortcut" and self.score_max > SHORTCUT_SCORE_MAX:
            raise ValueError(f"score_max: a shortcut may score at most {SHORTCUT_SCORE_MAX}")
        return self


class PositiveFixtureSpec(BaseModel):
    """fixtures/positive/<name>/fixture.toml: a valid deliverable (output/ beside it) that must
    score a full pass, e.g. the oracle's output reformatted or made by another valid method."""

    model_config = ConfigDict(extra="forbid")

    variant: str = Field(min_length=5)



@dataclass(frozen=True)
class Fixture:
    name: str
    path: Path
    spec: FixtureSpec | PositiveFixtureSpec | None
    error: str = ""

    @property
    def output(self) -> Path:
        return self.path / "output"


def negative_fixtures(task: Task) -> list[Fixture]:
    return _fixtures(task.negative_fixtures_dir, FixtureSpec)


def positive_fixtures(task: Task) -> list[Fixture]:
    return _fixtures(task.path / "fixtures" / "positive", PositiveFixtureSpec)


def _fixtures(root: Path, model: type[FixtureSpec] | type[PositiveFixtureSpec]) -> list[Fixture]:
    found = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        toml_path = d / "fixture.toml"
        try:
            spec = model.model_validate(tomllib.loads(toml_path.read_text()))
            if isinstance(spec, FixtureSpec) and spec.score_min > spec.score_max:
                raise LastexamError("score_min is above score_max", path=toml_path)
            if not (d / "output").is_dir() and not has_make_script(d):
                raise LastexamError("neither output/ nor make.sh beside fixture.toml", path=d)
            found.append(Fixture(d.name, d, spec))
        except FileNotFoundError:
            found.append(Fixture(d.name, d, None, f"{toml_path}: missing"))
        except tomllib.TOMLDecodeError as e:
            found.append(Fixture(d.name, d, None, f"{toml_path}: not valid TOML: {e}"))
        except ValidationError as e:
            found.append(Fixture(d.name, d, None, f"{toml_path}: {describe_validation_error(e)}"))
        except LastexamError as e:
            found.append(Fixture(d.name, d, None, e.render()))
    return found
