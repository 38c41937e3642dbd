"""A small TOML writer for the files lastexam generates (tables of strings, numbers, booleans
and lists of them): a JSON string is a valid TOML basic string."""

from __future__ import annotations

import json
import math
from typing import Any


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"TOML has no {v!r}")
        return repr(v)
    if isinstance(v, str):  # JSON leaves DEL as it is; TOML wants it escaped
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TypeError(f"cannot write a {type(v).__name__} as a TOML value")


def dumps(doc: dict[str, Any]) -> str:
    """Top-level keys first, then each table (nested tables as [a.b])."""
    lines: list[str] = []
    _table(doc, [], lines)
    return "\n".join(lines).strip() + "\n"


def _key(k: str) -> str:
    return k if k.replace("-", "").replace("_", "").isalnum() and k.isascii() else json.dumps(k)


def _table(doc: dict[str, Any], path: list[str], lines: list[str]) -> None:
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    for k, v in doc.items():
        if v is not None and k not in tables:
            lines.append(f"{_key(k)} = {value(v)}")
    for k, v in tables.items():
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in [*path, k]) + "]")
        _table(v, [*path, k], lines)
