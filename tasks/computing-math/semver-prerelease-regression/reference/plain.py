"""The static gate of semver-prerelease-regression's grader: the agent's package runs in the
probe's process, so only plain code may, which cannot reach the probe's state, its trace
function or its record.

An allowlist (each denylist before it was got round, ten times): the package may name only its
own names, the builtins of ALLOWED_BUILTINS and the public names of PLAIN_IMPORTS, and read only
attributes that are methods of plain values (PLAIN_VALUES), public names of those modules, the
usual special methods, or its own names; an own name that is also an attribute of anything the
package can reach at run time (RUNTIME_OBJECTS, the modules, their members, the builtins) is
refused, so no chain of reads leads to a frame, a function's globals or the builtins module. It
assigns attributes only by its own names, never a module's."""

import ast
import builtins
import collections
import dataclasses
import functools
import importlib
import re
import symtable
import types

PLAIN_IMPORTS = {"__future__", "re", "functools", "itertools", "operator", "dataclasses",
                 "collections", "collections.abc", "bisect", "heapq", "math", "numbers", "abc"}
# dataclasses builds methods by exec() of text made from its fields: only its decorator and
# field() (fields(), replace(), make_dataclass() and the rest hand out or take Field objects).
ONLY_NAMES = {"dataclasses": {"dataclass", "field"}}
# Public names refused all the same: they read attributes named by text (attrgetter,
# methodcaller), eval text (singledispatch reads type hints), copy a function's attributes
# (wraps, update_wrapper), or make classes from namespaces built at run time (ABCMeta).
REFUSED_MEMBERS = {"attrgetter", "methodcaller", "singledispatch", "singledispatchmethod",
                   "update_wrapper", "wraps", "ABCMeta",
                   # typed=True adds type(arg) to each key; keys of other lengths compare item by
                   # item, so a key made to collide hands `type` to the package's __eq__
                   "lru_cache"}
ALLOWED_BUILTINS = {
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "classmethod",
    "complex", "dict", "divmod", "enumerate", "filter", "float", "frozenset", "hash", "hex", "id",
    "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next",
    "object", "oct", "ord", "pow", "property", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "zip",
    "NotImplemented", "Ellipsis", "None", "True", "False",
} | {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
     and issubclass(getattr(builtins, n), Exception)}
# Special methods the package may define and read (object.__setattr__ only as below).
SPECIAL_METHODS = {"__init__", "__new__", "__post_init__", "__eq__", "__ne__", "__lt__", "__le__",
                   "__gt__", "__ge__", "__hash__", "__str__", "__repr__", "__format__",
                   "__contains__", "__iter__", "__len__", "__bool__"}
READ_DUNDERS = SPECIAL_METHODS | {"__name__", "__qualname__", "__doc__", "__module__"}
# Dunder names a module or class may bind (no __match_args__: a class pattern reads by it; no
# __name__: the import system builds a submodule's name from the package's, so `from . import
# path` under __name__ = "os" loaded os.path) and read.
NAME_DUNDERS = SPECIAL_METHODS | {"__all__", "__slots__", "__version__", "__doc__", "__author__"}
READ_NAME_DUNDERS = NAME_DUNDERS | {"__name__"}

# Values whose public methods and attributes lead to nothing but more plain values.
PLAIN_VALUES = (str, bytes, int, float, complex, bool, list, tuple, dict, set, frozenset, range,
                slice, re.Pattern, re.Match, collections.deque, collections.Counter,
                collections.OrderedDict, collections.defaultdict, collections.ChainMap)
# format and format_map read attributes named in their text; a scanner is no plain value.
TEXT_LOOKUPS = {"format", "format_map", "scanner"}
PLAIN_ATTRS = ({n for t in PLAIN_VALUES for n in dir(t) if not n.startswith("_")} - TEXT_LOOKUPS
               | {"args", "setter", "getter", "deleter", "_replace", "_asdict", "_fields", "_make",
                  "_field_defaults"})
