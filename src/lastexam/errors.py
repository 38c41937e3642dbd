"""The one error type the CLI turns into a message instead of a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class LastexamError(Exception):
    """A problem the user can fix. Names the file and the field when there is one."""

    def __init__(self, message: str, *, path: Path | str | None = None, field: str | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.field = field
        super().__init__(self.render())

    def render(self) -> str:
        where = self.path or ""
        if self.field:
            where = f"{where}: field '{self.field}'" if where else f"field '{self.field}'"
        return f"{where}: {self.message}" if where else self.message


def describe_validation_error(e: ValidationError) -> str:
    """One line per invalid field, naming the field."""
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        parts.append(f"field '{loc}': {msg}" if loc else msg)
    return "; ".join(parts)
