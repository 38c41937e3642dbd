"""The third-party modules a task's grader imports, read from its source (never run): what its
environment's warm grading worker imports once, before it forks the task's gradings."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

from lastexam.task import pyparse

# Not the harness's own, nor the standard library's (cheap, and partly loaded already).
SKIPPED = set(sys.stdlib_module_names) | {"lastexam", "__future__"}


@cache
def grader_imports(task_dir: Path) -> tuple[str, ...]:
    """Modules named by `import` and `from ... import` statements anywhere in the Python files
    at the top of the task folder (grader.py and its helpers; not generate.py), leaving out the
    standard library, relative imports and any name a file or folder of the task has: a module
    preloaded under that name would shadow the task's own."""
    local = {p.name.removesuffix(".py") for p in task_dir.iterdir()} if task_dir.is_dir() else set()
    found: set[str] = set()
    for path in sorted(task_dir.glob("*.py")):
        if path.name == "generate.py":
            continue
        try:
            tree = pyparse.parse(path.read_bytes(), str(path))
        except (SyntaxError, ValueError, OSError):
            continue  # the grader's own failure, reported when it runs
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
    return tuple(sorted(name for name in found
                        if name.split(".")[0] not in SKIPPED and name.split(".")[0] not in local))
