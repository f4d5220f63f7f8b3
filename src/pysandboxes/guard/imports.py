"""Imports (SPEC §3.3): ``python-import`` applied to the program's imports.

The ``import`` audit event fires when a module is not yet in ``sys.modules``. The handler
judges the *importer*: the first frame outside the import machinery (``importlib`` is a
deputy, so ``importlib.import_module("socket")`` is the program's import). The program's
imports need a rule for their top-level name; what a library module imports for itself is
that module's business (``json`` may import ``re``). A few names are always allowed:
``sys``, ``builtins``, ``__future__``, ``__main__``, ``encodings``, ``_strptime`` (imported by C
code on behalf of ``datetime``/``time``), ``_pylong`` (imported by C code on behalf of ``int``
from CPython 3.12: big-integer division and conversions) and ``pysandboxes`` (its public API,
for ``sandbox_denials``).

Modules the launcher loaded before the program started are still judged: at arm time every
module in ``sys.modules`` that the rules do not allow (C built-in modules aside) is moved to a
private stash, and a finder at the front of ``sys.meta_path`` hands back the *same* module
object once an import of it has been judged and allowed (so ``io``, ``os``... keep their
identity). Removing that finder only means a fresh copy is loaded -- after the same judgement.
C built-in modules stay in ``sys.modules`` (the import system and the wrappers hold them), but
an import statement or ``__import__`` call of one is judged by the checking
``builtins.__import__`` like any other name: the program's ``import gc`` needs a rule, ``os``
importing ``posix`` for itself does not (the importer's file decides). Not covered:
``importlib.import_module`` of a built-in module already loaded (no event, no ``__import__``).

``importlib.import_module`` raises no ``import`` event for the module itself, and loading a
module by hand (``spec_from_file_location`` + ``exec_module``, ``runpy``, ``exec`` of its code
object) neither; but every module body runs through the ``exec`` event: module code of a
library file is judged there by the same rule (the first frame outside the import machinery
decides), so what no ``import`` event announced is judged all the same -- and a forged
``import`` event can allow nothing. Module code from a *writable* file outside the interpreter, the
program's directories and ``sys.path`` (a file written at run time, say in the temporary
directory) is dynamic code.

A compiled extension loaded from outside the interpreter's directories is native code.
The modules whose functions the guard wraps (``posix``, ``_thread``, ``_posixsubprocess``,
``_signal``, ``faulthandler``) stay in ``sys.modules``; an import event for one of them means
someone removed it to get a fresh, unwrapped copy, and is refused.
"""

from __future__ import annotations

import sys

from pysandboxes.guard.calls import CallJudge
from pysandboxes.guard.denials import MODULE, Reporter
from pysandboxes.guard.frames import IMPORT_DEPUTIES, Frames
from pysandboxes.guard.kit import Kit
from pysandboxes.policy.model import Policy

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple

ALWAYS_ALLOWED = frozenset(
    {
        "sys",
        "builtins",
        "__future__",
        "__main__",
        "encodings",
        "_strptime",
        "_pylong",
        "pysandboxes",
    }
)
WRAPPED_MODULES = frozenset(
    # the operating system's C module: posix, or nt on Windows (elsewhere an import of nt,
    # as ntpath tries, simply fails as it would without the sandbox)
    {"nt" if sys.platform == "win32" else "posix", "_thread", "_posixsubprocess", "_signal"}
    | {"faulthandler"}
)


def allowed_names(policy: Policy) -> tuple[bool, frozenset[str]]:
    """``(everything, names)`` through ``decide.import_allowed``."""

    from pysandboxes.policy.decide import import_allowed

    everything = import_allowed(policy, "\0no module has this name")
    names = frozenset(r.name for r in policy.python_import if import_allowed(policy, r.name))
    return everything, names


class _StashLoader:
    """Hands back a module taken out of ``sys.modules`` at arm time (same object)."""

    def __init__(self, stash_call: Callable[..., Any]) -> None:
        self._call = stash_call

    def create_module(self, spec: Any) -> Any:
        return self._call(("take", spec.name), {})

    def exec_module(self, module: Any) -> None:
        self._call(("restore", module), {})


