"""The ``eval-*`` lines of a policy, turned into one :class:`EvalRules` per profile.

A profile is the set of lines written ``key=value`` (the default profile) or
``key:NAME=value`` (profile ``NAME``). A named profile starts empty: it does not inherit the
default profile's lines, so each call site states everything its sources may use. In list keys
``DENY:item`` wins over any allow of the same item, whatever the order.

Nothing here runs evaluated code; building the rules imports ``ast`` (the node names of
``eval-syntax``) and the modules named by ``eval-import`` (to know their public names).
"""

from __future__ import annotations

import builtins
import datetime
import decimal
import fractions
import sys

from pysandboxes.errors import ConfigError, ConfigProblem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from pysandboxes.policy.model import Policy, RuleLine

#: Node types every source may contain: the skeleton of a module or an expression. Calls,
#: names and attributes are judged one by one by the checker.
BASE_NODES: tuple[str, ...] = (
    "Module",
    "Expression",
    "Interactive",
    "Expr",
    "Constant",
    "Name",
    "Load",
    "Store",
    "Del",
    "List",
    "Tuple",
    "Dict",
    "Set",
    "Call",
    "keyword",
    "Starred",
    "Attribute",
    "Pass",
)

#: ``eval-syntax`` groups: the ``ast`` node types each one allows (CPython 3.11 to 3.13).
SYNTAX_GROUPS: dict[str, tuple[str, ...]] = {
    "arith": (
        "BinOp",
        "UnaryOp",
        "Add",
        "Sub",
        "Mult",
        "Div",
        "FloorDiv",
        "Mod",
        "Pow",
        "LShift",
        "RShift",
        "BitOr",
        "BitXor",
        "BitAnd",
        "MatMult",
        "UAdd",
        "USub",
        "Invert",
    ),
    "compare": (
        "Compare",
        "Eq",
        "NotEq",
        "Lt",
        "LtE",
        "Gt",
        "GtE",
        "Is",
        "IsNot",
        "In",
        "NotIn",
        "BoolOp",
        "And",
        "Or",
        "Not",
    ),
    "conditional": (
        "IfExp",
        "If",
        "Match",
        "match_case",
        "MatchValue",
        "MatchSingleton",
        "MatchSequence",
        "MatchMapping",
        "MatchStar",
        "MatchAs",
        "MatchOr",
    ),
    "loop": ("For", "While", "Break", "Continue"),
    "comprehension": ("ListComp", "SetComp", "DictComp", "GeneratorExp", "comprehension"),
    "assign": ("Assign", "AugAssign", "AnnAssign", "NamedExpr", "Delete"),
    "func": ("FunctionDef", "Lambda", "arguments", "arg", "Return", "Nonlocal", "Global"),
    "subscript": ("Subscript", "Slice"),
    "fstring": ("JoinedStr", "FormattedValue"),
    "exception": ("Try", "TryStar", "ExceptHandler", "Raise", "Assert"),
    "context": ("With", "withitem"),
    "import": ("Import", "ImportFrom", "alias"),
    "yield": ("Yield", "YieldFrom"),
    "async": ("AsyncFunctionDef", "Await", "AsyncFor", "AsyncWith"),
    "class": ("ClassDef",),
}
#: Groups of a profile that has no ``eval-syntax`` line: the expression language.
DEFAULT_GROUPS: tuple[str, ...] = ("arith", "compare", "conditional", "subscript", "fstring")
#: Node types no rule can allow: ``match`` class patterns read attributes (``__match_args__``
#: and the names it lists) with no check the rewrite could insert.
NEVER_NODES: frozenset[str] = frozenset({"MatchClass"})

