"""What the guard uses after arming cannot be changed by the program without an audit event.

The guard's modules are in ``sys.modules``: a program can rebind any name in their namespaces
(a module attribute is set with no audit event), change a function's ``__kwdefaults__`` dict
item by item, and rewrite a closure cell (``cell.cell_contents = x``) -- none raises an event
in CPython 3.11. So the code that runs after arming (the hook's handlers, the hidden
generators' ``before``/``after`` and the functions they call) must

- look no name up in a module's globals (builtins included): everything is captured in a
  closure when the guard is armed (``attacks/disarm_import_check_builtin_global.py``,
  ``attacks/disarm_busy_from_worker_operation_global.py``, review
  ``r5_files_sqlite_uri_parser_global.py``);
- when it is a module-level function (reachable through its module), keep what it binds at
  import in *positional* defaults -- a tuple, which cannot change (assigning ``__defaults__``
  raises an event, refused) -- never in keyword defaults or a closure
  (``attacks/files_exact_text_kwdefaults_in_place.py``, ``files_request_check_cell.py``,
  review ``r5_disarm_hide_kwdefaults_in_place.py``).

These two tests read the code (``dis``) rather than run it: they fail on the next closure or
module function that breaks the rule, whichever path of the guard calls it.
"""

from __future__ import annotations

import dis
import importlib
import pkgutil
import subprocess
import sys
import types

import pysandboxes.guard

#: The guard's modules, the record base its tables are made of (``pysandboxes/record.py``,
#: below every layer that uses it), and the path precedence whose matcher it calls
#: (``pysandboxes/policy/precedence.py``, shared with ``policy/decide``).
#: The compiled accelerator (``guard/_accelerator.c``) has no Python code: its hand-out is
#: tested in ``test_accelerator.py``.
GUARD_MODULES = sorted(
    [
        "pysandboxes.guard." + info.name
        for info in pkgutil.iter_modules(pysandboxes.guard.__path__)
        if info.name != "_accelerator"
    ]
    + ["pysandboxes.record", "pysandboxes.policy.precedence"]
)

#: Closures that read globals and never run after arming (or run on the program's side only),
#: by qualified name; a key ending in ".*" covers everything defined inside it.
ARM_TIME_ONLY = {
    "files.build_table.*": "builds the path table when the guard is armed",
    "precedence.order_rows.<lambda>": "sorts the path table when the guard is armed",
    "hook._roots.*": "library roots, computed when the guard is armed",
    "hook.install.<genexpr>": "the hook's installation",
    "kit.capture.<genexpr>": "the Kit, collected when the guard is armed",
    "native_files.install.<dictcomp>": "the private copy of WRAPPED, made when armed",
    "record._RecordType.*": "record classes are made on import, their instances when the "
    "guard is armed (a __repr__ runs only when the program asks for one: its own call)",
    "record.Record.*": "the records' own methods (equality, repr, replace, to_dict): the guard "
    "builds and reads its records through captured slot descriptors and tuple items, and "
    "calls none of these after arming",
    "wrappers._replace_everywhere.<listcomp>": "the aliases' replacement, when armed",
    "wrappers.FilteredScandir.*": "the program's own iterator (os.scandir's answer): decides "
    "nothing",
    "imports.StashFinder.__init__": "the stash's finder, made when the guard is armed (its "
    "hidden operation, a closure of its own, is checked)",
}


#: Code that reads globals after arming, but only ever runs rebuilt on a namespace of its own,
#: made when the guard is armed, never on its module's globals (checked below).
OWN_GLOBALS = {
    "imports._checked_import.__import__": "the checked builtins.__import__: install_import_check "
    "runs its code on the namespace that holds what it reads",
}


def _nested_codes(code: types.CodeType, qualname: str) -> list[tuple[str, types.CodeType]]:
    found = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            name = qualname + "." + const.co_name
            found.append((name, const))
            found.extend(_nested_codes(const, name))
    return found


def _arm_time(qualname: str) -> bool:
    if qualname in OWN_GLOBALS:
        return True
    for key in ARM_TIME_ONLY:
        if qualname == key or (key.endswith(".*") and qualname.startswith(key[:-1])):
            return True
    return False


