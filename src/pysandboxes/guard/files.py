"""Files (SPEC §3.1): which resolved paths the program may read or write.

:func:`build_table` turns the policy and the run context into a :class:`PathTable` at arm
time: the exposed prefixes (the rules' and the default grants), longest first, the ``ignore=``
globs compiled with :func:`pysandboxes.policy.decide.glob_regex`, and the paths nobody may
change (every loaded rule file, the learning output, the denials file). :func:`make_access`
answers for one resolved path with the same precedence as
:func:`pysandboxes.policy.decide.path_access` (``ignore`` first, then the longest exposed
prefix, read-write first at equal length) -- the unit tests check that they agree.

:func:`make_file_handlers` returns the audit-event handlers. The hot path is ``open``: a path
already judged since the last change of the file tree (``rename``, ``remove``, ``symlink``,
``chdir``...) is answered from a small cache; reads below the interpreter's own read-only
directories are answered from the written path. The cache is off when the program may run
threads or child processes (another thread could swap a symbolic link between the guard's
check and the cache's next answer) and in learning/audit mode.
"""

from __future__ import annotations

import os
import sys

if sys.platform == "win32":  # the C module, as guard/kit.py takes it
    import nt as native
else:
    import posix as native

from pysandboxes.guard.denials import NOT_FOUND, PERMISSION, Reporter
from pysandboxes.guard.paths import FD, PathTools
from pysandboxes.policy import defaults as _defaults
from pysandboxes.policy.model import Policy
from pysandboxes.runtime import RunContext

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple

NONE, RO, RW, IGNORED = 0, 1, 2, 3

#: What a refused operation needs to exist, to tell whether CPython would have failed with
#: ``FileNotFoundError`` before any access check (issue 27, cause 1): nothing to look at; the
#: target, symbolic links followed (``open`` for reading, ``chmod``, ``truncate``...); the entry
#: itself, not followed (``remove``, ``rmdir``, ``rename``'s source); the directory that would
#: hold a new entry (``open`` with ``O_CREAT``, ``mkdir``, the new name of a link or rename).
NO_CHECK, TARGET, ENTRY, CREATE = 0, 1, 2, 3

#: Providers whose sandbox has a file tree of its own, holding only what is exposed.
OWN_TREE_PROVIDERS = frozenset({"bwrap", "unshare", "qemu"})

#: The default grants (SPEC §3.1) come from the one list every enforcer uses
#: (``pysandboxes.policy.defaults``): certificate stores (never ``/etc/ssl/private``), OpenSSL's
#: configuration, time-zone data, ``mime.types`` (``mimetypes.guess_type`` fails when one of its
#: files exists but cannot be read), os-release, ``/etc/inputrc``, the name-service files.
CERTIFICATE_STORES = _defaults.CERTIFICATES.paths
SYSTEM_DATA = tuple(
    path
    for path in _defaults.python_layer_paths(_defaults.RO)
    if path not in _defaults.CERTIFICATES.paths and not path.startswith(("/dev/", "/proc/"))
)
#: The process's own /proc entry (``/proc/self``, and ``/proc/PID`` it resolves to when the
#: table is built). Never a lexical fast path (``PathTable.trusted``): its links
#: (``/proc/self/root``, ``cwd``, ``fd/N``) lead anywhere, so a path below it is judged where
#: it lands.
OWN_PROC = tuple(p for p in _defaults.python_layer_paths(_defaults.RO) if p.startswith("/proc/"))
TIMEZONE_DATA = SYSTEM_DATA  # the former name (learn/generalize.py reads it)
DEVICES_RW = _defaults.python_layer_paths(_defaults.RW)
DEVICES_RO = tuple(p for p in _defaults.python_layer_paths(_defaults.RO) if p.startswith("/dev/"))

_FS_ENCODING = sys.getfilesystemencoding()
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Row(NamedTuple):
    """One exposed prefix: ``path``, ``below`` (``path/``), access, and the rule for messages."""

    path: str
    below: str
    access: int
    rule: str | None  # rule text, None for a default grant
    origin: str | None


class PathTable(NamedTuple):
    rows: tuple[Row, ...]
    ignore_names: Callable[[str], Any] | None
    ignore_anchored: Callable[[str], Any] | None
    ignore_rules: tuple[tuple[Callable[[str], Any], bool, str, str], ...]
    protected: frozenset[str]
    trusted: tuple[str, ...]  # read-only default prefixes (with "/"): lexical reads suffice
    windows: bool = False  # Windows paths: "\\" separates, case ignored (keys lowered)
    #: The private temporary directory (its variants): the child's own clean-up at exit
    #: removes it, although its parent is not writable (see ``judge_entry``).
    own_roots: frozenset[str] = frozenset()


def _variants(path: str) -> list[str]:
    real = os.path.realpath(path)
    return [path] if real == path else [path, real]


