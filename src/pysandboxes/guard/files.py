"""Files (SPEC §3.1): which resolved paths the program may read or write.

:func:`build_table` turns the policy and the run context into a :class:`PathTable` at arm
time: the exposed prefixes (the rules' and the default grants), longest first, the ``ignore=``
globs compiled with :func:`pysandboxes.policy.decide.glob_regex`, and the paths nobody may
change (every loaded rule file, the learning output, the denials file). :func:`make_access`
answers for one resolved path with the same precedence as
:func:`pysandboxes.policy.decide.path_access` (``ignore`` first, then the longest exposed
prefix, read-write first at equal length) -- the unit tests check that they agree.

:func:`make_file_handlers` returns the audit-event handlers, assembled from small factories
that take what their closures use as arguments (``file_refusals``: how a refusal names a path;
``file_judges``: the judgments; ``file_events``: the handlers; ``sqlite_handlers``: SQLite's),
so that no handler reads a module global after arming. The hot path is ``open``: a path
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

from pysandboxes.guard import file_events as events
from pysandboxes.guard import file_judges as judges
from pysandboxes.guard import file_refusals as refusals
from pysandboxes.guard import sqlite_handlers as sqlite_events
from pysandboxes.guard.denials import Reporter
from pysandboxes.guard.paths import PathTools
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


def build_table(
    policy: Policy,
    context: RunContext,
    read_roots: tuple[str, ...],
    flavour: str | None = None,
    realpath: Callable[[str], str] = os.path.realpath,
) -> PathTable:
    """The path rules of one run, defaults included (see the module docstring).

    ``read_roots``: the interpreter's directories and python-sb's own, readable by default.
    ``flavour``: ``"windows"`` for Windows paths (``policy/pathforms.py``): every path of the
    table is kept lowered (compared without regard to case), ``\\`` separates components,
    and there is no lexical fast path (``trusted`` is empty: a written ``..`` is only undone
    by resolving). Default: this platform's (``platform_caps.CAPS.path_flavour``).
    ``realpath``: how a default or protected path is resolved to its second spelling
    (``os.path.realpath``; the hook passes the guard's own resolution of the program's paths,
    in C where the accelerator is built: the same answers, without a Python ``lstat`` loop for
    each of some fifty paths of every start).
    """

    def _variants(path: str) -> list[str]:
        real = realpath(path)
        return [path] if real == path else [path, real]

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
    one precedence of ``policy/precedence.py``, whose matcher ``decide.path_access`` uses too
    (POSIX rows grouped by their first component there: the table has some fifty rows, the
    default grants). On Windows (``table.windows``) the paths, normalised by
    ``guard/paths.py``'s resolve, are lowered and split on ``\\``; a path ``resolve`` refused
    (``paths.REFUSED`` first) matches nothing. The closure holds plain tuples only (no
    attribute of a guard class is read at run time)."""

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


class Judging(NamedTuple):
    """The judging closures of one armed guard (:func:`make_judging`), read when arming."""

    access: Callable[[str], tuple[int, Info | None]]
    is_protected: Callable[[str], bool]
    would_be_missing: Callable[[str, int], bool]
    unsupported: Callable[[Any], None]
    qualname_of: Callable[[Any], str]
    buffer_text: Callable[[Any], str | None]
    judge_text: Callable[..., str | None]  # (given, base, write, missing=NO_CHECK)
    judge: Callable[..., str | None]  # (obj, write, dir_fd, missing=NO_CHECK)
    judge_entry: Callable[..., str | None]  # (obj, dir_fd, missing=ENTRY)
    has_ignore: bool  # the table has ignore= rules
    free_reads: bool  # no read of an absolute path can be refused (see reads_are_free)


def make_is_protected(protected: frozenset[str], windows: bool) -> Callable[[str], bool]:
    """``is_protected(resolved)``: a path nobody may change (``PathTable.protected``, whose
    paths are lowered on Windows: case is ignored there)."""

    if windows:
        lower = str.lower

        def is_protected(path: str) -> bool:
            return lower(path) in protected

    else:

        def is_protected(path: str) -> bool:
            return path in protected

    return is_protected