# What the package can reach besides its own objects and plain values; the attribute names of
# each (and of its type) are not the package's to define.
RUNTIME_OBJECTS = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType,
    types.FrameType, types.TracebackType, types.GeneratorType, types.CoroutineType,
    types.AsyncGeneratorType, types.CellType, types.ModuleType, types.MappingProxyType,
    types.GenericAlias, types.SimpleNamespace, types.MethodWrapperType,
    types.WrapperDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
    types.MethodDescriptorType, types.ClassMethodDescriptorType, type, object, super, property,
    classmethod, staticmethod, BaseException, functools.partial, functools.partialmethod,
    functools.cached_property, type(functools.lru_cache()(len)), dataclasses.Field,
    type({}.keys()), type({}.values()), type({}.items()), type(iter([])), type(iter("")),
    builtins,
)

DUNDER = re.compile(r"__\w+__")
# What a class may derive from besides the package's own classes (see Checker.bases_problem).
BASE_NAMES = {"object", "tuple", "list", "dict", "set", "frozenset", "str", "int", "float"} | {n for n in ALLOWED_BUILTINS if isinstance(getattr(builtins, n, None), type)
                                      and issubclass(getattr(builtins, n), Exception)}
BASE_MODULES = {"collections", "collections.abc", "numbers", "abc"}
NOT_BASES = {"namedtuple", "ABCMeta", "abstractmethod", "abstractproperty", "abstractclassmethod",
             "abstractstaticmethod", "get_cache_token", "update_abstractmethods"}
FRAME_ATTRS = {"gi_frame", "cr_frame", "ag_frame", "tb_frame", "f_back", "f_globals", "f_locals",
               "f_builtins", "gi_code", "cr_code", "ag_code", "f_code"}


def public_names(module) -> set[str]:
    """Its __all__, or (C modules such as itertools have none) its names without an underscore
    that are not modules."""
    if module.__name__ in ONLY_NAMES:
        return ONLY_NAMES[module.__name__]
    if hasattr(module, "__all__"):
        return set(module.__all__)
    return {n for n in dir(module) if not n.startswith("_")
            and type(getattr(module, n)) is not type(importlib)}


@functools.cache
def tables() -> tuple[dict[str, set[str]], set[str], set[str], set[str]]:
    """Public names by module; every module name the package may read; names it may not read:
    on something it can reach (from what it can name, by names it may read) they give anything
    but a plain value; names it may not assign: those of anything it can reach but exceptions.
    Computed in the Python that runs the probe."""
    modules = {m: public_names(importlib.import_module(m)) - REFUSED_MEMBERS
               for m in PLAIN_IMPORTS - {"__future__"}}
    members = set().union(*modules.values()) | {"abc"}  # collections.abc, read as an attribute
    always = PLAIN_ATTRS | members | READ_DUNDERS
    no_read: set[str] = set()
    no_assign: set[str] = set()
    # The modules too: a module object the package might come to hold (however it got it)
    # must not lead on by a private name (re.enum.sys).
    todo = [*map(importlib.import_module, modules), *RUNTIME_OBJECTS, *made_objects(),
            *(getattr(builtins, n) for n in ALLOWED_BUILTINS),
            *(getattr(importlib.import_module(m), n) for m, names in modules.items() for n in names)]
    # Modules and classes one by one, other objects one per type (a method-wrapper's
    # __init__ is a new method-wrapper each time); kept alive, so that no id is reused.
    seen: dict[object, object] = {}
    while todo:
        obj = todo.pop()
        # (one with attributes of its own, a function given some, counts on its own)
        own = isinstance(obj, type | types.ModuleType) or bool(getattr(obj, "__dict__", None))
        key = id(obj) if own else type(obj)
        if key in seen:
            continue
        seen[key] = obj
        todo.append(type(obj))
        if isinstance(obj, type):
            todo += obj.__mro__  # what mro() hands out
        names = set(dir(obj)) | set(dir(type(obj)))
        if not exceptional(obj):
            no_assign |= names
        for name in names:
            if DUNDER.fullmatch(name) and name not in READ_DUNDERS:
                continue  # never read: dunders outside READ_DUNDERS are refused as names
            try:
                value = getattr(obj, name)
            except AttributeError:
                continue  # not there (an empty slot): nothing to read
            except Exception:
                no_read.add(name)
                continue
            if name in always or plain(value, obj):
                todo.append(value)
            else:
                no_read.add(name)
    return modules, members, no_read - always, no_assign | PLAIN_ATTRS | members