#: Builtins that ``eval-call`` can grant (the guard replaces some by checked versions).
GRANTABLE_BUILTINS: frozenset[str] = frozenset(
    [
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "bool",
        "bytearray",
        "bytes",
        "callable",
        "chr",
        "complex",
        "dict",
        "divmod",
        "enumerate",
        "filter",
        "float",
        "format",
        "frozenset",
        "getattr",
        "hasattr",
        "hash",
        "hex",
        "id",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "object",
        "oct",
        "ord",
        "pow",
        "print",
        "property",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "slice",
        "sorted",
        "staticmethod",
        "classmethod",
        "str",
        "sum",
        "super",
        "tuple",
        "type",
        "zip",
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "Exception",
        "IndexError",
        "KeyError",
        "LookupError",
        "NameError",
        "NotImplementedError",
        "OverflowError",
        "RuntimeError",
        "StopIteration",
        "TypeError",
        "ValueError",
        "ZeroDivisionError",
    ]
)
#: Builtins that no rule can grant to evaluated code, with the reason shown in the error.
NEVER_BUILTINS: dict[str, str] = {
    "eval": "runs source text",
    "exec": "runs source text",
    "compile": "builds code objects",
    "__import__": "imports any module",
    "open": "opens host files",
    "input": "reads the host's stdin",
    "breakpoint": "starts a debugger in the host",
    "help": "starts the interactive help in the host",
    "exit": "ends the host process",
    "quit": "ends the host process",
    "copyright": "an interactive helper",
    "credits": "an interactive helper",
    "license": "an interactive helper",
    "globals": "hands out the namespace",
    "locals": "hands out the namespace",
    "vars": "hands out an object's __dict__",
    "dir": "lists private and dunder names",
    "setattr": "writes any attribute (write the attribute in the source instead)",
    "delattr": "deletes any attribute",
    "memoryview": "raw memory views",
    "aiter": "asynchronous iteration is not bounded",
    "anext": "asynchronous iteration is not bounded",
    "BaseException": "would catch the guard's own interruption",
    "KeyboardInterrupt": "would catch the guard's own interruption",
    "SystemExit": "ends the host process",
    "GeneratorExit": "generator internals",
}

#: Modules no ``eval-import`` line can grant: each hands out the host (files, processes,
#: frames, the interpreter) or walks attributes by name with no check
#: (``operator.attrgetter``, ``string.Formatter``).
NEVER_MODULES: frozenset[str] = frozenset(
    [
        "os",
        "posix",
        "nt",
        "sys",
        "builtins",
        "importlib",
        "inspect",
        "gc",
        "ctypes",
        "subprocess",
        "operator",
        "string",
        "pickle",
        "marshal",
        "shelve",
        "types",
        "code",
        "codeop",
        "runpy",
        "threading",
        "multiprocessing",
        "concurrent",
        "signal",
        "io",
        "pathlib",
        "shutil",
        "socket",
        "asyncio",
        "pdb",
        "bdb",
        "traceback",
        "weakref",
        "copyreg",
        "sysconfig",
        "site",
        "platform",
        "tempfile",
        "resource",
        "faulthandler",
        "tracemalloc",
        "dis",
        "ast",
        "symtable",
        "zipimport",
        "pkgutil",
        "linecache",
        "unittest",
        "doctest",
        "timeit",
        "trace",
        "cProfile",
        "profile",
        "pty",
        "fcntl",
        "mmap",
        "select",
        "selectors",
        "ssl",
        "urllib",
        "http",
        "ftplib",
        "smtplib",
        "webbrowser",
        "sqlite3",
        "dbm",
        "tkinter",
        "ensurepip",
        "venv",
        "distutils",
        "setuptools",
        "pip",
        "pysandboxes",
        "dataclasses",
        "abc",
        "functools",
        "contextlib",
        "atexit",
        "glob",
        "fnmatch",
        "zipfile",
        "tarfile",
        "logging",
        "warnings",
        # files, the terminal, processes and the host's accounts, by other names
        "posixpath",
        "ntpath",
        "genericpath",
        "fileinput",
        "filecmp",
        "configparser",
        "mailbox",
        "mailcap",
        "netrc",
        "mimetypes",
        "imghdr",
        "sndhdr",
        "wave",
        "aifc",
        "sunau",
        "tabnanny",
        "pyclbr",
        "modulefinder",
        "py_compile",
        "compileall",
        "zipapp",
        "getpass",
        "pwd",
        "grp",
        "spwd",
        "crypt",
        "termios",
        "tty",
        "curses",
        "readline",
        "rlcompleter",
        "pydoc",
        "antigravity",
        "this",
        "turtle",
        "idlelib",
        "lib2to3",
        "cmd",
        "argparse",  # parse errors call sys.exit
        "optparse",
        "xml",
        "plistlib",
        "socketserver",
        "xmlrpc",
        "wsgiref",
        "smtpd",
        "asynchat",
        "asyncore",
        "imaplib",
        "poplib",
        "nntplib",
        "telnetlib",
        "syslog",
        "nis",
        "pickletools",
        "encodings",
    ]
)