def build_table(
    policy: Policy,
    context: RunContext,
    read_roots: tuple[str, ...],
    flavour: str | None = None,
) -> PathTable:
    """The path rules of one run, defaults included (see the module docstring).

    ``read_roots``: the interpreter's directories and python-sb's own, readable by default.
    ``flavour``: ``"windows"`` for Windows paths (``policy/pathforms.py``): every path of the
    table is kept lowered (compared without regard to case), ``\\`` separates components,
    and there is no lexical fast path (``trusted`` is empty: a written ``..`` is only undone
    by resolving). Default: this platform's (``platform_caps.CAPS.path_flavour``).
    """

    from pysandboxes.platform_caps import CAPS
    from pysandboxes.policy import precedence
    from pysandboxes.policy.decide import glob_regex

    windows = (flavour or CAPS.path_flavour) == "windows"
    sep = "\\" if windows else "/"
    if policy.ignore:
        import re  # only for ignore= globs

    rows: list[Row] = []

    def add(path: str, access: int, rule: str | None, origin: str | None) -> None:
        prefix, below = precedence.exposure_row(path, windows)
        rows.append(Row(prefix, below, access, rule, origin))

    for rule in policy.expose_ro:
        add(rule.path, RO, rule.text, str(rule.origin))
    for rule in policy.expose_rw:
        add(rule.path, RW, rule.text, str(rule.origin))
    defaults_ro: list[str] = []
    for prefix in (*read_roots, *CERTIFICATE_STORES, *SYSTEM_DATA):
        if prefix and os.path.isabs(prefix):
            defaults_ro.extend(_variants(prefix))
    for prefix in defaults_ro:
        add(prefix, RO, None, None)
    for device in DEVICES_RO:
        add(device, RO, None, None)
    for own in OWN_PROC:
        for path in _variants(own):
            add(path, RO, None, None)
    for device in DEVICES_RW:
        add(device, RW, None, None)
    # The script itself is not a default grant (none of the kernel providers could grant it
    # alone): its directory must be exposed, which the launcher checks before starting
    # (SPEC 5.2, issue 11 point 8; providers/limits.check_script).
    if context.tmpdir:
        for path in _variants(context.tmpdir):
            add(path, RW, None, None)
    rows = precedence.order_rows(rows, lambda row: row.path, lambda row: row.access == RW)

    def text(path: str) -> str:
        return path.lower() if windows else path

    below_re = "(?:/.*)?" if not windows else "(?:\\\\.*)?"
    ignore_names, ignore_anchored = precedence.ignore_matchers(
        (r.path for r in policy.ignore), windows
    )
    per_rule = tuple(
        (
            re.compile(
                glob_regex(text(r.path), sep) + ("" if sep not in r.path else below_re), re.S
            ).fullmatch,
            sep not in r.path,
            r.text,
            str(r.origin),
        )
        for r in policy.ignore
    )
    protected: set[str] = set()
    for path in policy.rule_files:
        protected.update(_variants(path))
    # Rule files the next run would read that do not exist yet: an include skipped as missing,
    # the main file itself. Created by the program, they would plant rules for that run.
    for include in policy.includes:
        if include.status == "missing":
            protected.update(_variants(include.resolved))
    if policy.main_file:
        protected.update(_variants(os.path.abspath(policy.main_file)))
    learn_target = policy.learn.value
    if isinstance(learn_target, str) and learn_target not in ("false", "true", ""):
        protected.update(_variants(os.path.abspath(learn_target)))
    if context.denials_file:
        protected.update(_variants(os.path.abspath(context.denials_file)))
    rw_paths = [row.path for row in rows if row.access == RW]
    if windows:
        protected = {path.lower() for path in protected}
        defaults_ro = []  # no lexical fast path (see the docstring)
    trusted = tuple(
        prefix.rstrip("/") + "/"
        for prefix in defaults_ro
        if not any(
            rw == prefix or rw.startswith(prefix.rstrip("/") + "/") or prefix.startswith(rw + "/")
            for rw in rw_paths
        )
    )
    return PathTable(
        rows=tuple(rows),
        ignore_names=ignore_names,
        ignore_anchored=ignore_anchored,
        ignore_rules=per_rule,
        protected=frozenset(protected),
        trusted=trusted,
        windows=windows,
        own_roots=frozenset(_variants(context.tmpdir)) if context.tmpdir else frozenset(),
    )


Info = tuple[str | None, str | None]  # (rule text, origin) of the deciding row


def make_access(table: PathTable) -> Callable[[str], tuple[int, Info | None]]:
    """``access(resolved_path) -> (NONE|RO|RW|IGNORED, (rule, origin))`` over ``table``: the
    one precedence of ``policy/precedence.py`` (``decide.path_access`` builds its matcher
    there too). On Windows (``table.windows``) the paths, normalised by ``guard/paths.py``'s
    resolve, are lowered and split on ``\\``; a path ``resolve`` refused (``paths.REFUSED``
    first) matches nothing. The closure holds plain tuples only (no attribute of a guard class
    is read at run time)."""

    from pysandboxes.policy.precedence import make_path_matcher

    rows = tuple((row.path, row.below, row.access, (row.rule, row.origin)) for row in table.rows)
    return make_path_matcher(
        rows, table.ignore_names, table.ignore_anchored, table.windows, NONE, IGNORED
    )


class FileHandlers(NamedTuple):
    handlers: dict[str, Callable[[tuple[Any, ...]], None]]
    window_state: Callable[[], Any]  # the last open() judged: (path text, write)
    recheck: Callable[[Any], None]  # judge that state again (guard/signals.py)
    judge: Callable[[Any, bool, int], str | None]  # for AF_UNIX sockets and wrappers
    is_ignored: Callable[[str], bool]  # of a resolved path
    writable: Callable[[str], bool]  # of a resolved path: the rules or defaults grant writing