def reads_are_free(table: PathTable, recording: bool) -> bool:
    """Whether ``judge_text`` allows every read of every path, whatever it resolves to: the
    table has a row for ``/`` (``expose-ro=/`` or ``expose-rw=/``), no ``ignore=`` rule, every
    row grants reading (they all do: a row is ``RO`` or ``RW``), POSIX paths (every path
    ``resolve`` gives starts with ``/``, so the ``/`` row holds it when no longer row does),
    and nothing is recorded (learn and audit modes record the resolved path of a read that a
    rule granted). Then a read handler may skip the resolution of an absolute path: no
    symbolic link, ``..`` or ``/proc/self/fd`` entry can lead to a path that another row would
    judge differently for reading. Writes are judged as always (an ``expose-rw=`` directory's
    links may point outside it)."""

    if recording or table.windows or table.ignore_names is not None:
        return False
    if table.ignore_anchored is not None or table.ignore_rules:
        return False
    root = False
    for row in table.rows:  # a loop, not a generator: no nested code reads a global
        if row.access not in (RO, RW):
            return False
        root = root or (row.path == "/" and row.below == "/")
    return root


def make_predicates(
    access: Callable[[str], tuple[int, Info | None]], has_ignore: bool
) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """``(is_ignored, writable)`` of a resolved path, for the other handlers of the guard."""

    ignored_code, rw_code = IGNORED, RW

    def is_ignored(path: str) -> bool:
        return has_ignore and access(path)[0] == ignored_code

    def writable(path: str) -> bool:
        return access(path)[0] == rw_code

    return is_ignored, writable


def make_judging(
    table: PathTable,
    tools: PathTools,
    reporter: Reporter,
    *,
    kit_type: Callable[[object], type],
    single_thread: bool,
    host_tree: bool,
    listing: list[bool],
    launcher_call: Callable[[], bool],
    import_system_call: Callable[[], bool],
) -> Judging:
    """The judging closures over ``table`` (see :func:`make_file_handlers` for the arguments;
    ``single_thread``: no thread nor child process is granted; ``listing``: ``[True]`` while a
    directory listing is judged)."""

    codes = (NONE, RO, RW, IGNORED)
    kinds = (NO_CHECK, TARGET, ENTRY, CREATE)
    access = make_access(table)
    windows = table.windows
    sep = "\\" if windows else "/"
    is_protected = make_is_protected(table.protected, windows)
    qualname_of = refusals.make_qualname_of(kit_type)
    lexical_of = refusals.make_lexical(kit_type, native.getcwd)
    absent, would_be_missing = refusals.make_existence(native.stat, native.lstat, sep, kinds)
    refuse_path = refusals.make_refuse_path(
        reporter=reporter,
        codes=codes,
        no_check=NO_CHECK,
        host_tree=host_tree,
        report_mode=refusals.make_report_mode(
            reporter.recording, listing, launcher_call, import_system_call
        ),
        is_protected=is_protected,
        ignore_rule_of=refusals.make_ignore_rule_of(table.ignore_rules),
        would_be_missing=would_be_missing,
        names=refusals.make_names(lexical_of, tools.resolve, absent, sep),
    )
    unsupported = refusals.make_unsupported(reporter, kit_type, qualname_of)
    has_ignore = table.ignore_names is not None or table.ignore_anchored is not None
    buffer_text = judges.make_buffer_text(kit_type, single_thread, _FS_ENCODING)
    base_of = judges.make_base_of(kit_type, tools.fd_path)
    judge_text = judges.make_judge_text(
        reporter=reporter,
        resolve=tools.resolve,
        access=access,
        codes=codes,
        no_check=NO_CHECK,
        has_ignore=has_ignore,
        is_protected=is_protected,
        lexical_of=lexical_of,
        refuse_path=refuse_path,
    )
    judge = judges.make_judge(
        reporter=reporter,
        tools=tools,
        kit_type=kit_type,
        windows=windows,
        no_check=NO_CHECK,
        base_of=base_of,
        buffer_text=buffer_text,
        unsupported=unsupported,
        judge_text=judge_text,
    )
    judge_entry = judges.make_judge_entry(
        reporter=reporter,
        tools=tools,
        kit_type=kit_type,
        windows=windows,
        access=access,
        codes=codes,
        kinds=kinds,
        own_roots=table.own_roots,
        is_protected=is_protected,
        base_of=base_of,
        judge=judge,
        refuse_path=refuse_path,
        would_be_missing=would_be_missing,
    )
    return Judging(
        access,
        is_protected,
        would_be_missing,
        unsupported,
        qualname_of,
        buffer_text,
        judge_text,
        judge,
        judge_entry,
        has_ignore,
        reads_are_free(table, reporter.recording),
    )