#: Dunder names no ``eval-magic`` line can grant: each leads out of the evaluated code's
#: objects (classes, globals, frames, code) or replaces attribute lookup itself.
NEVER_MAGIC: frozenset[str] = frozenset(
    [
        "__globals__",
        "__code__",
        "__closure__",
        "__builtins__",
        "__subclasses__",
        "__bases__",
        "__base__",
        "__mro__",
        "__class__",
        "__dict__",
        "__getattribute__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__reduce__",
        "__reduce_ex__",
        "__self__",
        "__func__",
        "__wrapped__",
        "__init_subclass__",
        "__subclasshook__",
        "__import__",
        "__loader__",
        "__spec__",
        "__traceback__",
        "__objclass__",
        "__set_name__",
        "__class_getitem__",
        "__weakref__",
        "__slots__",
        "__module__",
        "__defaults__",
        "__kwdefaults__",
        "__annotations__",
        "__qualname__",
        "__name__",
        "__doc__",
        "__new__",
        "__del__",
        "__exit__",
        "__aexit__",
        "__getstate__",
        "__setstate__",
        "__prepare__",
        "__instancecheck__",
        "__subclasscheck__",
        "__format__",
    ]
)


#: Functions of modules an ``eval-import`` line may grant that no rule can hand to
#: evaluated code: they run processes, read the terminal, write to the host's stdout past
#: ``eval-max-output`` or change the module's process-wide behaviour, whatever the profile.
#: By module, exact names and name prefixes.
NEVER_FUNCTIONS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "sympy": (
        frozenset(
            {
                "test",  # runs sympy's test suite (pytest, subprocesses)
                "doctest",
                "preview",  # runs latex and a viewer, writes files
                "pager_print",  # runs a pager
                "interactive_traversal",  # reads the terminal
                "pprint",  # prints to the process's stdout, past eval-max-output
                "pretty_print",
                "pprint_use_unicode",  # process-wide printing settings
                "pprint_try_use_unicode",
                "textplot",
                "var",  # writes into its caller's globals
            }
        ),
        ("print_", "plot", "init_"),  # print_gtk runs a viewer; init_session an interpreter
    ),
    # standard modules that are fine to grant but for a few functions
    "codecs": (frozenset({"open", "EncodedFile"}), ()),  # host files
    "gzip": (frozenset({"open", "GzipFile"}), ()),
    "bz2": (frozenset({"open", "BZ2File"}), ()),
    "lzma": (frozenset({"open", "LZMAFile"}), ()),
    "tokenize": (frozenset({"open", "detect_encoding"}), ()),
    "time": (frozenset({"sleep"}), ()),  # one C call nothing interrupts in-process
    "uuid": (frozenset({"getnode", "uuid1"}), ()),  # may run ifconfig or ip
    "locale": (frozenset({"setlocale", "resetlocale"}), ()),  # the host's locale
    "pprint": (frozenset({"pprint", "pp"}), ()),  # stdout past eval-max-output
    "calendar": (frozenset({"prcal", "prmonth"}), ()),
}


def never_function(module: str, name: str) -> str | None:
    """Why ``module.name`` can never be called by evaluated code, or ``None``."""

    found = NEVER_FUNCTIONS.get(module.partition(".")[0])
    if found is None:
        return None
    names, prefixes = found
    if name in names or name.startswith(prefixes):
        return (
            f"{module}.{name} is never available to evaluated code (it opens host files, runs "
            "processes, reads the terminal, sleeps, prints past eval-max-output or changes "
            "process-wide state)"
        )
    return None


def _public_methods(*types: type) -> frozenset[str]:
    return frozenset(name for kind in types for name in dir(kind) if not name.startswith("_"))


#: ``eval-attribute`` groups: the types they apply to and the names they allow on them.
ATTRIBUTE_GROUPS: dict[str, tuple[tuple[type, ...], frozenset[str]]] = {
    "str-methods": ((str, bytes, bytearray), _public_methods(str, bytes, bytearray)),
    "list-methods": ((list, tuple), _public_methods(list, tuple)),
    # tuple's own (count, index), for a profile that hands out tuples and no list (issue 26:
    # users write the group of the type they mean).
    "tuple-methods": ((tuple,), _public_methods(tuple)),
    "dict-methods": ((dict,), _public_methods(dict)),
    "set-methods": ((set, frozenset), _public_methods(set, frozenset)),
    "num-methods": (
        (int, float, complex, bool, fractions.Fraction, decimal.Decimal),
        _public_methods(int, float, complex, fractions.Fraction, decimal.Decimal),
    ),
    "date-methods": (
        (datetime.date, datetime.datetime, datetime.time, datetime.timedelta),
        _public_methods(datetime.date, datetime.datetime, datetime.time, datetime.timedelta),
    ),
}