def make_file_handlers(
    table: PathTable,
    tools: PathTools,
    reporter: Reporter,
    *,
    use_cache: bool,
    denials_token: str | None,
    kit_type: Callable[[object], type],
    launcher_call: Callable[[], bool] = lambda: False,
    import_system_call: Callable[[], bool] = lambda: False,
    busy_functions: tuple[Callable[[], Any], Callable[[Any], None]] | None = None,
    getframe: Callable[[int], Any] | None = None,
    host_tree: bool = True,
    handler_depth: list[int] | None = None,
) -> FileHandlers:
    """The handlers of the file events (see the module docstring).

    ``host_tree``: the program sees the host's file tree (no provider, or ``landlock``), so a
    path missing here is missing for the user too; under ``bwrap``/``unshare`` an unexposed
    path is always missing from the sandbox's tree, and the guard cannot tell whether the host
    has it (see ``absent`` below).
    """

    # Captured now: module globals could be rebound by the program (import
    # pysandboxes.guard.files), and the closures below must not read them at run time.
    none_code, ro_code, rw_code, ignored_code = NONE, RO, RW, IGNORED
    write_flags, fd_mark = _WRITE_FLAGS, FD
    permission, not_found = PERMISSION, NOT_FOUND
    access = make_access(table)
    text_of = tools.text_of
    resolve = tools.resolve
    fd_path = tools.fd_path
    fd_known = tools.fd_known
    refuse = reporter.refuse
    record = reporter.record
    recording = reporter.recording
    listing = [False]  # set while a directory listing is judged (only changes reporting)
    show = reporter.show_path
    protected = table.protected
    trusted = table.trusted
    sep = "\\" if table.windows else "/"
    if table.windows:  # the table's protected paths are lowered (case ignored there)
        lower = str.lower

        def is_protected(path: str) -> bool:
            return lower(path) in protected

    else:

        def is_protected(path: str) -> bool:
            return path in protected

    ignore_rules = table.ignore_rules
    has_ignore = table.ignore_names is not None or table.ignore_anchored is not None
    type_ = kit_type
    str_ = str
    type_qualname = type.__dict__["__qualname__"].__get__  # no metaclass of the program's runs

    def qualname_of(cls: Any) -> str:
        name = type_qualname(cls)
        return str_.__str__(name) if type_(name) is not str_ else name  # type: ignore[no-any-return]

    getcwd = native.getcwd  # captured now, as everything the closures below call
    stat = native.stat  # raises no audit event
    lstat = native.lstat
    no_check, target_needed, entry_needed, parent_needed = NO_CHECK, TARGET, ENTRY, CREATE
    o_creat = os.O_CREAT
    oserror = OSError
    file_not_found = FileNotFoundError
    cache: dict[str, int] = {}
    caching = use_cache and not recording
    len_ = len
    int_ = int
    any_ = any
    tuple_ = tuple
    bytearray_ = bytearray
    memoryview_ = memoryview
    type_error_, value_error_ = TypeError, ValueError
    single_thread = use_cache  # no threads nor child processes granted (hook.py)
    from _thread import _count as count_threads  # Python threads other than the main one

    decode = bytes.decode
    encoding = _FS_ENCODING
    hexdigits = frozenset(b"0123456789abcdefABCDEF")
    bytes_ = bytes

    def base_of(dir_fd: Any) -> str | None:
        if type_(dir_fd) is int_ and dir_fd >= 0:
            return fd_path(dir_fd)
        return None

    def ignore_rule_of(path: str) -> tuple[str | None, str | None]:
        for match, is_name, text, origin in ignore_rules:
            if is_name:
                if any_(part and match(part) is not None for part in path.split("/")):
                    return text, origin
            elif match(path) is not None:
                return text, origin
        return None, None

    def lexical_of(given: str, base: str | None) -> str | None:
        """``given`` made absolute, ``.`` and ``..`` removed, its links not followed; None
        when it is not a text or the current directory cannot be known."""

        if type_(given) is not str_:
            return None
        if not given.startswith("/"):
            if base is None:
                try:
                    base = getcwd()
                except oserror:
                    return None
            given = base + "/" + given
        parts: list[str] = []
        for part in given.split("/"):
            if part == "" or part == ".":
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        return "/" + "/".join(parts)

    def named_path(given: str, base: str | None, resolved: str) -> str:
        """The path a rule should name: the one the program wrote (absolute, ``.``/``..``
        removed) when it reaches ``resolved`` through a symbolic link, so that the suggested
        rule also makes that name exist under bwrap/unshare (issue 11, point 7); else
        ``resolved``."""

        lexical = lexical_of(given, base)
        if lexical is not None and lexical != resolved and resolve(lexical, None) == resolved:
            return lexical
        return resolved

    def writable_named(given: str, base: str | None, resolved: str) -> str:
        """The path an ``expose-rw`` line must name to allow this write: :func:`named_path`,
        or, when that does not exist yet (a file or directory the program creates), the
        nearest directory above it that does. A rule naming a missing path is refused (SPEC
        §2.2), and creating an entry changes the directory that holds it (issue 26)."""

        named = named_path(given, base, resolved)
        while absent(named):
            cut = named.rfind(sep)
            if cut <= 0:
                return named[: cut + 1] or named
            named = named[:cut]
        return named

    def absent(path: str, follow: bool = True) -> bool:
        """Whether looking ``path`` up fails with ENOENT: it (or, with ``follow``, the target
        of a symbolic link) does not exist. A path that cannot be looked up for another reason
        (a directory the process may not search) counts as present."""

        try:
            if follow:
                stat(path)
            else:
                lstat(path)
        except file_not_found:
            return True
        except oserror:
            return False
        return False

    def would_be_missing(resolved: str, missing: int) -> bool:
        """Whether CPython would fail with ``FileNotFoundError`` on ``resolved`` for an
        operation of kind ``missing`` (``TARGET``, ``ENTRY``, ``CREATE``) whatever the rules:
        the path, or the directory meant to hold it, does not exist."""

        if missing == no_check:
            return False
        if missing == parent_needed:
            cut = resolved.rfind(sep)
            parent = resolved[:cut] if cut > 0 else sep
            return parent != resolved and absent(parent)
        return absent(resolved, missing == target_needed)

    def refuse_path(
        given: str,
        resolved: str,
        write: bool,
        code: int,
        row: Info | None,
        base: str | None = None,
        missing: int = NO_CHECK,
    ) -> None:
        op = "write" if write else "read"
        fields: tuple[tuple[str, str], ...] = (("kind", "file"), ("op", op), ("path", resolved))
        # The import system tries to cache bytecode next to every module it compiles, and
        # shrugs off the refusal: not worth a --denials line or a learned rule.
        quiet = write and ("/__pycache__/" in resolved or resolved.endswith("/__pycache__"))
        # python-sb's own launcher code (the clean-up of the temp directory at exit) is
        # refused like anything else, but it is not the program: not reported, not learned.
        quiet = quiet or launcher_call()
        # The path finder lists every sys.path directory it searches whatever the program
        # imports: an unexposed one (the current directory, for -c and -m) is refused without
        # a --denials line; its modules are simply not found. In learn and audit modes it is
        # recorded, marked, and held back: learning writes it and audit reports it only when a
        # module of the run was found there (learn/generalize.py, listing_needed).
        by_import_system = listing[0] and import_system_call()
        quiet = quiet or (by_import_system and not recording)
        deferred = by_import_system and recording
        if deferred:
            fields = (*fields, ("by", "import-system"))
        shown = show(resolved)
        if code == ignored_code:
            rule, origin = ignore_rule_of(resolved)
            refuse(
                "file",
                resolved,
                rule,
                origin,
                None,
                op,
                f"No such file or directory: '{shown}' (hidden by rule '{rule}' from {origin})",
                not_found,
                given,
                fields,
            )
            return
        what = "Write" if write else "Read"
        if (
            missing != no_check
            and (host_tree or code != none_code)
            and would_be_missing(resolved, missing)
        ):
            # The operation would fail with ENOENT without the sandbox (pdb looking for
            # ~/.pdbrc, test.support removing a .pyc that is not there, a file created in a
            # directory that does not exist): the program gets that FileNotFoundError, and
            # nothing is reported, learned or written to --denials (learning and audit agree).
            # Existence is no secret: os.stat raises no audit event. Not for an unexposed path
            # inside a bwrap/unshare tree, where every such path is missing and the guard
            # cannot tell whether the host has it: the refusal below, with its rule, as before.
            refuse(
                "file",
                resolved,
                None,
                None,
                None,
                op,
                f"No such file or directory: '{shown}' (and no rule lets the sandbox {op} it)",
                not_found,
                given,
                fields,
                True,
            )
            return
        if code == none_code:
            key = "expose-rw" if write else "expose-ro"
            message = (
                f"{what} access to '{shown}' DENIED: no expose-ro/expose-rw rule covers it"
                if not write
                else f"{what} access to '{shown}' DENIED: no expose-rw rule covers it"
            )
            named = (
                writable_named(given, base, resolved)
                if write
                else named_path(given, base, resolved)
            )
            message += f" (add '{key}={named}')"
            refuse(
                "file",
                resolved,
                None,
                None,
                f"{key}={named}",
                op,
                message,
                permission,
                given,
                fields,
                quiet,
                deferred,
            )
            return
        if is_protected(resolved):
            refuse(
                "file",
                resolved,
                None,
                None,
                None,
                op,
                f"Write access to '{shown}' DENIED: it is a rule file, the learning output or "
                "the denials file of this run, which the sandboxed program cannot change",
                permission,
                given,
                fields,
            )
            return
        rule, origin = row if row is not None else (None, None)
        named = writable_named(given, base, resolved)
        if rule is None:
            message = (
                f"Write access to '{shown}' DENIED: it is readable only (a default grant); "
                f"add 'expose-rw={named}' to write it"
            )
        else:
            message = (
                f"Write access to '{shown}' DENIED: rule '{rule}' from {origin} grants read "
                f"access only (add 'expose-rw={named}')"
            )
        refuse(
            "file",
            resolved,
            rule,
            origin,
            f"expose-rw={named}",
            op,
            message,
            permission,
            given,
            fields,
            quiet,
        )

    def buffer_text(obj: Any) -> str | None:
        """The path of a ``bytearray`` or ``memoryview`` argument, which CPython 3.11 still
        takes (with a ``DeprecationWarning``; 3.12 refuses it before any event): judged on a
        copy when no other thread runs -- the C function copied the buffer before raising the
        event, and another thread could change it while the hook runs, so that the path
        judged would not be the one used. ``None`` otherwise (refused, as an unknown type)."""

        kind = type_(obj)
        if kind is not bytearray_ and kind is not memoryview_:
            return None
        if not single_thread and count_threads() != 0:
            return None
        try:
            data = bytes_(obj)
        except (type_error_, value_error_):
            return None
        return decode(data, encoding, "surrogateescape")  # type: ignore[no-any-return]

    def unsupported(obj: Any) -> None:
        name = qualname_of(type_(obj))  # not through a metaclass of the program's
        if type_(obj) is bytearray_ or type_(obj) is memoryview_:
            refuse(
                "file",
                "<" + str_.__str__(name) + ">",
                None,
                None,
                None,
                "path type",
                f"Path argument of type '{name}' refused while other threads run: one could "
                "change the buffer while the Python layer judges it; pass bytes (CPython 3.12 "
                "refuses a bytearray path too)",
                permission,
            )
            return
        refuse(
            "file",
            "<" + str_.__str__(name) + ">",
            None,
            None,
            None,
            "path type",
            f"Path argument of type '{name}' refused: the Python layer of python-sb judges "
            "str, bytes, os.DirEntry and pathlib paths only",
            permission,
        )

    def judge_text(
        given: str, base: str | None, write: bool, missing: int = NO_CHECK
    ) -> str | None:
        """Judge a path text; return the resolved path when allowed (else refuse).

        ``missing``: what the operation needs to exist (``TARGET``, ``ENTRY``, ``CREATE``);
        a refused one that would fail with ``FileNotFoundError`` anyway gets that error
        (``refuse_path``). ``NO_CHECK`` for a database SQLite opens (its error for a missing
        file is its own, see ``judge_database``)."""

        resolved = resolve(given, base)
        code, row = access(resolved)
        if has_ignore and code != ignored_code:
            lexical = lexical_of(given, base)
            if lexical is not None and lexical != resolved and access(lexical)[0] == ignored_code:
                # A name ignore= hides (a symbolic link's own, or a linked directory's on the
                # way) is absent whatever it points to, as in listings and under bwrap and
                # unshare (issue 24, item 7: one meaning of ignore= for every enforcer).
                refuse_path(given, lexical, write, ignored_code, None, base, missing)
                return resolved
        if (code == rw_code and not (write and is_protected(resolved))) or (
            code == ro_code and not write
        ):
            if recording and row is not None and row[0] is not None:
                op = "write" if write else "read"
                record((("kind", "file"), ("op", op), ("path", resolved)))
            return resolved
        refuse_path(given, resolved, write, code, row, base, missing)
        return resolved

    def judge(obj: Any, write: bool, dir_fd: Any, missing: int = NO_CHECK) -> str | None:
        text = text_of(obj)
        if text is None:
            text = buffer_text(obj)
        if text is None:
            unsupported(obj)
            return None
        if text is fd_mark:
            return None
        base = base_of(dir_fd)
        if (
            base is None
            and not fd_known
            and type_(dir_fd) is int_
            and dir_fd >= 0
            and not text.startswith(sep)
        ):  # relative to a directory this platform cannot name
            op = "write" if write else "read"
            refuse(
                "file",
                text,
                None,
                None,
                None,
                op,
                f"{op.capitalize()} access to '{text}' relative to descriptor "
                f"{int_.__repr__(dir_fd)} DENIED: on this platform the Python layer cannot "
                "tell which directory a descriptor is open on",
                permission,
                text,
            )
            return None
        return judge_text(text, base, write, missing)

    def on_open(args: tuple[Any, ...]) -> None:
        obj = args[0]
        if type_(obj) is str_:  # the common case, without a call
            text = obj
            if text is denials_token and text is not None:
                return
        else:
            text = text_of(obj)
            if text is fd_mark:
                return
            if text is None:
                text = buffer_text(obj)
            if text is None:
                unsupported(obj)
                return
        flags = args[2]
        write = type_(flags) is int_ and (flags & write_flags) != 0
        window[0] = text  # what a retry after EINTR will open (see recheck)
        window[1] = write
        missing = parent_needed if write and flags & o_creat else target_needed
        if not write:
            # Some C paths raise the event with the mode as a string and flags 0
            # (_Py_fopen_obj: ssl's keylog_filename appends, "a"): the mode decides then.
            mode = args[1]
            if type_(mode) is str_ and mode != "r" and mode != "rb":
                write = "w" in mode or "a" in mode or "x" in mode or "+" in mode
                if write and "r" not in mode:
                    missing = parent_needed
        if caching:
            code = cache.get(text)
            if code is not None and (code == rw_code or (code == ro_code and not write)):
                return
        if (
            not write
            and text.startswith(trusted)
            and "/." not in text
            and "//" not in text
            and (not has_ignore or access(text)[0] != ignored_code)
        ):
            return
        resolved = judge_text(text, None, write, missing)
        if caching and resolved is not None:
            code, _row = access(resolved)
            if is_protected(resolved) and code == rw_code:
                code = ro_code
            if len_(cache) >= 4096:
                cache.clear()
            cache[text] = code

    window: list[Any] = [None, False]

    def window_state() -> Any:
        return (window[0], window[1]) if window[0] is not None else None

    def recheck(state: Any) -> None:
        """``open()`` retries its system call after ``EINTR`` once the Python signal handlers
        have run (CPython's EINTR loop), with the path judged before: a handler that swapped a
        symbolic link or changed directory would have the kernel open another file. The
        trampoline of every handler calls this after it with the state of before: the path is
        judged again, as the retry will resolve it (a refusal leaves the handler, and open()
        fails with it). The state is forgotten when the program changes the tree or its
        directory outside a handler (the open() is over then): a stale one could refuse for
        nothing."""

        if state is not None:
            judge_text(state[0], None, state[1], True)  # the retried open()

    depth = handler_depth if handler_depth is not None else [0]

    def invalidate() -> None:
        if caching:
            cache.clear()
        if not depth[0]:
            # The program changed the tree (or its directory) outside any signal handler: the
            # last open() is over, and a later handler must not judge it again against the new
            # tree (a relative path after chdir would be refused for nothing).
            window[0] = None

    def on_read_dir(args: tuple[Any, ...]) -> None:
        obj = args[0] if args else None
        if obj is None:
            obj = "."
        listing[0] = True
        try:
            judge(obj, False, -1, target_needed)
        finally:
            listing[0] = False

    own_roots = table.own_roots

    def judge_entry(obj: Any, dir_fd: Any, missing: int = ENTRY) -> str | None:
        """Judge a change of a directory *entry* (remove, rmdir, rename's two names): the entry
        itself must be writable -- named as written, its last component not followed, so
        removing or moving a link in a writable exposure is judged there, not where it points
        -- and so must the directory that holds it: a file exposure grants the file's content,
        not its name in a directory no rule makes writable, and the exposed directory itself
        cannot be removed or moved away (as under every kernel provider). Return the entry's
        path when allowed. ``missing``: ``ENTRY`` when the entry must exist (removing it,
        moving it away), ``CREATE`` when it is made (rename's new name)."""

        text = text_of(obj)
        if text is None or text is fd_mark:
            return judge(obj, True, dir_fd, missing)
        base = base_of(dir_fd)
        if base is None and type_(dir_fd) is int_ and dir_fd >= 0:
            return judge(obj, True, dir_fd, missing)  # a descriptor this platform cannot name
        stripped = text.rstrip("/\\") if table.windows else text.rstrip("/")
        cut = stripped.rfind("/")
        if table.windows:
            back = stripped.rfind("\\")
            if back > cut:  # (no max(): no global name is looked up after arming)
                cut = back
        name = stripped[cut + 1 :]
        if not name or name in (".", ".."):
            return judge(obj, True, dir_fd, missing)
        parent_text = stripped[: cut + 1] if cut >= 0 else "."
        parent: str = resolve(parent_text, base)
        entry: str = parent + name if parent.endswith(sep) else parent + sep + name
        code, row = access(entry)
        if not (code == rw_code and not is_protected(entry)):
            refuse_path(text, entry, True, code, row, base, missing)
            return entry
        if entry in own_roots:
            return entry
        parent_code, parent_row = access(parent)
        if parent_code != rw_code:
            if missing != no_check and would_be_missing(entry, missing):
                # ENOENT for the entry, as CPython says (the parent is exposed: it is there)
                refuse_path(text, entry, True, parent_code, parent_row, base, missing)
            refuse_path(parent_text, parent, True, parent_code, parent_row, base)
        elif recording and row is not None and row[0] is not None:
            record((("kind", "file"), ("op", "write"), ("path", entry)))
        return entry

    def entry_writer(path_index: int, fd_index: int) -> Callable[..., None]:
        def handler(args: tuple[Any, ...]) -> None:
            invalidate()
            dir_fd = args[fd_index] if fd_index >= 0 and len_(args) > fd_index else -1
            judge_entry(args[path_index], dir_fd)

        return handler

    def writer(
        path_index: int, fd_index: int, changes_tree: bool, missing: int
    ) -> Callable[..., None]:
        def handler(args: tuple[Any, ...]) -> None:
            if changes_tree:
                invalidate()
            dir_fd = args[fd_index] if fd_index >= 0 and len_(args) > fd_index else -1
            judge(args[path_index], True, dir_fd, missing)

        return handler

    def metadata_writer(fd_index: int) -> Callable[..., None]:
        """chmod, chown, utime, setxattr, removexattr: on a descriptor too (``os.fchmod``,
        ``os.utime(fd)``...), judged as a write of the file it is open on (the kernel lets
        the owner change a file's metadata through a read-only descriptor)."""

        def handler(args: tuple[Any, ...]) -> None:
            obj = args[0]
            if type_(obj) is int_ or text_of(obj) is fd_mark:
                path = fd_path(int_.__index__(obj))
                # Pipes, sockets and anonymous inodes have no path; a memfd is the program's.
                if path is not None and not path.startswith("/memfd:"):
                    judge_text(path, None, True)
                return
            dir_fd = args[fd_index] if fd_index >= 0 and len_(args) > fd_index else -1
            judge(obj, True, dir_fd, target_needed)

        return handler

    protected_below = tuple_(p + sep for p in protected)

    def holds_protected(resolved: str | None) -> bool:
        if resolved is None:
            return False
        if sep != "/":
            resolved = lower(resolved)
        below = resolved if resolved.endswith(sep) else resolved + sep
        return any_(path.startswith(below) for path in protected_below)

    def on_rename(args: tuple[Any, ...]) -> None:
        invalidate()
        moved = judge_entry(args[0], args[2], entry_needed)
        for resolved in (moved, judge_entry(args[1], args[3], parent_needed)):
            # Moving a directory that holds a rule file away, or another one into its place,
            # changes the rules of the next run as surely as writing the file.
            if resolved is not None and holds_protected(resolved):
                shown = show(resolved)
                refuse(
                    "file",
                    resolved,
                    None,
                    None,
                    None,
                    "write",
                    f"Renaming '{shown}' DENIED: it holds a rule file, the learning output or "
                    "the denials file of this run, which the sandboxed program cannot change",
                    permission,
                    resolved,
                    (("kind", "file"), ("op", "write"), ("path", resolved)),
                )

    def on_link(args: tuple[Any, ...]) -> None:
        invalidate()
        # a hard link to a file is a second way to write it
        judge(args[0], True, args[2], target_needed)
        judge(args[1], True, args[3], parent_needed)

    def on_symlink(args: tuple[Any, ...]) -> None:
        invalidate()
        link = judge(args[1], True, args[2], parent_needed)
        target = text_of(args[0])
        if target is None or target is fd_mark or link is None:
            if target is None:
                unsupported(args[0])
            return
        parent = link[: link.rfind("/")] or "/"
        landing = resolve(target, parent)
        code, _row = access(landing)
        if code in (ro_code, rw_code):
            return
        shown_link, shown_target = show(link), show(landing)
        fields = (("kind", "file"), ("op", "write"), ("path", landing))
        refuse(
            "file",
            landing,
            None,
            None,
            f"expose-ro={landing}" if code == none_code else None,
            "symlink",
            f"Creating a link at '{shown_link}' that points to '{shown_target}' DENIED: "
            "the target is not exposed to the sandbox",
            permission,
            target,
            fields,
        )

    def on_chdir(args: tuple[Any, ...]) -> None:
        invalidate()

    def judge_database(database: Any, uri: bool | None = None) -> None:
        """A database file SQLite opens: ``sqlite3.connect``'s argument, an ``ATTACH``'d file,
        the target of ``VACUUM INTO``. A ``file:`` URI is judged as SQLite reads it
        (``guard/sqlite.py``): ``mode=ro`` is a read (plus the WAL files of a database in WAL
        mode, unless ``immutable=1``), ``mode=memory`` opens nothing. ``uri``: the
        ``sqlite3.connect`` argument when known; unless it is ``True`` a ``file:`` name is also
        judged as the plain file SQLite would open read-write."""

        text = text_of(database)
        if text is fd_mark or text is None:
            if text is None:
                unsupported(database)
            return
        if text in ("", ":memory:"):
            return
        if text.startswith("file:"):
            opened = parse_uri(text)  # None: SQLite refuses the URI and opens nothing
            path = None if opened is None else opened[0]
            if opened is not None and path:  # "": a temporary database, no file of ours
                _path, writes, side_files, _vfs = opened
                resolved = judge_text(path, None, writes)
                if not writes and side_files and resolved is not None and wal_mode(resolved):
                    judge_wal_files(resolved)
            if uri is True:
                return
        cannot_open_missing(text)
        judge_text(text, None, True)

    def cannot_open_missing(text: str) -> None:
        """SQLite fails with ``OperationalError: unable to open database file`` (and creates
        nothing) when the database's directory does not exist: a refused database there gets
        that error rather than the refusal (issue 27, cause 1), as ``refuse_path`` does for
        ``FileNotFoundError``; nothing is reported. Only when SQLite's own module is loaded
        (this is the event of its ``connect``)."""

        resolved = resolve(text, None)
        code, _row = access(resolved)
        if code in (rw_code, ignored_code) or recording:
            return
        if not (host_tree or code != none_code) or not would_be_missing(resolved, parent_needed):
            return
        module = modules.get("_sqlite3")
        error: Any = getattr_(module, "OperationalError", None) if module is not None else None
        if type_(error) is not type_type or not issubclass_(error, exception_):
            return
        exc = error("unable to open database file")
        exc.sqlite_errorcode = 14  # SQLITE_CANTOPEN
        exc.sqlite_errorname = "SQLITE_CANTOPEN"
        raise exc

    def judge_wal_files(database: str) -> None:
        """A read-only open of a database in WAL mode: SQLite still creates and writes its
        ``-wal`` and ``-shm`` files, judged as writes (learning records them as such)."""

        for side in (database + "-wal", database + "-shm"):
            code, _row = access(side)
            if recording or (code == rw_code and not is_protected(side)):
                judge_text(side, None, True)
                continue
            shown = show(database)
            refuse(
                "file",
                side,
                None,
                None,
                None,
                "write",
                f"Opening SQLite database '{shown}' read-only DENIED: it is in WAL mode, so "
                f"SQLite still creates and writes '{shown}-wal' and '{shown}-shm', which no "
                "expose-rw rule covers; add immutable=1 to the URI when the file does not "
                "change while the program runs (file:...?mode=ro&immutable=1), or expose its "
                "directory read-write",
                permission,
                None,
                (("kind", "file"), ("op", "write"), ("path", side)),
            )
            return

    def wal_mode(path: str) -> bool:
        """Whether ``path`` is a database in WAL mode (a read-only open of it still writes its
        ``-wal`` and ``-shm`` files). Its header is read by the guard itself: a regular file
        only (``O_NONBLOCK``: a FIFO never blocks the hook)."""

        if busy_functions is None:
            return True  # cannot look: judged as the stricter case
        enter, leave = busy_functions
        state = enter()
        try:
            try:
                fd = os_open(path, wal_open_flags)
            except os_error:
                return False  # no file: a read-only open fails, writing nothing
            try:
                if not is_regular(fstat(fd).st_mode):
                    return False
                header = os_read(fd, 100)
            except os_error:
                return True
            finally:
                os_close(fd)
        finally:
            leave(state)
        return is_wal_database(header)

    def connect_uri() -> bool | None:
        """The ``uri`` argument the hidden ``_sqlite3.connect`` wrapper passed (``True`` or
        ``False``), when the ``sqlite3.connect`` event being judged comes from it; else
        ``None``. Read from the wrapper's frame, as :func:`made_by_connect` does: an event the
        program raises itself cannot claim it."""

        found = connect_call()
        if found is None:
            return None
        args, kwargs = found
        value: Any = None
        if type_(args) is tuple_ and len_(args) > 7:
            value = args[7]
        if type_(kwargs) is dict_:
            for key, item in dict_items(kwargs):
                if type_(key) is str_ and str_eq(key, "uri"):
                    value = item
        if value is None or value is False:
            return False
        if value is True:
            return True
        if type_(value) is int_:
            return value != 0  # type: ignore[no-any-return]
        return None  # another object: CPython calls its __bool__, not judged here

    def on_sqlite(args: tuple[Any, ...]) -> None:
        judge_database(args[0] if args else None, connect_uri())

    # ATTACH DATABASE and VACUUM INTO (guard/sqlite.py): an authorizer on every connection,
    # set by the hidden _sqlite3.connect wrapper. Everything used at run time is captured now.
    import sys
    from _thread import get_ident

    from pysandboxes.guard.native_files import hide_reentrant

    audit = sys.audit  # captured at arm time, as guard/kit.py does
    sqlite_attach, sqlite_ok, sqlite_deny = 24, 0, 1  # SQLITE_ATTACH, SQLITE_OK, SQLITE_DENY
    pending: dict[int, tuple[int, BaseException]] = {}  # thread -> (connection id, refusal)
    id_ = id
    base_exception = BaseException
    mro_of = type.__dict__["__mro__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    immutable = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type, never a class made in Python
    from pysandboxes.guard import sqlite as sqlite_module

    parse_uri = sqlite_module.build_uri_parser()
    is_wal_database = sqlite_module.is_wal_database
    os_open, os_read, os_close, fstat = os.open, os.read, os.close, os.fstat
    # The POSIX flags where they exist (Windows has none of them: O_RDONLY | O_BINARY there).
    wal_open_flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    for flag in ("O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY"):
        wal_open_flags |= getattr(os, flag, 0)
    os_error = OSError
    import stat as stat_module

    is_regular = stat_module.S_ISREG
    dict_ = dict
    dict_items = dict.items
    modules = sys.modules  # the dict itself: the program may replace entries, not it
    getattr_, issubclass_, exception_, type_type = getattr, issubclass, Exception, type
    str_eq = str.__eq__

    def inner_code(code: Any, name: str) -> Any:
        return next(c for c in code.co_consts if getattr(c, "co_name", None) == name)

    one_shot_code = inner_code(hide_reentrant.__code__, "one")
    connect_marker = sqlite_module.connect_before_code()

    function_type = type(inner_code)  # a plain Python function's type
    function_name = function_type.__dict__["__name__"].__get__
    function_qualname = function_type.__dict__["__qualname__"].__get__

    def c_method(cls: Any, name: str) -> Any:
        for base in mro_of(cls):
            if flags_of(base) & immutable:
                method = dict_of(base).get(name)
                if method is not None:
                    return method
        return None

    def make_authorizer(connection: Any, callback: Any) -> Callable[..., int]:
        key = id_(connection)

        def authorizer(action: int, arg1: Any, arg2: Any, database: Any, trigger: Any) -> int:
            if action == sqlite_attach:
                try:
                    audit("pysandboxes.sqlite.attach", arg1)
                except base_exception as exc:  # the refusal: kept for the statement's caller
                    pending[get_ident()] = (key, exc)
                    return sqlite_deny
            if callback is None:
                return sqlite_ok
            return callback(action, arg1, arg2, database, trigger)  # type: ignore[no-any-return]

        if type_(callback) is function_type:
            # An authorizer that raises is reported (sys.unraisablehook) under the callable
            # SQLite holds: the program's name, as without the guard (read by the C getter).
            authorizer.__name__ = function_name(callback)
            authorizer.__qualname__ = function_qualname(callback)
        return authorizer

    def connect_call(depth: int = 4) -> tuple[Any, Any] | None:
        """``(args, kwargs)`` of the hidden ``_sqlite3.connect`` wrapper when the event being
        judged was raised inside the C ``__init__`` called by that wrapper itself, with no
        Python frame between (no ``__init__`` of a factory, no ``__del__`` run by the
        collector): the frame that called into C is the one-shot generator of a hidden original
        (``wrappers.hide``) whose marker is the SQLite ``before``'s code -- of the hidden C
        functions, only ``_sqlite3.connect`` makes connections. ``None`` otherwise."""

        if busy_functions is None or getframe is None:
            return None
        enter, leave = busy_functions
        state = enter()
        try:
            # this function, its caller here, the handler, the hook body, the caller
            frame: Any = getframe(depth)
            if frame.f_code is not one_shot_code:
                return None
            found: Any = frame.f_locals
            # The generator's marker (it names no before/after while the original runs).
            if found.get("marker") is not connect_marker:
                return None
            return found.get("args"), found.get("kwargs")
        finally:
            leave(state)

    def made_by_connect() -> bool:
        """Whether ``sqlite3.connect/handle`` comes from the hidden wrapper (``connect_call``)."""

        return connect_call() is not None

    def on_sqlite_handle(args: tuple[Any, ...]) -> None:
        # Raised inside the C __init__, before the connection can be used (or given an
        # authorizer): the wrapper sets the authorizer as soon as connect returns.
        if made_by_connect():
            return
        connection = args[0] if args else None
        name = qualname_of(type_(connection))
        refuse(
            "file",
            "<sqlite3 connection of class " + name + ">",
            None,
            None,
            None,
            "sqlite",
            f"A sqlite3 connection of class '{name}' made other than by sqlite3.connect "
            "DENIED: python-sb checks the files of ATTACH DATABASE and VACUUM INTO with an "
            "authorizer it sets on the connections sqlite3.connect makes; use sqlite3.connect "
            "(a factory class may not define __init__): the C __init__ marks the connection "
            "usable only after its last audit event, so no authorizer can be set on one made "
            "otherwise before the program's code uses it",
            permission,
        )

    def on_sqlite_authorizer(args: tuple[Any, ...]) -> None:
        connection, callback = args[0], args[1]
        method = c_method(type_(connection), "set_authorizer")
        if method is not None:
            method(connection, make_authorizer(connection, callback))

    def on_sqlite_attach(args: tuple[Any, ...]) -> None:
        name = args[0] if args else None
        if type_(name) is str_:
            judge_database(name)
            return
        refuse(
            "file",
            "<computed file name>",
            None,
            None,
            None,
            "write",
            "ATTACH DATABASE with a file name computed at run time DENIED: the Python layer "
            "judges the file before SQLite evaluates the name; write the name as a literal",
            permission,
        )

    def on_sqlite_refused(args: tuple[Any, ...]) -> None:
        found = pending.pop(get_ident(), None)
        if found is not None and args and found[0] == id_(args[0]):
            raise found[1]

    def unquote(text: str) -> str:
        if "%" not in text:
            return text
        raw = text.encode("utf-8", "surrogateescape")
        out = bytearray_()
        i, n = 0, len_(raw)
        while i < n:
            byte = raw[i]
            if byte == 0x25 and i + 2 < n and raw[i + 1] in hexdigits and raw[i + 2] in hexdigits:
                out.append(int_(raw[i + 1 : i + 3], 16))
                i += 3
                continue
            out.append(byte)
            i += 1
        return bytes_(out).decode("utf-8", "surrogateescape")

    def on_xattr_read(args: tuple[Any, ...]) -> None:
        obj = args[0] if args else None
        judge("." if obj is None else obj, False, -1)  # attributes are content too

    def is_ignored(path: str) -> bool:
        return has_ignore and access(path)[0] == ignored_code

    def writable(path: str) -> bool:
        return access(path)[0] == rw_code

    handlers: dict[str, Callable[[tuple[Any, ...]], None]] = {
        "open": on_open,
        "os.listdir": on_read_dir,
        "os.scandir": on_read_dir,
        "os.mkdir": writer(0, 2, True, CREATE),
        "os.rmdir": entry_writer(0, 1),
        "os.remove": entry_writer(0, 1),
        "os.rename": on_rename,
        "os.link": on_link,
        "os.symlink": on_symlink,
        "os.truncate": writer(0, -1, False, TARGET),
        "os.utime": metadata_writer(3),
        "os.chmod": metadata_writer(2),
        "os.chown": metadata_writer(3),
        "os.setxattr": metadata_writer(-1),
        "os.removexattr": metadata_writer(-1),
        "os.chdir": on_chdir,
        "os.getxattr": on_xattr_read,
        "os.listxattr": on_xattr_read,
        "sqlite3.connect": on_sqlite,
        "sqlite3.connect/handle": on_sqlite_handle,
        "pysandboxes.sqlite.authorizer": on_sqlite_authorizer,
        "pysandboxes.sqlite.attach": on_sqlite_attach,
        "pysandboxes.sqlite.refused": on_sqlite_refused,
        "pysandboxes.mknod": writer(0, 1, True, CREATE),
    }
    return FileHandlers(
        handlers=handlers,
        window_state=window_state,
        recheck=recheck,
        judge=judge,
        is_ignored=is_ignored,
        writable=writable,
    )