def exceptional(obj: object) -> bool:
    return isinstance(obj, BaseException) or (isinstance(obj, type) and issubclass(obj, BaseException))


def plain(value: object, owner: object) -> bool:
    """A value with nothing to read or call but plain values' methods: text, numbers,
    containers of them, and exceptions (their attributes hold text, numbers and what the
    package raised). Not a function (eval is one), a class, or a descriptor read on a class
    (it stands for its instances' values, unknown here)."""
    if exceptional(owner) or exceptional(value):
        return True
    if isinstance(value, CONTAINERS):
        return plain_contents(value, 3)
    if isinstance(value, PLAIN_VALUES) or value is None or value is NotImplemented:
        return True
    if callable(value) or hasattr(type(value), "__get__"):
        return False
    names = set(dir(value)) | set(dir(type(value)))
    return all(DUNDER.fullmatch(n) or n in PLAIN_ATTRS or n in TEXT_LOOKUPS for n in names)


CONTAINERS = (list, tuple, dict, set, frozenset, collections.deque, collections.ChainMap,
              types.MappingProxyType)


def plain_contents(value: object, depth: int) -> bool:
    """A container of plain values only (a dict of modules is no plain value), looked into
    a few levels deep; a big or deeper one is not plain."""
    if not isinstance(value, CONTAINERS):
        return value is None or isinstance(value, PLAIN_VALUES) and not callable(value)
    items = list(value.items()) if hasattr(value, "items") else list(value)
    if depth == 0 or len(items) > 10_000:
        return False
    flat = [x for item in items for x in (item if isinstance(value, dict | collections.ChainMap
                                                      | types.MappingProxyType) else (item,))]
    return all(plain_contents(x, depth - 1) for x in flat)


def made_objects() -> list[object]:
    """Objects the allowed builtins and modules return, beyond the types above."""
    return [functools.cmp_to_key(lambda a, b: 0)(1), __import__("operator").itemgetter(0),
            __import__("itertools").tee([])[0], iter(lambda: 0, 1), re.finditer("", ""),
            reversed([]), enumerate([]), zip(), map(len, []), filter(None, []),
            collections.namedtuple("T", "lastexam_field"), re.compile("(a)").match("a"), iter(range(0)),
            iter({}), iter(set()), iter(b""), iter(()), (lambda: (yield))(),
            functools.partial(len), functools.partialmethod(len), functools.cached_property(len),
            functools.partialmethod(len)._make_unbound_method(),
            dataclasses.field(), property(), classmethod(len), staticmethod(len), super(int, 1),
            object()]