#: Default budgets: (value, unit) of each single-valued key.
DEFAULTS: dict[str, float] = {
    "eval-timeout": 2.0,
    "eval-max-iterations": 1_000_000,
    "eval-max-call-depth": 100,
    "eval-max-alloc": 64 * 1024 * 1024,
    "eval-max-nodes": 10_000,
    "eval-max-output": 1024 * 1024,
}
_SCALE = {"K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024}


def _number(value: str) -> int:
    """``64M`` -> 67108864 (binary multiples, for every budget)."""

    scale = _SCALE.get(value[-1:].upper(), 1)
    return int(value[:-1] if scale != 1 else value) * scale


def _seconds(value: str) -> float:
    if value.endswith("ms"):
        return float(value[:-2]) / 1000
    return float(value[:-1])


class EvalRules:
    """The effective ``eval-*`` rules of one profile (immutable once built).

    ``nodes``: allowed ``ast`` node class names; ``calls``: names that may be called and the
    builtins present; ``attributes``/``attribute_groups``/``denied_attributes``; ``imports``;
    ``magic``; the budgets; ``lines``: the lines the profile was built from (for messages).
    """

    __slots__ = (
        "attribute_groups",
        "attributes",
        "calls",
        "denied_attributes",
        "denied_calls",
        "imports",
        "lines",
        "magic",
        "max_alloc",
        "max_call_depth",
        "max_iterations",
        "max_nodes",
        "max_output",
        "namespace",
        "nodes",
        "profile",
        "timeout",
    )

    profile: str | None
    nodes: frozenset[str]
    calls: frozenset[str]
    denied_calls: frozenset[str]
    attributes: frozenset[str]
    attribute_groups: tuple[str, ...]
    denied_attributes: frozenset[str]
    imports: frozenset[str]
    magic: frozenset[str]
    namespace: str
    timeout: float
    max_iterations: int
    max_call_depth: int
    max_alloc: int
    max_nodes: int
    max_output: int
    lines: tuple[RuleLine, ...]

    def __init__(self, **values: Any) -> None:
        for name in self.__slots__:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("EvalRules is immutable")

    def key(self, base: str) -> str:
        """The key as the profile spells it (``eval-call`` or ``eval-call:calc``)."""

        return base if self.profile is None else f"{base}:{self.profile}"

    def module_names(self) -> frozenset[str]:
        """Public names of the granted modules and of their classes. Computed at the first
        check, not when the rules are built: python-sb builds them before the program runs,
        when a third-party module such as sympy may not be importable yet."""

        found = _MODULE_NAMES.get(self.imports)
        if found is None:
            names: set[str] = set()
            for module in self.imports:
                names |= _module_public_names(module)
            found = _MODULE_NAMES[self.imports] = frozenset(names)
        return found

    def possible_attribute(self, name: str) -> bool:
        """Whether some object the rules can hand out may have ``name`` readable (the check
        before running uses it; the decision by type is taken while the source runs)."""

        if name in self.denied_attributes:
            return False
        if name in self.attributes or name in self.module_names():
            return True
        return any(name in ATTRIBUTE_GROUPS[g][1] for g in self.attribute_groups)


_MODULE_NAMES: dict[frozenset[str], frozenset[str]] = {}


def profiles(policy: Policy) -> list[str | None]:
    """The profiles the policy defines (``None`` is the default profile)."""

    found: dict[str | None, None] = {}
    for line in policy.eval_rules:
        _base, _colon, name = line.key.partition(":")
        found[name or None] = None
    return list(found)


def _split(value: str) -> Iterable[tuple[bool, str]]:
    for item in value.split(","):
        item = item.strip()
        if item.startswith("DENY:"):
            yield True, item[5:].strip()
        else:
            yield False, item


def build(policy: Policy, profile: str | None) -> EvalRules:
    """The rules of ``profile`` in ``policy``; :class:`ConfigError` for an unknown profile or a
    grant no rule may give (every problem at once)."""

    lines = tuple(
        line for line in policy.eval_rules if (line.key.partition(":")[2] or None) == profile
    )
    if not lines:
        known = ", ".join(repr(p) if p else "the default profile" for p in profiles(policy))
        what = f"eval-* profile {profile!r}" if profile else "the default eval-* profile"
        raise ConfigError(
            f"{what} has no rule line (write eval-*:{profile or 'NAME'}=... lines; "
            f"defined: {known or 'none'})"
        )
    problems: list[ConfigProblem] = []
    allow: dict[str, set[str]] = {}
    deny: dict[str, set[str]] = {}
    singles: dict[str, str] = {}
    for line in lines:
        base = line.key.partition(":")[0]
        if base in DEFAULTS or base == "eval-namespace":
            singles[base] = line.value
            continue
        for denied, item in _split(line.value):
            (deny if denied else allow).setdefault(base, set()).add(item)
            if denied:
                continue
            message = _never(base, item)
            if message:
                problems.append(
                    ConfigProblem(str(line.origin), f"{line.text}: {message}", line.origin.sort_key)
                )
    if problems:
        raise ConfigError(problems)

    nodes: set[str] = set(BASE_NODES)
    groups = allow.get("eval-syntax") or set(DEFAULT_GROUPS)
    denied_syntax = deny.get("eval-syntax", set())
    for item in groups - denied_syntax:
        nodes.update(SYNTAX_GROUPS.get(item, (item,)))
    for item in denied_syntax:
        nodes.difference_update(SYNTAX_GROUPS.get(item, (item,)))
    nodes -= NEVER_NODES

    attrs = allow.get("eval-attribute", set())
    denied_attrs = deny.get("eval-attribute", set())
    attribute_groups = tuple(
        sorted(g for g in attrs if g in ATTRIBUTE_GROUPS and g not in denied_attrs)
    )
    denied_groups = [g for g in denied_attrs if g in ATTRIBUTE_GROUPS]
    denied_names = {n for n in denied_attrs if n not in ATTRIBUTE_GROUPS}
    for group in denied_groups:
        denied_names |= set(ATTRIBUTE_GROUPS[group][1])
    imports = frozenset(allow.get("eval-import", set()) - deny.get("eval-import", set()))
    budgets = {key: singles.get(key) for key in DEFAULTS}
    return EvalRules(
        profile=profile,
        nodes=frozenset(nodes),
        calls=frozenset(allow.get("eval-call", set()) - deny.get("eval-call", set())),
        denied_calls=frozenset(deny.get("eval-call", set())),
        attributes=frozenset(n for n in attrs if n not in ATTRIBUTE_GROUPS) - denied_names,
        attribute_groups=attribute_groups,
        denied_attributes=frozenset(denied_names),
        imports=imports,
        magic=frozenset(allow.get("eval-magic", set()) - deny.get("eval-magic", set())),
        namespace=singles.get("eval-namespace", "closed"),
        timeout=_seconds(budgets["eval-timeout"] or "2s"),
        max_iterations=_budget(budgets, "eval-max-iterations"),
        max_call_depth=_budget(budgets, "eval-max-call-depth"),
        max_alloc=_budget(budgets, "eval-max-alloc"),
        max_nodes=_budget(budgets, "eval-max-nodes"),
        max_output=_budget(budgets, "eval-max-output"),
        lines=lines,
    )


def _budget(budgets: dict[str, str | None], key: str) -> int:
    value = budgets[key]
    return int(DEFAULTS[key]) if value is None else _number(value)


def _never(base: str, item: str) -> str | None:
    """Why ``item`` can never be granted by ``base``, or ``None``."""

    if base == "eval-call":
        if item in NEVER_BUILTINS:
            return f"{item} cannot be granted to evaluated code ({NEVER_BUILTINS[item]})"
        top = item.partition(".")[0]
        if "." in item and (top in NEVER_MODULES or top.startswith("_")):
            return f"{item} cannot be granted: module {top} is never available to evaluated code"
    if base == "eval-import":
        top = item.partition(".")[0]
        if top in NEVER_MODULES or any(p.startswith("_") for p in item.split(".")):
            return (
                f"module {item} cannot be granted to evaluated code: it hands out the host "
                "(files, processes, frames, the interpreter) or reads attributes by name unchecked"
            )
    if base == "eval-magic" and item in NEVER_MAGIC:
        return f"{item} cannot be granted: it leads out of the evaluated code's own objects"
    if base == "eval-syntax" and item in NEVER_NODES:
        return f"{item} cannot be granted: class patterns read attributes with no check"
    return None


def _module_public_names(name: str) -> set[str]:
    """Public attribute names of module ``name`` and of its public classes (for the check before
    running; a module that cannot be imported contributes nothing and fails when imported)."""

    module = sys.modules.get(name)
    if module is None:
        try:
            import importlib

            module = importlib.import_module(name)
        except Exception:
            return set()
    found: set[str] = set()
    for attr, value in list(vars(module).items()):
        if attr.startswith("_"):
            continue
        found.add(attr)
        if isinstance(value, type):
            found.update(n for n in dir(value) if not n.startswith("_"))
    return found


def builtin_names() -> frozenset[str]:
    """Every name of the real builtins module (a source naming one needs ``eval-call``)."""

    return frozenset(vars(builtins))
