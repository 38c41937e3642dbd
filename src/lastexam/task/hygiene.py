"""The grader must not use the oracle's code: a bug in code they share passes both.

grader.py is read (never run) for imports of solution/'s modules (also through
importlib.import_module or __import__) and for the folder name in a string (a path built to
reach it).
"""

from __future__ import annotations

import ast
from pathlib import Path

from lastexam.task import pyparse

SOLUTION = "solution"


def solution_uses(task_dir: Path) -> list[str]:
    """Where grader.py reaches into solution/, as "grader.py:line: what" strings; empty when it
    does not (or when there is no grader.py: the required-files gate says so)."""
    grader = task_dir / "grader.py"
    if not grader.is_file():
        return []
    try:
        tree = pyparse.parse(grader.read_bytes(), filename=str(grader))
    except (SyntaxError, ValueError) as e:
        return [f"grader.py does not parse: {e}"]
    solution_modules = {p.stem for p in (task_dir / SOLUTION).glob("*.py")} | {SOLUTION}
    problems = []
    for node in ast.walk(tree):
        for module in _imported(node):
            if module.split(".")[0] in solution_modules:
                problems.append(f"grader.py:{node.lineno}: imports {module} from {SOLUTION}/")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _names_solution(node.value):
            problems.append(f"grader.py:{node.lineno}: refers to {SOLUTION}/ in {node.value[:80]!r}")
    return problems


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        return [node.module]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in ("__import__", "import_module") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    return []


def _names_solution(text: str) -> bool:
    return SOLUTION in text.replace("\\", "/").split("/")
