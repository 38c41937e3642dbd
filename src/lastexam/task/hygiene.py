"""The grader must not use the oracle's code: a bug in code they share passes both.

grader.py, and the task-local modules it imports, are read (never run) for imports of
solution/'s modules (also by importlib.import_module or __import__) and for the folder name in
a string (a path built to reach it).
"""

from __future__ import annotations

import ast
from pathlib import Path

SOLUTION = "solution"


def solution_uses(task_dir: Path) -> list[str]:
    """Where grader.py (or a task-local module it imports) reaches into solution/, as
    "file:line: what" strings; empty when it does not."""
    solution_modules = {p.stem for p in (task_dir / SOLUTION).glob("*.py")} | {SOLUTION}
    local_modules = {p.stem: p for p in task_dir.glob("*.py") if p.name != "grader.py"}
    problems: list[str] = []
    todo, seen = [task_dir / "grader.py"], set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError) as e:
            problems.append(f"{path.name}: does not parse: {e}")
            continue
        for node in ast.walk(tree):
            for module in _imported(node):
                top = module.split(".")[0]
                if top in solution_modules:
                    problems.append(f"{path.name}:{node.lineno}: imports {module} from {SOLUTION}/")
                elif top in local_modules:
                    todo.append(local_modules[top])
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _names_solution(node.value):
                problems.append(f"{path.name}:{node.lineno}: refers to {SOLUTION}/ in {node.value[:80]!r}")
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
    parts = text.replace("\\", "/").split("/")
    return SOLUTION in parts
