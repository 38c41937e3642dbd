"""Whether a trial used the professional software its task declares, from its exec log."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from lastexam.usage.execlog import ExecLog


@dataclass(frozen=True)
class SoftwareSignals:
    names: tuple[str, ...]
    executables: tuple[str, ...]
    modules: tuple[str, ...]


@cache
def signals_table() -> tuple[SoftwareSignals, ...]:
    raw = tomllib.loads(resources.files(__package__).joinpath("software.toml").read_text())
    return tuple(
        SoftwareSignals(
            names=tuple(n.lower() for n in s["names"]),
            executables=tuple(s.get("executables", ())),
            modules=tuple(s.get("modules", ())),
        )
        for s in raw["software"]
    )


def signals_for(software: str) -> SoftwareSignals | None:
    name = software.strip().lower()
    return next((s for s in signals_table() if name in s.names), None)


def usage(declared: list[str], log: ExecLog) -> dict[str, bool | None]:
    """software -> True (used), False (not used) or None (unknown: untraced or no signals).
    A tampered log proves nothing: every declared software counts as not used."""
    result: dict[str, bool | None] = {}
    for software in declared:
        if log.tampered is not None:
            result[software] = False
            continue
        sig = signals_for(software)
        if sig is None or not log.traced:
            result[software] = None
            continue
        used_exec = any(log.programs.get(e, 0) or log.invoked.get(e, 0) for e in sig.executables)
        used_module = any(log.python_imports.get(m, 0) for m in sig.modules)
        result[software] = used_exec or used_module
    return result
