"""The package layers: lower packages never import higher ones (checked on the sources)."""

from __future__ import annotations

import ast
from pathlib import Path

import lastexam

PACKAGE = Path(lastexam.__file__).parent
# Packages below `run/`: they are used by a run and know nothing of it.
LOWER = ("task", "store", "grading", "sandbox", "envs", "pool")
HIGHER = ("lastexam.run", "lastexam.validation", "lastexam.cli")


def imported_modules(source: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def upward_imports(root: Path, lower: tuple[str, ...], higher: tuple[str, ...]) -> list[str]:
    bad = []
    for package in lower:
        for source in sorted((root / package).rglob("*.py")):
            if "template" in source.relative_to(root).parts:
                continue  # the task scaffold, copied into new tasks; not part of the package
            for name in sorted(imported_modules(source)):
                if any(name == h or name.startswith(h + ".") for h in higher):
                    bad.append(f"{source.relative_to(root)} imports {name}")
    return bad


def test_lower_packages_do_not_import_run() -> None:
    assert upward_imports(PACKAGE, LOWER, HIGHER) == []


def test_the_scan_sees_an_upward_import(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    (tmp_path / "task" / "ok.py").write_text("from lastexam.sandbox.base import Mount\n")
    (tmp_path / "task" / "bad.py").write_text(
        "def f():\n    from lastexam.run import session\n    import lastexam.validation.gates\n"
    )
    assert upward_imports(tmp_path, ("task",), HIGHER) == [
        "task/bad.py imports lastexam.run",
        "task/bad.py imports lastexam.run.session",
        "task/bad.py imports lastexam.validation.gates",
    ]


def test_the_layout_module_is_at_the_bottom() -> None:
    """Every layer reads paths from layout.py, which therefore imports no lastexam module."""
    names = imported_modules(PACKAGE / "layout.py")
    assert names and not [n for n in names if n.startswith("lastexam")]