class StashFinder:
    """The ``sys.meta_path`` finder of the stash (see the module docstring).

    The finder is in the program's reach (``sys.meta_path[0]``), so the stash is not: it lives
    only in the frame of the suspended generator of :func:`pysandboxes.guard.wrappers.hide`
    (``gi_frame`` and ``gc`` walks are refused), and every operation that hands out a module
    raises ``pysandboxes.import`` first -- a program calling ``find_spec`` or
    ``create_module`` itself gets the same judgement as an import.
    """

    def __init__(self, stash: dict[str, Any], spec_type: Any, kit: Kit) -> None:
        from pysandboxes.guard.native_files import exact_field
        from pysandboxes.guard.wrappers import hide

        specs: dict[Any, Any] = {}
        audit = kit.audit
        type_ = kit.type
        str_ = str
        # Captured: operate runs after arming, and this module's namespace is reachable.
        getattr_, hasattr_, import_error, modules = getattr, hasattr, ImportError, sys.modules
        module_type: Any = type(sys)
        module_dict = module_type.__dict__["__dict__"].__get__
        field = exact_field

        def operate(op: str, value: Any) -> Any:
            if op == "find":
                if type_(value) is not str_:
                    return None
                module = stash.get(value)
                if module is None:
                    return None
                # importlib.import_module raises no ``import`` event, and a stashed module
                # runs no code (no ``exec`` event): the import is judged here.
                audit("pysandboxes.import", value)
                original = getattr_(module, "__spec__", None)
                return hasattr_(module, "__path__"), original
            if op == "take":
                if type_(value) is not str_ or value not in stash:
                    raise import_error(f"no stashed module named {value!r}")
                audit("pysandboxes.import", value)
                module = stash.pop(value)
                specs[value] = getattr_(module, "__spec__", None)
                # Aliases the module registered for itself come back with it: "os.path" is
                # posixpath, not a submodule the import system could find under "os".
                prefix = value + "."
                for key in [k for k in stash if k.startswith(prefix)]:
                    if getattr_(stash[key], "__name__", key) != key:
                        modules[key] = stash.pop(key)
                return module
            if op == "restore":
                # A module of the exact type, its name read from its dict: no property or
                # __getattr__ of the program's runs here (attacks/r3_import_stash_restore_name).
                if type_(value) is not module_type:
                    return None
                # Its dict is the program's: iterated, exact str keys compared, no key's
                # __eq__ called (attacks/r5_import_stash_restore_key_eq.py).
                name = field(module_dict(value), "__name__")
                spec = specs.pop(name, None) if type_(name) is str_ else None
                if spec is not None:
                    value.__spec__ = spec
            return None

        len_, type_error = kit.len, TypeError

        def exact_operation(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            # ``op`` is compared with ``==``: the ``__eq__`` of a str subclass (a program
            # calling ``_call`` itself) would run next to the stash.
            if kwargs or len_(args) != 2 or type_(args[0]) is not str_:
                raise type_error("python-sb: the import stash takes (str, value)")
            return args, kwargs

        call = hide(operate, kit, exact_operation)
        self._call = call
        self._spec_type = spec_type
        self._loader = _StashLoader(call)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        found = self._call(("find", name), {})
        if found is None:
            return None
        is_package, original = found
        spec = self._spec_type(name, self._loader, is_package=is_package)
        if original is not None:
            spec.origin = original.origin
            spec.has_location = original.has_location
            if is_package:
                spec.submodule_search_locations = original.submodule_search_locations
        return spec

    def invalidate_caches(self) -> None:
        return None


def stash_modules(everything: bool, names: frozenset[str], keep: frozenset[str]) -> dict[str, Any]:
    """Take the modules the program may not import out of ``sys.modules`` (see docstring)."""

    if everything:
        return {}
    builtin = frozenset(sys.builtin_module_names)
    stash: dict[str, Any] = {}
    for name in list(sys.modules):
        top = name.partition(".")[0]
        if top in names or top in ALWAYS_ALLOWED or top in keep or name in builtin:
            continue
        if top.startswith("_frozen_importlib"):
            continue
        stash[name] = sys.modules.pop(name)
    return stash


class ImportHandlers(NamedTuple):
    handlers: dict[str, Callable[[tuple[Any, ...]], None]]
    #: Learn/audit modes: report the imports whose module has appeared in ``sys.modules``
    #: since their event (see :func:`make_import_handlers`); the hook calls it on every event.
    settle: Callable[[], None]


def make_import_handlers(
    everything: bool,
    names: frozenset[str],
    stash: dict[str, Any],
    kit: Kit,
    reporter: Reporter,
    frames: Frames,
    calls: CallJudge,
    code_roots: tuple[str, ...],
    dynamic_allowed: bool,
    writable: Callable[[str], bool],
    may_read: Callable[[str], bool] | None = None,
) -> ImportHandlers:
    """The import handlers (see the module docstring). ``may_read(path)``: whether the file
    rules let the program read ``path`` (a directory of ``sys.path``); with it, a refused
    import of a module the import system would not find is no denial (:func:`make_search`)."""

    # Captured at arm time: the program can reach this module's namespace.
    captured_module = MODULE
    captured_always_allowed = ALWAYS_ALLOWED
    captured_import_deputies = IMPORT_DEPUTIES
    captured_wrapped_modules = WRAPPED_MODULES
    # Record fields are read now: a record's class properties can be replaced with no audit
    # event (attacks/r3_disarm_frames_record_property.py).
    statement_importer = frames.statement_importer
    refuse = reporter.refuse
    record = reporter.record
    recording = reporter.recording
    caller_file = frames.caller_file
    is_library_file = frames.is_library_file
    module_of_file = frames.module_of_file
    judge_call = calls.judge
    type_ = kit.type
    len_ = kit.len
    str_ = str
    code_type = type(make_import_handlers.__code__)
    roots = tuple(r.rstrip("/") + "/" for r in code_roots if r)
    # Learn and audit modes: an ``import`` event (or a statement's ``pysandboxes.import``)
    # comes *before* the search, so a probe for a module that does not exist (``try: import
    # winreg``) looks the same as a real import. Its report waits here, keyed by top-level
    # name, until that name is in ``sys.modules`` (checked on every later event, and once at
    # exit): what learning writes and what audit reports are the imports that found a module,
    # wherever it lives (standard library, site-packages, a .pth or editable install, a zip,
    # the project), and only those. A probe that found nothing stays here, unreported.
    waiting: dict[str, tuple[bool, str]] = {}
    modules = sys.modules
    contains = dict.__contains__
    pop = dict.pop
    list_ = list
    # Where each module of the run was found (the sys.path entry its top-level package came
    # from), recorded once per directory as {"kind": "module-root"}: learning and audit keep the
    # import system's listing of a sys.path directory only when a module was found there.
    known_modules = set(modules)  # the launcher's, loaded before the guard was armed
    roots_seen: set[str] = set()
    count = [len_(modules)]
    module_type: Any = type(sys)
    module_dict = module_type.__dict__["__dict__"].__get__
    dict_get = dict.get
    getattr_ = getattr
    range_, exception = range, Exception  # captured: settle runs in the hook after arming

    def strip(path: Any, parts: int) -> str | None:
        if type_(path) is not str_ or not path.startswith("/"):
            return None  # built-in, frozen, or not a path
        for _ in range_(parts):
            path = path.rpartition("/")[0]
        return path or None

    def root_of(name: str, module: Any) -> list[str]:
        if type_(module) is not module_type:
            return []
        namespace = module_dict(module)
        spec = dict_get(namespace, "__spec__")
        parts = name.count(".") + 1
        try:
            locations = getattr_(spec, "submodule_search_locations", None)
            origin = getattr_(spec, "origin", None)
            if spec is None:
                locations = dict_get(namespace, "__path__")
                origin = dict_get(namespace, "__file__")
            if locations is not None:  # a package: its directories
                found = [strip(location, parts) for location in list_(locations)]
            else:
                found = [strip(origin, parts)]
        except exception:  # a spec of the program's that does not read back
            return []
        return [root for root in found if root is not None]

    def scan_modules() -> None:
        count[0] = len_(modules)
        for name in list_(modules):
            if name in known_modules:
                continue
            known_modules.add(name)
            for root in root_of(name, dict_get(modules, name)):
                if root not in roots_seen:
                    roots_seen.add(root)
                    record((("kind", "module-root"), ("path", root)))

    def settle() -> None:
        if count[0] != len_(modules):
            scan_modules()
        if not waiting:
            return
        for top in list_(waiting):
            if not contains(modules, top):
                continue
            entry = pop(waiting, top, None)  # popped first: reporting may raise events
            if entry is None:
                continue
            allowed, name = entry
            if allowed:
                record((("kind", "import"), ("name", name)))
            else:
                report_import(top)

    would_be_found = make_search(stash, kit, may_read)
    module_not_found = ModuleNotFoundError

    def refuse_import(top: str, detail: str | None = None) -> None:
        if recording and detail is None and not contains(modules, top):
            if top not in waiting:
                waiting[top] = (False, top)
            return
        if detail is None and not recording and not would_be_found(top):
            # A probe (``try: import winreg``): the module is nowhere the program could load
            # it from, so the refusal changes nothing and is no denial -- the program gets
            # what CPython says, and --denials stays quiet (docs/python-layer.md).
            exc = module_not_found(f"No module named '{top}'", name=top)
            try:
                raise exc
            finally:
                del exc  # no cycle through this frame (as Reporter.refuse raises)
        report_import(top, detail)

    def report_import(top: str, detail: str | None = None) -> None:
        if waiting:
            pop(waiting, top, None)
        message = f"Module named '{top}' is not allowed by a rule"
        refuse(
            "import",
            top,
            None,
            None,
            f"python-import={top}",
            detail,
            message,
            captured_module,
            top,
            (("kind", "import"), ("name", top)),
        )

    def on_import(args: tuple[Any, ...]) -> None:
        name = args[0]
        if type_(name) is not str_:
            return
        top = name.partition(".")[0]
        filename = args[1] if len_(args) > 1 else None
        # An extension module's shared object:
        if filename is not None and type_(filename) is str_ and not is_library_file(filename):
            judge_call(
                "_imp.create_dynamic",
                "native",
                f"loading a compiled extension from '{filename}'",
            )
        # A fresh copy of a wrapped module (after ``del sys.modules[...]``, or an extension's
        # shared object loaded again) would carry the unwrapped functions. An extension's
        # init function is found by the *last* part of the name (``pkg._posixsubprocess``
        # runs ``PyInit__posixsubprocess``); only extensions give a filename here.
        last = name.rpartition(".")[2] if filename is not None else top
        if (
            top in captured_wrapped_modules or last in captured_wrapped_modules
        ) and name not in stash:
            refuse(
                "import",
                name,
                None,
                None,
                None,
                "wrapped",
                f"Re-importing '{name}' DENIED: python-sb wraps its functions, and a fresh "
                "copy would not be wrapped",
                captured_module,
                name,
            )
            return
        if everything or top in names or top in captured_always_allowed:
            if recording and filename is None and top not in captured_always_allowed:
                importer = caller_file(captured_import_deputies)
                if importer is None or not is_library_file(importer):
                    if contains(modules, top):
                        record((("kind", "import"), ("name", name)))
                    elif top not in waiting:
                        waiting[top] = (True, name)
            return
        importer = caller_file(captured_import_deputies)
        if importer is not None and is_library_file(importer):
            return
        refuse_import(top)

    def on_exec(args: tuple[Any, ...]) -> None:
        code: Any = args[0] if args else None
        if type_(code) is not code_type or code.co_name != "<module>":
            return
        filename = code.co_filename
        if type_(filename) is not str_:
            filename = "<co_filename that is not a str>"  # never a library's (frames.file_of)
        if is_library_file(filename):
            module = module_of_file(filename)
            if module is None:
                return
            top = module.partition(".")[0]
            if everything or top in names or top in captured_always_allowed:
                return
            # Whose import is this? Not always announced by an "import" event
            # (importlib.import_module raises none for the module itself; loading by hand
            # with spec_from_file_location or runpy neither): the first frame outside the
            # import machinery and runpy decides, as for the event.
            importer = caller_file(captured_import_deputies)
            if importer is not None and is_library_file(importer):
                return  # a library's own import (or runpy started by the launcher for -m)
            report_import(top)  # running: found (the same denial as the import event's)
            return
        if dynamic_allowed or not filename.startswith("/") or filename.startswith(roots):
            return
        if not writable(filename):
            return  # a file the program cannot have written
        judge_call(
            "builtins.exec",
            "dynamic-code",
            f"running module code from '{filename}', a writable file outside the program's "
            "directories and sys.path (code written at run time)",
        )

    def on_statement(args: tuple[Any, ...]) -> None:
        """``pysandboxes.import``: an import of a module that may already be loaded (an
        ``import`` statement through ``builtins.__import__``, the stash finder): no ``import``
        event announces it, the importer is judged here."""

        name: Any = args[0] if args else None
        if type_(name) is not str_:
            return
        top = name.partition(".")[0]
        if everything or top in names or top in captured_always_allowed:
            return
        importer = statement_importer(captured_import_deputies)
        if importer is None or is_library_file(importer):
            return
        refuse_import(top)

    def on_create_builtin(args: tuple[Any, ...]) -> None:
        name = args[0] if args else None
        if type_(name) is str_ and name in captured_wrapped_modules:
            refuse(
                "import",
                name,
                None,
                None,
                None,
                "wrapped",
                f"Creating a fresh '{name}' module DENIED: python-sb wraps its functions, and a "
                "fresh copy would not be wrapped",
                captured_module,
                name,
            )

    return ImportHandlers(
        handlers={
            "import": on_import,
            "exec": on_exec,
            "pysandboxes.create_builtin": on_create_builtin,
            "pysandboxes.import": on_statement,
        },
        settle=settle,
    )


def make_search(
    stash: dict[str, Any], kit: Kit, may_read: Callable[[str], bool] | None
) -> Callable[[str], bool]:
    """``would_be_found(top)``: whether the import system could find top-level module ``top``,
    answered without running any code of the program's, executing or importing anything,
    and without listing a directory.

    Found: a built-in or frozen module, one in ``sys.modules`` or the guard's stash, or a
    ``top/`` directory (package or namespace package) or ``top.py``, ``top.pyc``,
    ``top<extension suffix>`` in a ``sys.path`` directory the file rules let the program
    read (``may_read``). Candidates are looked up by name with ``stat``, which the program
    can call itself (no audit event): the answer tells it nothing it could not learn, and a
    directory it may not read is never searched (a module there cannot be loaded by it
    either). When the answer rests on code the guard will not run -- a ``sys.meta_path``
    finder or ``sys.path_hooks`` hook other than the standard ones, a zip archive on the
    path, a ``sys.path`` entry or cache key that is not exactly a ``str``, no ``may_read`` --
    the module counts as found: the refusal is then a denial, as before.
    """

    import _frozen_importlib
    import _frozen_importlib_external
    import _imp

    # Captured at arm time: the program can reach this module's namespace.
    type_, str_, list_, dict_ = kit.type, str, list, dict
    stat = kit.stat
    getcwd = kit.getcwd
    os_error, value_error = OSError, ValueError
    # Captured: the search runs in the hook after arming, and this module is in sys.modules,
    # where a builtin name rebound by the program would run its code inside the hook
    # (attacks/disarm_import_check_builtin_global.py).
    type_error, is_instance = TypeError, isinstance
    from pysandboxes.guard.native_files import exact_field

    contains = dict.__contains__
    field = exact_field
    dict_get = dict.get  # on path_importer_cache, once its keys are known to be exact str
    dict_keys = dict.keys
    list_copy = list.copy
    sys_module = sys
    module_type: Any = type(sys)
    module_dict = module_type.__dict__["__dict__"].__get__
    modules = sys.modules
    builtin_names = frozenset(sys.builtin_module_names)
    is_frozen = _imp.is_frozen
    standard_finders = (
        _frozen_importlib.BuiltinImporter,
        _frozen_importlib.FrozenImporter,
        _frozen_importlib_external.PathFinder,
    )
    file_finder = _frozen_importlib_external.FileFinder
    suffixes = tuple(
        [
            *_frozen_importlib_external.SOURCE_SUFFIXES,
            *_frozen_importlib_external.BYTECODE_SUFFIXES,
            *_imp.extension_suffixes(),
        ]
    )
    stash_finder = StashFinder
    # setuptools' _distutils_hack (its .pth is in most virtual environments) answers only for
    # these names; for any other its find_spec returns None (read, never called).
    distutils_names = frozenset({"distutils", "pip", "test", "_distutils_hack"})
    distutils_hack = None
    zip_importer = None
    file_finder_hook = None
    for hook in sys.path_hooks:
        qualname = getattr(hook, "__qualname__", "")
        if qualname == "zipimporter" and getattr(hook, "__module__", "") == "zipimport":
            zip_importer = hook
        elif qualname == "FileFinder.path_hook.<locals>.path_hook_for_FileFinder":
            file_finder_hook = hook
    for finder in sys.meta_path:
        kind = type(finder)
        if kind.__name__ == "DistutilsMetaFinder" and kind.__module__ == "_distutils_hack":
            distutils_hack = kind
    dir_mode, mode_mask = 0o040000, 0o170000
    type_name = type.__dict__["__name__"].__get__
    type_module = type.__dict__["__module__"].__get__
    pytest_rewrite = "_pytest.assertion.rewrite"
    exact_str = str  # a program's __module__ may be any object: compared only when a str

    def finders_known(top: str) -> bool:
        namespace = module_dict(sys_module)
        # sys's dict may hold keys of the program's: iterated, exact str keys compared, no
        # key's __eq__ called in the hook (attacks/disarm_import_check_sys_dict_key.py).
        meta: Any = field(namespace, "meta_path")
        hooks: Any = field(namespace, "path_hooks")
        if type_(meta) is not list_ or type_(hooks) is not list_:
            return False
        for finder in list_copy(meta):
            standard = False
            for known in standard_finders:  # not any(): a global read at run time
                if finder is known:
                    standard = True
            if standard:
                continue
            kind = type_(finder)
            if kind is stash_finder:
                continue  # the stash is checked by name
            if distutils_hack is not None and kind is distutils_hack:
                if top in distutils_names:
                    return False
                continue
            name, module = type_name(kind), type_module(kind)
            if (
                type_(name) is exact_str
                and type_(module) is exact_str
                and name == "AssertionRewritingHook"
                and module == pytest_rewrite
            ):
                # pytest's assertion rewriter (installed after arming): it finds only what the
                # standard path finder finds, then rewrites it. The names are read through
                # type's own descriptors (no metaclass code); a class posing as it only makes
                # a refused probe go unlogged -- the import stays refused.
                continue
            return False
        for hook in list_copy(hooks):
            if hook is not zip_importer and hook is not file_finder_hook:
                return False
        return True

    def found_in(directory: str, top: str) -> bool:
        base = directory.rstrip("/") + "/" + top
        try:
            if stat(base).st_mode & mode_mask == dir_mode:
                return True  # a package, or a namespace package
        except (os_error, value_error):
            pass
        for suffix in suffixes:
            try:
                stat(base + suffix)
                return True
            except (os_error, value_error):
                continue
        return False

    def would_be_found(top: str) -> bool:
        if may_read is None or "/" in top or top in ("", ".", ".."):
            return True
        if top in builtin_names or contains(stash, top):
            return True
        for key in dict_keys(modules):  # not "in": a key of the program's would compare
            if type_(key) is str_ and key == top:
                return True
        try:
            if is_frozen(top):
                return True
        except (os_error, value_error, type_error):
            return True
        if not finders_known(top):
            return True
        namespace = module_dict(sys_module)
        path: Any = field(namespace, "path")
        cache: Any = field(namespace, "path_importer_cache")
        if type_(path) is not list_ or type_(cache) is not dict_:
            return True
        for key in dict_keys(cache):
            if type_(key) is not str_:
                return True  # its __eq__ could run in a lookup below
        for entry in list_copy(path):
            if type_(entry) is not str_:
                if is_instance(entry, str_):
                    return True  # a str subclass: the import system reads it, we will not
                continue  # bytes and others: skipped by the path finder too
            finder = dict_get(cache, entry)
            if finder is not None and type_(finder) is not file_finder:
                return True  # a zip archive or another finder: its code would answer
            if entry:
                directory = entry
            else:
                try:
                    directory = getcwd()
                except os_error:
                    continue
            if not directory.startswith("/"):
                try:
                    directory = getcwd().rstrip("/") + "/" + directory
                except os_error:
                    continue
            if not may_read(directory):
                continue  # the program may not read it: nothing there can be imported
            if found_in(directory, top):
                return True
        return False

    return would_be_found


def install_import_check(kit: Kit, everything: bool, names: frozenset[str]) -> None:
    """Put a checking ``builtins.__import__`` in place (SPEC §3.3).

    The ``import`` event fires only for a module missing from ``sys.modules``: once a library
    has loaded ``os`` for itself, the program's ``import os`` would be judged by nothing. Every
    import statement calls ``builtins.__import__``; for a top-level name that no rule allows
    (a set lookup: allowed names cost nothing more), it raises ``pysandboxes.import`` and the
    hook judges the importer. Relative imports stay within the importer's own package. C code
    importing for itself (``PyImport_Import``: ``_io`` for ``open_code``, ``_strptime``...)
    passes a list as ``fromlist`` and is left to the ``import`` event, as before.
    A guardrail, like the rest of the layer: a program that puts another ``__import__`` in
    ``builtins`` only loses this check, not the ``import`` and ``exec`` events.
    """

    if everything:
        return
    import builtins

    original = builtins.__import__
    audit = kit.audit
    # C built-in modules are judged too (gc, posix, _imp...: the standard library is not
    # exempt); the hook lets a library's own ``import posix`` through (its file decides).
    allowed = names | ALWAYS_ALLOWED
    type_ = kit.type
    str_ = str
    list_ = list
    # _checked_import's code with the import system's file name, in globals of its own: the
    # frame is then the import machinery's for everyone (a deputy for the guard's caller rule,
    # removed from ImportError tracebacks by CPython, not a guard frame that module code run by
    # the import would find among its callers). Made now, before the hook exists; not compiled
    # from source (builtin compile's first call builds the ast module's classes, a tenth of a
    # child's start: docs/performance.md).
    namespace: dict[str, Any] = {
        "original": original,
        "audit": audit,
        "allowed": allowed,
        "type_": type_,
        "str_": str_,
        "list_": list_,
        "__builtins__": {},
    }
    template = _checked_import()
    code = template.__code__.replace(
        co_filename="<frozen importlib._bootstrap>", co_qualname="__import__"
    )
    checked = type_(template)(code, namespace, "__import__", template.__defaults__)
    # C code run by the original (a compiled extension's init: matplotlib's ft2font) imports
    # through the builtins of the current frame, this function's: it must find __import__
    # there (PyImport_Import), or `import matplotlib.pyplot` fails with KeyError '__import__'.
    namespace["__builtins__"]["__import__"] = checked
    checked.__doc__ = original.__doc__
    builtins.__import__ = checked


# The names the checked __import__ reads from its globals, which are install_import_check's
# ``namespace`` (declared for the type checker only: this module has no such globals).
original: Any
audit: Any
allowed: frozenset[str]
type_: Any
str_: type
list_: type


def _checked_import() -> Callable[..., Any]:
    """The checked ``__import__`` as written, for its code and defaults (the function made
    here is never run: on this module's globals it would find none of the names it reads)."""

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # type: ignore[no-untyped-def]
        if (
            level == 0
            and type_(fromlist) is not list_  # noqa: F821
            and (type_(name) is not str_ or name.partition(".")[0] not in allowed)  # noqa: F821
        ):
            audit("pysandboxes.import", name)  # noqa: F821
        return original(name, globals, locals, fromlist, level)  # noqa: F821

    return __import__
