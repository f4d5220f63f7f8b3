"""How the file guard names a path and tells the program it is refused (``guard/files.py``).

A refusal says which rule would allow the operation, and names the path the program wrote when
it reaches the resolved one through a symbolic link (:func:`make_names`); an operation that
would fail with ``FileNotFoundError`` without the sandbox gets that error instead
(:func:`make_existence`, issue 27 cause 1); a name ``ignore=`` hides is absent.

Every function here is a factory called when the guard is armed: what its closures use is
passed in or captured then, so that nothing they do after arming reads a module global the
program could rebind (``tests/unit/guard/test_run_time_state.py``).
"""

from __future__ import annotations

from pysandboxes.guard.denials import NOT_FOUND, PERMISSION

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.guard.denials import Reporter

    Info = tuple[str | None, str | None]  # (rule text, origin) of the deciding row
    #: ``(given, base) -> str | None``: see :func:`make_lexical`.
    Lexical = Callable[[str, str | None], str | None]


def make_qualname_of(kit_type: Callable[[object], type]) -> Callable[[Any], str]:
    """``qualname_of(cls)``: a class's ``__qualname__`` read by ``type``'s own descriptor (no
    metaclass of the program's runs), as a plain ``str``."""

    type_ = kit_type
    str_ = str
    type_qualname = type.__dict__["__qualname__"].__get__

    def qualname_of(cls: Any) -> str:
        name = type_qualname(cls)
        return str_.__str__(name) if type_(name) is not str_ else name  # type: ignore[no-any-return]

    return qualname_of


def make_lexical(kit_type: Callable[[object], type], getcwd: Callable[[], str]) -> Lexical:
    """``lexical_of(given, base)``: the path as written, made absolute (against ``base``, else
    the current directory), ``.`` and ``..`` removed, its links not followed. The one copy for
    the file handlers and ``os.stat``'s (``guard/hook.py``)."""

    type_ = kit_type
    str_ = str
    oserror = OSError

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

    return lexical_of


def make_existence(
    stat: Callable[[str], Any], lstat: Callable[[str], Any], sep: str, kinds: tuple[int, ...]
) -> tuple[Callable[..., bool], Callable[[str, int], bool]]:
    """``(absent, would_be_missing)`` over the system calls ``stat`` and ``lstat`` (which raise
    no audit event). ``kinds``: ``files.py``'s ``(NO_CHECK, TARGET, ENTRY, CREATE)``."""

    no_check, target_needed, _entry_needed, parent_needed = kinds
    oserror = OSError
    file_not_found = FileNotFoundError

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

    return absent, would_be_missing


def make_names(
    lexical_of: Lexical,
    resolve: Callable[[str, str | None], str],
    absent: Callable[..., bool],
    sep: str,
) -> tuple[Callable[[str, str | None, str], str], Callable[[str, str | None, str], str]]:
    """``(named_path, writable_named)``: the path a suggested rule names."""

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

    return named_path, writable_named


def make_ignore_rule_of(
    ignore_rules: tuple[tuple[Callable[[str], Any], bool, str, str], ...],
) -> Callable[[str], Info]:
    """``ignore_rule_of(path)``: the text and origin of the first ``ignore=`` rule that hides
    ``path`` (``PathTable.ignore_rules``), for the refusal's message."""

    any_ = any

    def ignore_rule_of(path: str) -> tuple[str | None, str | None]:
        for match, is_name, text, origin in ignore_rules:
            if is_name:
                if any_(part and match(part) is not None for part in path.split("/")):
                    return text, origin
            elif match(path) is not None:
                return text, origin
        return None, None

    return ignore_rule_of


def make_report_mode(
    recording: bool,
    listing: list[bool],
    launcher_call: Callable[[], bool],
    import_system_call: Callable[[], bool],
) -> Callable[[str, bool], tuple[bool, bool]]:
    """``report_mode(resolved, write) -> (quiet, deferred)`` of a refused file access: ``quiet``,
    not reported, learned nor written to ``--denials``; ``deferred`` (audit and learning),
    recorded, marked and held back. ``listing``: ``[True]`` while a directory listing is
    judged; ``launcher_call``, ``import_system_call``: whether python-sb's launcher or the
    import system's path finder is the caller."""

    def report_mode(resolved: str, write: bool) -> tuple[bool, bool]:
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
        return quiet, deferred

    return report_mode


