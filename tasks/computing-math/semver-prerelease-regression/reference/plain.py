"""The static gate of semver-prerelease-regression's grader: the agent's package runs in the
probe's process, so only plain code may (no I/O, no introspection, no eval), which cannot reach
the probe's state, its trace function or its record."""

import ast
import importlib
import re

# Modules the package may import, each used only through the public names of its __all__;
# no name below and no dunder outside PLAIN_DUNDERS: no I/O, no introspection, no eval.
# No typing: typing.List["..."] makes a ForwardRef, whose private _evaluate runs eval.
PLAIN_IMPORTS = {"__future__", "re", "functools", "itertools", "operator", "dataclasses",
                 "collections", "collections.abc", "bisect", "heapq", "math", "numbers", "abc"}
DENIED = {"sys", "os", "getattr", "setattr", "delattr", "vars", "globals", "locals", "eval", "exec",
          "compile", "__import__", "open", "print", "input", "breakpoint", "exit", "quit", "help",
          "attrgetter", "methodcaller", "get_type_hints", "ForwardRef", "singledispatch",
          "singledispatchmethod", "gi_frame", "cr_frame", "ag_frame", "tb_frame", "f_back",
          "f_globals", "f_locals", "f_builtins", "memoryview", "update_wrapper", "wraps",
          "settrace", "setprofile", "gettrace", "_getframe", "_exit", "builtins", "gi_code", "cr_code",
          "ag_code", "f_code", "metaclass", "make_dataclass",
          # type(x) and x.__class__ hand out metaclasses, which make classes from namespaces built
          # at run time (type(int)(name, bases, ns)), and a module's class can be swapped
          "type", "ABCMeta",
          # mro() reaches Enum through re.RegexFlag: Enum("E", names) also makes a class from a
          # run-time dict; format_map reads attributes by names in its text, as format does
          "mro", "format_map"}
# Attribute names that lead to frames and code: refused also as text, which a class pattern's
# __match_args__ or a namespace could turn into an attribute read.
FRAME_ATTRS = {"gi_frame", "cr_frame", "ag_frame", "tb_frame", "f_back", "f_globals", "f_locals",
               "f_builtins", "gi_code", "cr_code", "ag_code", "f_code"}
PLAIN_DUNDERS = {"__name__", "__qualname__", "__all__", "__version__", "__slots__",
                 "__doc__", "__init__", "__new__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                 "__ge__", "__hash__", "__str__", "__repr__", "__contains__", "__iter__", "__len__",
                 "__bool__", "__format__", "__post_init__", "__module__",
                 "__author__"}
# Names that standard-library objects keep as plain attributes and later use as source text or as
# a key: a dataclass Field's name (pasted into the text dataclasses exec()s), cached_property's
# attrname (the key it reads in the instance's __dict__, a module's globals after a class swap).
# Never assigned, not even through object.__setattr__.
FIELD_TEXT = {"name", "_field_type", "attrname"}
BUILTIN_ONLY = {"compile"}  # denied as the builtin, allowed as an attribute (re.compile)


# dataclasses builds methods by exec() of text made from its fields: only its decorator and
# field() (fields(), replace(), make_dataclass() and the rest hand out or take Field objects).
ONLY_NAMES = {"dataclasses": {"dataclass", "field"}}


def public_names(module) -> set[str]:
    """Its __all__, or (C modules such as itertools have none) its names without an underscore
    that are not modules."""
    if module.__name__ in ONLY_NAMES:
        return ONLY_NAMES[module.__name__]
    if hasattr(module, "__all__"):
        return set(module.__all__)
    return {n for n in dir(module) if not n.startswith("_")
            and type(getattr(module, n)) is not type(importlib)}


DUNDER = re.compile(r"__\w+__")
# a field name with . or [ before any :spec or !conversion: "{0.__globals__}".format(f) reads by name
FORMAT_LOOKUP = re.compile(r"\{[^{}:!]*[.\[]")


