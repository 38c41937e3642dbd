"""Observer for semver-prerelease-regression: `python3 probe.py PKG_ROOT CASES OUT`.

Runs in a subprocess with the agent's package importable. It only records what the package
returns on the cases the grader chose (no expected value, no verdict is known here) and the
bytecode the package runs on the private workload; grader.py judges the record in its own
process. The package cannot reach this file's state: grader.py rejects packages that import
anything but a few pure standard-library modules or use introspection (see PLAIN_IMPORTS).
"""

import contextlib
import importlib.util
import inspect
import json
import os
import sys
import pathlib
import types

API = ["Version.__init__", "Version.parse", "Version.bump", "Range.__init__", "satisfies",
       "max_satisfying"]


def identifier_fields_only() -> None:
    """dataclasses pastes each field's name into the source it exec()s. A class body can only
    name identifiers, but a namespace built at run time (type(...)(name, bases, ns)) can hold any
    text as an annotation, code included, which no static check of the package sees: such a class
    is refused before dataclasses reads it. Fields are also inherited from any base holding
    __dataclass_fields__, which such a namespace can forge: only bases made here may."""
    import abc
    import dataclasses
    import keyword
    import types
    import weakref

    original = dataclasses.dataclass
    made: weakref.WeakSet = weakref.WeakSet()  # out of the package's reach: a closure cell
    # The generated methods read and assign each field on whatever object they are given: a
    # field is a name the static gate would let the package read and assign (f_back, name, sys
    # are not), whatever way the class was made.
    gate = importlib.util.spec_from_file_location("semver_plain", pathlib.Path(__file__).with_name("plain.py"))
    plain = importlib.util.module_from_spec(gate)
    gate.loader.exec_module(plain)
    _, _, no_read, no_assign = plain.tables()

    def dataclass(cls=None, /, **options):
        def checked(c):
            # What dataclasses reads, exactly as it reads it: a plain class of a plain
            # metaclass, its annotations a plain dict of str (a dict subclass's items() could
            # give other names than its keys), its construction plain functions (inspect, asked
            # for a signature, compares a callable object with `type`, handing it over).
            annotations = c.__dict__.get("__annotations__", {})
            if not (isinstance(c, type) and type(c) in (type, abc.ABCMeta) and type(annotations) is dict
                    and all(type(n) is str for n in annotations)):
                raise TypeError("a dataclass must be a plain class with plain annotations")
            for special in ("__init__", "__new__", "__call__"):
                value = c.__dict__.get(special)
                if isinstance(value, staticmethod | classmethod):
                    value = value.__func__
                if value is not None and type(value) is not types.FunctionType:
                    raise TypeError(f"a dataclass's {special} must be a function")
            for name in annotations:
                # ASCII: compiling the generated source folds a fullwidth name to plain letters
                if not (isinstance(name, str) and name.isascii() and name.isidentifier()
                        and not keyword.iskeyword(name)
                        and not (name.startswith("__") and name.endswith("__"))
                        and name not in no_read and name not in no_assign):
                    raise TypeError(f"dataclass field name {name!r} is not an ASCII identifier "
                                    "the package may read and assign")
            for base in c.__mro__:
                if "__dataclass_fields__" in base.__dict__ and base not in made:
                    raise TypeError(f"{base.__name__} holds dataclass fields @dataclass did not make")
                # a Field of a base made here, renamed since (its generated __init__ run on it)
                fields = base.__dict__.get("__dataclass_fields__", {})
                if type(fields) is not dict:
                    raise TypeError(f"{base.__name__}'s fields are not a plain dict")
                for key, f in fields.items():
                    if not (type(f) is dataclasses.Field and f.name == key):
                        raise TypeError(f"{base.__name__}'s field {key!r} was changed")
            # Without a docstring, dataclasses asks inspect for the class's signature, which
            # follows what the package hung on its __init__ (_partialmethod) to any object and
            # compares it with type: a docstring of ours spares that.
            if not c.__dict__.get("__doc__"):
                c.__doc__ = c.__name__
            result = original(c, **options)
            made.add(result)
            return result

        return checked if cls is None else checked(cls)

    dataclasses.dataclass = dataclass