def make_refuse_path(
    *,
    reporter: Reporter,
    codes: tuple[int, int, int, int],
    no_check: int,
    host_tree: bool,
    report_mode: Callable[[str, bool], tuple[bool, bool]],
    is_protected: Callable[[str], bool],
    ignore_rule_of: Callable[[str], Info],
    would_be_missing: Callable[[str, int], bool],
    names: tuple[Callable[[str, str | None, str], str], Callable[[str, str | None, str], str]],
) -> Callable[..., None]:
    """``refuse_path(given, resolved, write, code, row, base=None, missing=NO_CHECK)``: refuse
    (or report, in audit and learning) one file access the rules do not grant, with the rule
    that would allow it. ``codes``: ``files.py``'s ``(NONE, RO, RW, IGNORED)``; ``listing``:
    ``[True]`` while a directory listing is judged (the import system's are quiet)."""

    none_code, _ro_code, _rw_code, ignored_code = codes
    refuse = reporter.refuse
    # In enforce mode without a --denials file a refusal is raised and nothing is written:
    # whether it would be quiet or deferred changes nothing, so the caller-identifying frame
    # walks of report_mode (launcher_call, import_system_call) are not run.
    reports = reporter.reports
    show = reporter.show_path
    permission, not_found = PERMISSION, NOT_FOUND
    named_path, writable_named = names

    def refuse_path(
        given: str,
        resolved: str,
        write: bool,
        code: int,
        row: Info | None,
        base: str | None = None,
        missing: int = no_check,
    ) -> None:
        op = "write" if write else "read"
        fields: tuple[tuple[str, str], ...] = (("kind", "file"), ("op", op), ("path", resolved))
        quiet, deferred = report_mode(resolved, write) if reports else (False, False)
        if deferred:
            fields = (*fields, ("by", "import-system"))
        shown = show(resolved)
        rule: str | None = None
        origin: str | None = None
        suggestion: str | None = None
        error = permission
        if code == ignored_code:
            rule, origin = ignore_rule_of(resolved)
            message = (
                f"No such file or directory: '{shown}' (hidden by rule '{rule}' from {origin})"
            )
            error, quiet, deferred = not_found, False, False
        elif (
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
            message = f"No such file or directory: '{shown}' (and no rule lets the sandbox {op} it)"
            error, quiet, deferred = not_found, True, False
        elif code == none_code:
            key = "expose-rw" if write else "expose-ro"
            message = (
                f"Read access to '{shown}' DENIED: no expose-ro/expose-rw rule covers it"
                if not write
                else f"Write access to '{shown}' DENIED: no expose-rw rule covers it"
            )
            named = (
                writable_named(given, base, resolved)
                if write
                else named_path(given, base, resolved)
            )
            message += f" (add '{key}={named}')"
            suggestion = f"{key}={named}"
        elif is_protected(resolved):
            message = (
                f"Write access to '{shown}' DENIED: it is a rule file, the learning output or "
                "the denials file of this run, which the sandboxed program cannot change"
            )
            quiet, deferred = False, False
        else:
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
            suggestion = f"expose-rw={named}"
            deferred = False
        refuse(
            "file",
            resolved,
            rule,
            origin,
            suggestion,
            op,
            message,
            error,
            given,
            fields,
            quiet,
            deferred,
        )

    return refuse_path


def make_unsupported(
    reporter: Reporter, kit_type: Callable[[object], type], qualname_of: Callable[[Any], str]
) -> Callable[[Any], None]:
    """``unsupported(obj)``: refuse a path argument of a type the guard does not judge (or a
    buffer it cannot judge safely while other threads run)."""

    refuse = reporter.refuse
    permission = PERMISSION
    type_ = kit_type
    str_ = str
    bytearray_ = bytearray
    memoryview_ = memoryview

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

    return unsupported