def not_plain(name: str) -> bool:
    return name in DENIED or (name.startswith("__") and name not in PLAIN_DUNDERS)


def plain_problems(sources: dict[str, str]) -> list[str]:
    """What in the package's files is not plain code (empty: plain)."""
    problems = []
    for fname, text in sources.items():
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            problems.append(f"{fname}:{e.lineno}: syntax error")
            continue
        modules: dict[str, set[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                # a module's attribute is read, never assigned
                node.value.plain_use = node.attr if isinstance(node.ctx, ast.Load) else None
            if (isinstance(node, ast.Call) and ast.unparse(node.func) == "object.__setattr__"
                    and len(node.args) == 3 and ast.unparse(node.args[0]) == "self"
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                    and not node.args[1].value.startswith("__")  # __class__ would swap a module's class
                    and not not_plain(node.args[1].value) and node.args[1].value not in FIELD_TEXT):
                node.func.plain_ok = True  # type: ignore[attr-defined]  # frozen dataclass idiom
        for node in ast.walk(tree):
            line = f"{fname}:{getattr(node, 'lineno', '?')}"
            # Ways to read an attribute or make a class from a name built at run time.
            if isinstance(node, ast.MatchClass):
                problems.append(f"{line}: uses a class pattern")
            if isinstance(node, ast.ClassDef) and node.keywords:
                problems.append(f"{line}: uses class keywords")
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "type" for b in node.bases):
                problems.append(f"{line}: makes a metaclass")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
                    and len(node.args) + len(node.keywords) != 1):
                problems.append(f"{line}: uses type() to make a class")
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del)
                    and (node.attr.startswith("__") or node.attr in FIELD_TEXT)):
                problems.append(f"{line}: assigns {node.attr}")
            if isinstance(node, ast.Import | ast.ImportFrom):
                mod = node.module if isinstance(node, ast.ImportFrom) else None
                # Every name bound, from the package itself too: `from . import __builtins__`
                # would hand over eval and __import__.
                bound = [n for alias in node.names for n in (alias.name.split(".")[-1], alias.asname) if n]
                problems += [f"{line}: imports {n}" for n in bound if not_plain(n)]
                if isinstance(node, ast.ImportFrom) and node.level:
                    continue
                for alias in node.names:
                    name = mod or alias.name
                    if name.split(".")[0] == "semverkit":
                        continue
                    if name not in PLAIN_IMPORTS:
                        problems.append(f"{line}: imports {name}")
                        continue
                    public = public_names(importlib.import_module(name))
                    if mod is None and alias.asname:
                        modules[alias.asname] = public
                    elif mod is None:  # import a.b binds a, used as a.b.<public name of a.b>
                        top, *rest = name.split(".")
                        modules[top] = set(rest[:1]) or public
                    elif mod != "__future__" and (alias.name not in public or alias.name in DENIED):
                        problems.append(f"{line}: imports {alias.name} from {mod}")
            names = ([node.id] if isinstance(node, ast.Name) else [node.attr]
                     if isinstance(node, ast.Attribute) and node.attr not in BUILTIN_ONLY else [node.arg]
                     if isinstance(node, ast.keyword) and node.arg else node.kwd_attrs
                     if isinstance(node, ast.MatchClass) else [node.name]  # case C(attr=...) reads attr
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else [])
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and (DUNDER.fullmatch(node.value) or node.value in FRAME_ATTRS)):
                names.append(node.value)
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and FORMAT_LOOKUP.search(node.value)):
                problems.append(f"{line}: a format field reads an attribute or an item: {node.value[:40]!r}")
            for name in [] if getattr(node, "plain_ok", False) else names:
                if not_plain(name):
                    problems.append(f"{line}: uses {name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in modules:
                used = getattr(node, "plain_use", None)
                if used is None or used not in modules[node.id] or used in DENIED - BUILTIN_ONLY:
                    problems.append(f"{fname}:{node.lineno}: uses module {node.id} other than "
                                    "through a public name")
    return problems