class Checker:
    """Checks the package's files, all parsed (own module names and imported module names are
    known before any file is checked)."""

    def __init__(self, trees: dict[str, ast.Module]) -> None:
        self.modules, self.members, self.no_read, self.no_assign = tables()
        self.own_modules = {f.removesuffix(".py") for f in trees}
        self.bindings = bindings(trees)
        self.top_level = {f: top_level_names(t) for f, t in trees.items()}
        self.importable = {f: defined_names(t) - self.own_modules for f, t in trees.items()}
        # Names bound to module objects anywhere in the package: such an object may only be
        # read from by its public names (dataclasses.replace, a non-public name, reads as str's).
        self.module_names = {(a.asname or a.name).split(".")[0]
                             for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.Import)
                             for a in n.names}
        self.problems: list[str] = []

    def readable(self, attr: str) -> bool:
        if DUNDER.fullmatch(attr):
            return attr in READ_DUNDERS
        return attr not in self.no_read

    def assignable(self, attr: str) -> bool:
        return not DUNDER.fullmatch(attr) and attr not in self.no_assign

    def why(self, attr: str) -> str:
        if DUNDER.fullmatch(attr):
            return ""
        if attr in PLAIN_ATTRS or attr in self.members:
            return " (a method of plain values or a module's name: not the package's to assign)"
        return " (also an attribute of classes, modules or other objects the package can reach)"

    def name_ok(self, name: str, read: bool = False) -> bool:
        if DUNDER.fullmatch(name):
            return name in (READ_NAME_DUNDERS if read else NAME_DUNDERS)
        return not (hasattr(builtins, name) and name not in ALLOWED_BUILTINS)

    def check(self, fname: str, tree: ast.Module) -> None:
        imported: dict[str, set[tuple[str, tuple[str, ...]]]] = {}  # bound by `import` here
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                child.parent = node  # type: ignore[attr-defined]
            if isinstance(node, ast.Import):
                for a in node.names:
                    # (module, the parts read after the bound name to reach it)
                    imported.setdefault(a.asname or a.name.split(".")[0], set()).add(
                        (a.name, () if a.asname else tuple(a.name.split(".")[1:])))
        # In __init__.py the import system binds each submodule's name to the module, which a
        # read of that name in any scope may reach (a class body falls back to the globals).
        submodules = self.own_modules - {"__init__"} if fname == "__init__.py" else set()
        setattr_calls = set()
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "__setattr__" and isinstance(node.func.ctx, ast.Load)):
                # object.__setattr__(self, "name", value) or super().__setattr__("name", value)
                on = node.func.value
                bound = isinstance(on, ast.Name) and on.id == "object"
                via_super = (isinstance(on, ast.Call) and isinstance(on.func, ast.Name)
                             and on.func.id == "super" and not on.args and not on.keywords)
                args = node.args
                if ((bound or via_super) and len(args) == 2 + bound and not node.keywords
                        and (not bound or isinstance(args[0], ast.Name) and args[0].id == "self")
                        and isinstance(args[bound], ast.Constant) and isinstance(args[bound].value, str)
                        and self.assignable(args[bound].value)
                        and not any(isinstance(a, ast.Starred) for a in args)):
                    setattr_calls.add(id(node.func))
        for node in ast.walk(tree):
            bad = self.problem(node, setattr_calls, submodules)
            if not bad and isinstance(node, ast.Name) and node.id in self.module_names:
                bad = self.module_use(node, imported)
            if bad:
                self.problems.append(f"{fname}:{getattr(node, 'lineno', '?')}: {bad}")

    def module_use(self, node: ast.Name, imported: dict[str, set[str]]) -> str:
        """A module's name is only read from, and only by a public name of that module (through
        `collections.abc.` for `import collections.abc`)."""
        if node.id not in imported or not isinstance(node.ctx, ast.Load):
            return f"uses module name {node.id} other than as the module it names"
        for module, path in imported[node.id]:
            at = node
            for part in [*path, None]:
                parent = getattr(at, "parent", None)
                if not (isinstance(parent, ast.Attribute) and parent.value is at
                        and isinstance(parent.ctx, ast.Load)):
                    break
                if part is None:
                    if parent.attr in self.modules.get(module, set()):
                        return ""
                    break
                if parent.attr != part:
                    break
                at = parent
        return f"uses module {node.id} other than through a public name"

    def problem(self, node: ast.AST, setattr_calls: set[int], submodules: set[str]) -> str:
        if isinstance(node, ast.MatchClass):
            return "uses a class pattern"
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"staticmethod", "classmethod"}):
            # staticmethod(anything) unwraps (its __wrapped__) to any object for inspect
            return f"calls {node.func.id} (use it as a decorator)"
        if isinstance(node, ast.ClassDef) and node.keywords:
            return "uses class keywords"
        if isinstance(node, ast.ClassDef) and (bad := self.class_body_problem(node) or self.bases_problem(node)):
            return bad
        if isinstance(node, ast.Name | ast.arg | ast.alias) and \
                (node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg)
                 else (node.asname or node.name).split(".")[0]) in submodules:
            return "uses the name of one of the package's modules in __init__.py"
        if isinstance(node, ast.Name) and not self.name_ok(node.id, isinstance(node.ctx, ast.Load)):
            return f"uses {node.id}" if isinstance(node.ctx, ast.Load) else f"assigns {node.id}"
        if isinstance(node, ast.arg | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = node.arg if isinstance(node, ast.arg) else node.name
            if name in SPECIAL_METHODS if DUNDER.fullmatch(name) else self.name_ok(name):
                return ""
            return f"defines {name}"
        if isinstance(node, ast.Attribute):
            if isinstance(node.ctx, ast.Load):
                if node.attr == "__setattr__":
                    return "" if id(node) in setattr_calls else (
                        "uses __setattr__ other than object.__setattr__(self, 'name', value) or "
                        "super().__setattr__('name', value) with a name of its own")
                if not self.readable(node.attr):
                    return f"reads attribute {node.attr}{self.why(node.attr)}"
                if node.attr in SPECIAL_METHODS and not self.own_method_call(node.value, node):
                    # K.__init__(other, ...) would run K's (generated) code on another object
                    return (f"reads {node.attr} other than from super() or object "
                            "(a class's special method runs on its own instances only)")
            elif not self.assignable(node.attr):
                return f"assigns attribute {node.attr}{self.why(node.attr)}"
        names = (node.names if isinstance(node, ast.Global | ast.Nonlocal) else
                 [node.name] if isinstance(node, ast.MatchAs | ast.MatchStar | ast.ExceptHandler)
                 and node.name else [node.rest] if isinstance(node, ast.MatchMapping) and node.rest
                 else [])
        if bad := [n for n in names if not self.name_ok(n)]:
            return f"uses {bad[0]}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            return self.import_problem(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                (DUNDER.fullmatch(node.value) and node.value not in READ_DUNDERS | READ_NAME_DUNDERS)
                or node.value in FRAME_ATTRS):
            return f"uses {node.value}"
        return ""

    def check_globals(self, fname: str, text: str) -> None:
        """Every global a module reads is one it binds itself, or an allowed builtin; in
        __init__.py none is named after a submodule (the import system binds it to the module,
        whose globals lead anywhere, even over a binding of the package's own)."""
        bound = self.top_level[fname]
        submodules = self.own_modules - {"__init__"} if fname == "__init__.py" else set()
        for name in sorted(global_reads(text, fname)):
            if name in submodules:
                self.problems.append(f"{fname}: uses {name}, the name of the package's module, "
                                     "as a global (the import system binds it to the module)")
            elif name not in bound and name not in ALLOWED_BUILTINS and \
                    not (DUNDER.fullmatch(name) and name in READ_NAME_DUNDERS):
                self.problems.append(f"{fname}: reads {name} as a global, which it never binds")

    @staticmethod
    def own_method_call(value: ast.expr, node: ast.Attribute) -> bool:
        """object, or super() (no arguments) in a method of the same name (super().__init__ in
        __init__): where the package may take special methods. Elsewhere super() in a
        classmethod hands out the base's function, to run on any object."""
        if isinstance(value, ast.Name) and value.id == "object":
            return True
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "super" and not value.args and not value.keywords):
            return False
        at = getattr(node, "parent", None)
        while at is not None and not isinstance(at, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            at = getattr(at, "parent", None)
        return isinstance(at, ast.FunctionDef | ast.AsyncFunctionDef) and at.name == node.attr

    def bases_problem(self, node: ast.ClassDef) -> str:
        """A class derives only from the package's own classes, object, exceptions, plain value
        types, the abstract classes of collections.abc, numbers and abc, the collections
        containers and a namedtuple: a callable base (functools.partial, staticmethod) would
        make instances that the standard library compares with its own objects (inspect's `obj
        in (type, object)`), handing them to the package's __eq__. What a base names is checked
        by every way the package binds that name (`import functools as collections`, `tuple =
        partial`, a second binding of a class's name), not by its spelling."""
        for base in node.bases:
            target = base.func if isinstance(base, ast.Call) else base
            resolved = self.resolve(target)
            if isinstance(base, ast.Call):
                ok = resolved == "collections.namedtuple"
            else:
                ok = resolved is not None and (
                    resolved.startswith("class:") or resolved.startswith("builtins.")
                    and resolved.removeprefix("builtins.") in BASE_NAMES
                    or resolved.rpartition(".")[0] in BASE_MODULES
                    and resolved.rpartition(".")[2] in self.members
                    and resolved.rpartition(".")[2] not in NOT_BASES)
            if ok and resolved is not None and not resolved.startswith("class:") and \
                    "__call__" in dir(base_class(resolved)):
                ok = False  # collections.abc.Callable: instances callable, so inspect compares them
            if not ok:
                return f"class {node.name} derives from {ast.unparse(base)}, which is not an allowed base"
        return ""

    def resolve(self, expr: ast.expr) -> str | None:
        """What a base expression names, when every binding of its names in the package agrees:
        "class:Name" (only its class statement, and `from` imports of it under its own name),
        "builtins.x" (a builtin the package never binds), "module.member" (only `import module`
        or `from module import member`, unaliased); else None."""
        if isinstance(expr, ast.Attribute):
            inner = self.resolve_module(expr.value)
            return f"{inner}.{expr.attr}" if inner else None
        if not isinstance(expr, ast.Name):
            return None
        kinds = self.bindings.get(expr.id, [])
        if not kinds:
            return f"builtins.{expr.id}" if hasattr(builtins, expr.id) else None
        classes = [k for k in kinds if k == ("class",)]
        rest = {k for k in kinds if k != ("class",)}
        if len(classes) == 1 and all(k[0] == "own-from" for k in rest):
            return f"class:{expr.id}"
        if not classes and len(rest) == 1 and next(iter(rest))[0] == "from":
            return f"{next(iter(rest))[1]}.{expr.id}"
        return None

    def resolve_module(self, expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Attribute):
            inner = self.resolve_module(expr.value)
            return f"{inner}.{expr.attr}" if inner and f"{inner}.{expr.attr}" in BASE_MODULES else None
        if isinstance(expr, ast.Name):
            kinds = set(self.bindings.get(expr.id, []))
            if len(kinds) == 1 and next(iter(kinds))[0] == "import":
                return next(iter(kinds))[1]
        return None

    def class_body_problem(self, node: ast.ClassDef) -> str:
        """Names a class body binds become attributes (of the class, and through dataclass or
        namedtuple code generated from them, of instances): the rules of assigned attributes."""
        for stmt in node.body:
            names = ([stmt.name] if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                     else [n.id for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                           for n in ast.walk(t) if isinstance(n, ast.Name)]
                     if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign) else [])
            for name in names:
                if not (name in NAME_DUNDERS or self.assignable(name) and self.readable(name)):
                    return f"defines {name} in class {node.name}{self.why(name)}"
        return ""

    def own_target(self, node: ast.ImportFrom) -> str:
        """The package file a `from ... import` of the package reads ("" when none)."""
        parts = (node.module or "").split(".") if node.module else []
        if node.level == 0:
            parts = parts[1:]  # semverkit.version -> version
        elif node.level > 1:
            return ""
        name = ".".join(parts) or "__init__"
        return f"{name}.py" if f"{name}.py" in self.top_level else ""

    def import_problem(self, node: ast.Import | ast.ImportFrom) -> str:
        own = isinstance(node, ast.ImportFrom) and (
            node.level > 0 or (node.module or "").split(".")[0] == "semverkit")
        for alias in node.names:
            if alias.name == "*":
                return "imports *"
            bound = (alias.asname or alias.name).split(".")[0]
            if not self.name_ok(bound) or DUNDER.fullmatch(alias.name.split(".")[-1]):
                return f"imports {alias.name}"
            if own:
                # Only a name the target file binds at its top level (not a module: neither one
                # of the package's nor one it imported): any other name makes the import system
                # look for a submodule.
                target = self.own_target(node)
                if alias.name not in self.importable.get(target, set()):
                    return (f"imports {alias.name} from {target or 'outside the package'}: only "
                            "names its top level defines by class, def or assignment")
                continue
            module = node.module if isinstance(node, ast.ImportFrom) else alias.name
            if module is None or module.split(".")[0] == "semverkit":
                return f"imports {module or alias.name} (import the names its modules define)"
            if module not in PLAIN_IMPORTS:
                return f"imports {module}"
            if isinstance(node, ast.ImportFrom) and module != "__future__" \
                    and alias.name not in self.modules[module]:
                return f"imports {alias.name} from {module}"
        return ""


SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
          ast.SetComp, ast.DictComp, ast.GeneratorExp)


def base_class(resolved: str) -> object:
    """The class a resolved base names ("builtins.tuple", "collections.abc.Callable")."""
    module, _, name = resolved.rpartition(".")
    return getattr(builtins if module == "builtins" else importlib.import_module(module), name, None)


def bindings(trees: dict[str, ast.Module]) -> dict[str, list[tuple[str, ...]]]:
    """Every way each name is bound anywhere in the package: ("class",), ("import", module)
    for `import module` (the top name, unaliased), ("from", module) for an unaliased `from
    module import name`, ("own-from",) for such an import from the package itself, ("other",)
    for anything else (an assignment, a parameter, a def, an alias, a loop or except target)."""
    found: dict[str, list[tuple[str, ...]]] = {}

    def add(name: str, kind: tuple[str, ...]) -> None:
        found.setdefault(name, []).append(kind)

    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                add(node.name, ("class",))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                add(node.name, ("other",))
            elif isinstance(node, ast.arg):
                add(node.arg, ("other",))
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                add(node.id, ("other",))
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
                add(node.name, ("other",))
            elif isinstance(node, ast.MatchMapping) and node.rest:
                add(node.rest, ("other",))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        add(a.asname, ("other",))
                    else:
                        add(a.name.split(".")[0], ("import", a.name.split(".")[0]))
            elif isinstance(node, ast.ImportFrom):
                own = node.level > 0 or (node.module or "").split(".")[0] == "semverkit"
                for a in node.names:
                    kind = ("other",) if a.asname and a.asname != a.name else \
                        ("own-from",) if own else ("from", node.module or "")
                    add(a.asname or a.name, kind)
    return found


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds explicitly: by statements at its top level (not an annotation
    without a value), and through `global` in its functions. The import system binds others
    unseen (a package's submodules), and those must never be read as globals."""
    names: set[str] = set()

    def module_scope(node: ast.AST):
        for child in ast.iter_child_nodes(node):
            yield child
            if not isinstance(child, SCOPES):
                yield from module_scope(child)

    for node in module_scope(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and node.value is None:
            node.target.unbound = True  # type: ignore[attr-defined]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                not getattr(node, "unbound", False):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            declared = {n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names}
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store) and n.id in declared}
    return {n for n in names if not DUNDER.fullmatch(n)}


def defined_names(tree: ast.Module) -> set[str]:
    """Names a module's own statements define directly at its top level (not inside `if` or
    `try`): classes, functions, assignments with a value, and names taken from other modules
    by `from` (not modules bound by `import`)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return {n for n in names if not DUNDER.fullmatch(n)}


def global_reads(text: str, fname: str) -> set[str]:
    """Names the module's code reads as globals (or builtins), in any scope."""
    found: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        module = table.get_type() == "module"
        for sym in table.get_symbols():
            if sym.is_referenced() and (module or sym.is_global()):
                found.add(sym.get_name())
        for child in table.get_children():
            walk(child)

    walk(symtable.symtable(text, fname, "exec"))
    return found


def plain_problems(sources: dict[str, str]) -> list[str]:
    """What in the package's files is not plain code (empty: plain)."""
    problems, trees = [], {}
    for fname, text in sources.items():
        try:
            trees[fname] = ast.parse(text)
        except SyntaxError as e:
            problems.append(f"{fname}:{e.lineno}: syntax error")
    checker = Checker(trees)
    for fname, tree in trees.items():
        checker.check(fname, tree)
        checker.check_globals(fname, sources[fname])
    return problems + checker.problems
