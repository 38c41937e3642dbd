"""Read a configuration file (TOML or YAML) into a pydantic model. Every problem becomes one
LastexamError naming the file, and the field where there is one."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from lastexam.errors import LastexamError, describe_validation_error

M = TypeVar("M", bound=BaseModel)


def load_model(path: Path, model: type[M], *, what: str, shape: str = "a mapping") -> M:
    """`what` names the file in messages ("experiment file"); `shape` says what its top level
    must be when it is not a mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LastexamError(f"no such {what}", path=path) from None
    except (OSError, UnicodeDecodeError) as e:
        raise LastexamError(f"cannot read the {what}: {e}", path=path) from None
    if path.suffix == ".toml":
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise LastexamError(f"not valid TOML: {e}", path=path) from None
    else:
        import yaml

        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise LastexamError(f"not a readable YAML file: {e}", path=path) from None
        if not isinstance(raw, dict):
            raise LastexamError(f"the {what} must be {shape}", path=path)
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise LastexamError(describe_validation_error(e), path=path) from None
