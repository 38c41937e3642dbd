"""task/pyparse.py: graders and generators are parsed one at a time, whatever thread asks
(CPython 3.11's AST conversion fails when two threads are in it at once)."""

from __future__ import annotations

import ast
import threading
import time

import pytest

from lastexam.task import pyparse


def test_parses_never_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    inside, most, lock = 0, 0, threading.Lock()
    real = ast.parse

    def slow_parse(*args: object, **kwargs: object) -> ast.Module:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)  # long enough for the other threads to come in, were they let in
        with lock:
            inside -= 1
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", slow_parse)
    trees: list[ast.Module] = []
    threads = [threading.Thread(target=lambda i=i: trees.append(pyparse.parse(f"x = {i}", f"f{i}.py")))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1
    assert sorted(tree.body[0].value.value for tree in trees) == list(range(8))