def count_opcodes(package_dir: str, workload) -> int:
    """Instructions executed in the package's files and in code generated at run time
    (dataclass or namedtuple methods have no file of their own)."""
    total = 0
    counted: dict[str, bool] = {}

    def local(frame, event, arg):
        nonlocal total
        total += event == "opcode"
        return local

    def global_trace(frame, event, arg):
        path = frame.f_code.co_filename
        if path not in counted:
            counted[path] = (str(pathlib.Path(path).resolve()).startswith(package_dir)
                             or not os.path.isfile(path))
        if not counted[path]:
            return None
        frame.f_trace_opcodes = counted[path]
        return local

    settrace, gettrace = sys.settrace, sys.gettrace
    settrace(global_trace)  # the package's code runs from here
    try:
        workload()
        if gettrace() is not global_trace:
            raise RuntimeError("the package changed the trace function during the workload")
    finally:
        settrace(None)
    return total


def signature_of(sk, dotted: str) -> list | None:
    obj = sk
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    # Functions and methods only: inspect compares anything else with type (`obj in (type,
    # object)`), which a package object's __eq__ would receive.
    func = obj.__func__ if type(obj) is types.MethodType else obj
    if type(func) is not types.FunctionType or func.__dict__:
        return None  # (a function's attributes steer inspect: _partialmethod, __wrapped__)
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, repr(p.default)] for p in sig.parameters.values()]


def observe(sk, cases: dict) -> dict:
    parse = sk.Version.parse
    out: dict = {"signatures": {name: signature_of(sk, name) for name in API}}

    def issue():
        return [str(v) for v in sorted(parse(t) for t in cases["issue"])]

    def precedence():
        pairs = []
        for a, b in cases["pairs"]:
            va, vb = parse(a), parse(b)
            pairs.append([bool(va < vb), bool(vb < va), bool(va == vb)])
        return {"pairs": pairs, "sorted": [str(v) for v in sorted(parse(t) for t in cases["sort"])]}

    def hashing():
        rows = []
        for core in cases["hash"]:
            a, b, c = parse(core + "+linux.1"), parse(core + "+darwin"), parse(core)
            rows.append([bool(a == b), hash(a) == hash(b), len({a, b, c})])
        return rows

    def ranges():
        return [bool(sk.satisfies(v, r)) for v, r in cases["ranges"]]

    def max_satisfying():
        got = []
        for tags, as_object, r in cases["max"]:
            items = [parse(t) if obj else t for t, obj in zip(tags, as_object, strict=True)]
            best = sk.max_satisfying(iter(items), r)
            got.append(None if best is None else str(best))
        try:
            sk.max_satisfying(["1.0.0"], cases["invalid_range"])
            raised = False
        except sk.InvalidRange:
            raised = True
        return {"results": got, "invalid_range_raised": raised}

    for name, fn in {"issue": issue, "precedence": precedence, "hash": hashing,
                     "ranges": ranges, "max_satisfying": max_satisfying}.items():
        try:
            out[name] = fn()
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"[:300]}

    def workload():
        versions = []
        for t in cases["workload_tags"]:
            with contextlib.suppress(sk.InvalidVersion):
                versions.append(parse(t))
        by_precedence = sorted(versions)
        for r in cases["workload_ranges"]:
            for v in by_precedence[::9]:
                sk.satisfies(v, r)
            sk.max_satisfying(cases["workload_tags"], r)

    try:
        out["opcodes"] = count_opcodes(str(pathlib.Path(sk.__file__).resolve().parent), workload)
    except Exception as e:
        out["opcodes"] = {"error": f"{type(e).__name__}: {e}"[:300]}
    return out


if __name__ == "__main__":  # python3 probe.py PKG_ROOT CASES OUT
    pkg_root, cases_path, out_path = sys.argv[1:4]
    cases = json.loads(pathlib.Path(cases_path).read_text(encoding="utf-8"))
    dumps, write_text, exit_now = json.dumps, pathlib.Path(out_path).write_text, os._exit
    sys.path.insert(0, pkg_root)
    identifier_fields_only()
    import semverkit

    record = dumps(observe(semverkit, cases))
    write_text(record, encoding="utf-8")
    exit_now(0)  # no atexit handler of the package runs after the record