def make_open_handlers(
    table: PathTable,
    tools: PathTools,
    j: Judging,
    *,
    kit_type: Callable[[object], type],
    caching: bool,
    denials_token: str | None,
    depth: list[int],
) -> tuple[
    Callable[[tuple[Any, ...]], None], Callable[[], Any], Callable[[Any], None], Callable[[], None]
]:
    """``(on_open, window_state, recheck, invalidate)`` (``file_events.make_on_open`` and
    ``make_window``) over one cache and one window. ``caching``: ``open`` may answer from its
    cache; ``depth``: ``[number of Python signal handlers running]``."""

    cache: dict[str, int] = {}  # path text -> access code, until the tree changes
    window: list[Any] = [None, False]  # the last open() judged: (path text, write)
    on_open = events.make_on_open(
        kit_type=kit_type,
        tools=tools,
        access=j.access,
        codes=(NONE, RO, RW, IGNORED),
        kinds=(NO_CHECK, TARGET, ENTRY, CREATE),
        trusted=table.trusted,
        has_ignore=j.has_ignore,
        denials_token=denials_token,
        write_flags=_WRITE_FLAGS,
        caching=caching,
        free_reads=j.free_reads,
        cache=cache,
        window=window,
        is_protected=j.is_protected,
        buffer_text=j.buffer_text,
        unsupported=j.unsupported,
        judge_text=j.judge_text,
    )
    return (on_open, *events.make_window(caching, cache, window, depth, j.judge_text))


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
    """The handlers of the file events (see the module docstring), assembled from the
    factories of ``file_refusals``, ``file_judges``, ``file_events`` and ``sqlite_handlers``.

    ``use_cache``: no thread nor child process is granted (``hook.py``), so ``open`` may answer
    from its cache (not in learning or audit mode). ``host_tree``: the program sees the host's
    file tree (no provider, or ``landlock``), so a path missing here is missing for the user
    too; under ``bwrap``/``unshare`` an unexposed path is always missing from the sandbox's
    tree, and the guard cannot tell whether the host has it
    (``file_refusals.make_existence``). ``handler_depth``: ``[number of Python signal handlers
    running]`` (guard/signals.py).
    """

    # Captured now: module globals could be rebound by the program (import
    # pysandboxes.guard.files), and the closures the factories make read none of them.
    codes = (NONE, RO, RW, IGNORED)
    kinds = (NO_CHECK, TARGET, ENTRY, CREATE)
    listing = [False]  # set while a directory listing is judged (only changes reporting)
    j = make_judging(
        table,
        tools,
        reporter,
        kit_type=kit_type,
        single_thread=use_cache,
        host_tree=host_tree,
        listing=listing,
        launcher_call=launcher_call,
        import_system_call=import_system_call,
    )
    on_open, window_state, recheck, invalidate = make_open_handlers(
        table,
        tools,
        j,
        kit_type=kit_type,
        caching=use_cache and not reporter.recording,
        denials_token=denials_token,
        depth=handler_depth if handler_depth is not None else [0],
    )
    on_read_dir, on_xattr_read = events.make_reads(
        listing, TARGET, j.judge, tools.text_of if j.free_reads else None
    )
    entry_writer, writer, metadata_writer = events.make_writers(
        kit_type=kit_type,
        tools=tools,
        target_needed=TARGET,
        invalidate=invalidate,
        judge=j.judge,
        judge_entry=j.judge_entry,
        judge_text=j.judge_text,
    )
    on_link, on_symlink, on_chdir = events.make_links(
        reporter=reporter,
        tools=tools,
        access=j.access,
        codes=codes,
        kinds=kinds,
        invalidate=invalidate,
        judge=j.judge,
        unsupported=j.unsupported,
        free_reads=j.free_reads,
    )
    sqlite_handlers = sqlite_events.make_sqlite_handlers(
        reporter=reporter,
        tools=tools,
        kit_type=kit_type,
        access=j.access,
        codes=codes,
        parent_needed=CREATE,
        host_tree=host_tree,
        is_protected=j.is_protected,
        would_be_missing=j.would_be_missing,
        unsupported=j.unsupported,
        qualname_of=j.qualname_of,
        judge_text=j.judge_text,
        busy_functions=busy_functions,
        getframe=getframe,
    )
    handlers: dict[str, Callable[[tuple[Any, ...]], None]] = {
        "open": on_open,
        "os.listdir": on_read_dir,
        "os.scandir": on_read_dir,
        "os.mkdir": writer(0, 2, True, CREATE),
        "os.rmdir": entry_writer(0, 1),
        "os.remove": entry_writer(0, 1),
        "os.rename": events.make_on_rename(
            reporter, table.protected, table.windows, kinds, invalidate, j.judge_entry
        ),
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
        **sqlite_handlers,
        "pysandboxes.mknod": writer(0, 1, True, CREATE),
    }
    is_ignored, writable = make_predicates(j.access, j.has_ignore)
    return FileHandlers(
        handlers=handlers,
        window_state=window_state,
        recheck=recheck,
        judge=j.judge,
        is_ignored=is_ignored,
        writable=writable,
    )
