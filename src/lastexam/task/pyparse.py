"""ast.parse for code that runs in threads (validation's tasks side by side, a run's trials).

CPython 3.11 keeps the AST conversion's recursion depth in one place per interpreter: two
threads converting at once (one paused in it, by a garbage collection that runs Python code)
fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905; a CI
run of this project failed so on 6 December 2026). One parse at a time.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename=filename)