def test_closures_look_no_global_name_up() -> None:
    offenders = {}
    for name in GUARD_MODULES:
        module = importlib.import_module(name)
        assert module.__file__ is not None
        with open(module.__file__, encoding="utf-8") as handle:
            code = compile(handle.read(), module.__file__, "exec")
        short = name.rpartition(".")[2]
        for function in (c for c in code.co_consts if isinstance(c, types.CodeType)):
            for qualname, nested in _nested_codes(function, short + "." + function.co_name):
                names = {
                    i.argval for i in dis.get_instructions(nested) if i.opname == "LOAD_GLOBAL"
                }
                if names and not _arm_time(qualname):
                    offenders[qualname] = sorted(names)
    assert offenders == {}, (
        "closures of the guard that run after arming look these names up in their module's "
        f"globals (capture them when the guard is armed): {offenders}"
    )


CHECKED_IMPORT = """
import builtins, sys
from pysandboxes.guard import imports
from pysandboxes.guard.kit import capture

imports.install_import_check(capture(), False, frozenset({"os"}))
checked = builtins.__import__
assert checked.__globals__ is not vars(imports), "run on the module's globals"
assert checked.__globals__["__builtins__"] == {"__import__": checked}
assert {"original", "audit", "allowed", "type_", "str_", "list_"} <= set(checked.__globals__)
assert checked.__code__.co_filename == "<frozen importlib._bootstrap>"
assert (checked.__name__, checked.__qualname__) == ("__import__", "__import__")
assert checked.__defaults__ == (None, None, (), 0) and not checked.__code__.co_freevars
assert not hasattr(imports, "__import__") and not hasattr(imports, "type_")
print("own globals")
"""


def test_the_checked_import_runs_on_globals_of_its_own() -> None:
    """What OWN_GLOBALS says of the checked ``__import__``, in a fresh interpreter (it replaces
    ``builtins.__import__``)."""

    result = subprocess.run(
        [sys.executable, "-c", CHECKED_IMPORT], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["own", "globals"]


#: Module-level functions with keyword defaults or a closure, called only when arming.
ARM_TIME_FUNCTIONS = {
    "pysandboxes.guard.files.make_file_handlers",
    "pysandboxes.record._RecordType.__new__",  # super()'s __class__ cell, on import
}


def test_module_functions_keep_no_changeable_state() -> None:
    offenders = []
    for name in GUARD_MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            functions = [(attr, value)]
            if isinstance(value, type) and value.__module__ == name:
                functions = [
                    (attr + "." + k, getattr(v, "__func__", v)) for k, v in vars(value).items()
                ]
            for qualname, function in functions:
                if not isinstance(function, types.FunctionType) or function.__module__ != name:
                    continue
                full = name + "." + qualname
                if full in ARM_TIME_FUNCTIONS:
                    continue
                if function.__kwdefaults__ is not None or function.__closure__ is not None:
                    offenders.append(full)
    assert offenders == [], (
        "module-level functions of the guard whose keyword defaults or closure cells a "
        f"program could change with no audit event (use positional defaults): {offenders}"
    )


#: Module-level functions that run after arming -> the global names they may read.
RUN_TIME_FUNCTIONS = {
    "hook._hook_body": set(),
    "kit.valid_request": set(),
    "kit.bad_request": set(),
    "native_files.as_given": set(),
    "native_files._no_after": set(),
    "native_files.exact_field": set(),
    "sqlite.is_wal_database": set(),
    "native_files.hide_reentrant": {"outside"},  # with outside_guard=True, passed when armed
    "wrappers.hide": set(),
    "wrappers._named": set(),
    "wrappers._wrapper": set(),
    "wrappers.exact_path": set(),
    "wrappers.exact_text": set(),
}


def test_run_time_module_functions_look_no_global_name_up() -> None:
    found = {}
    for key in RUN_TIME_FUNCTIONS:
        module_name, _, attr = key.partition(".")
        function = getattr(importlib.import_module("pysandboxes.guard." + module_name), attr)
        names = {i.argval for i in dis.get_instructions(function) if i.opname == "LOAD_GLOBAL"}
        found[key] = names - RUN_TIME_FUNCTIONS[key]
    assert all(not names for names in found.values()), found
