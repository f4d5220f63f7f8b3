"""Refusals and records: the exceptions the guard raises, ``--denials`` lines, learning lines.

:func:`make_reporter` returns the closures every concern uses to end a decision:

- ``refuse(kind, target, rule, origin, suggestion, detail, message, exc_kind, filename)``:
  builds the :class:`~pysandboxes.errors.Denial` and, by mode, raises the matching
  ``Rule*Error`` (enforce: SPEC §3.7), or writes it as a record (audit) -- in both cases the
  denial is appended to ``--denials=FILE``;
- ``record(fields)``: one JSON line per distinct access on ``RunContext.record_fd`` (learn and
  audit modes).

Exceptions and denials are built with the C slots captured in :mod:`pysandboxes.guard.kit`,
never through ``__init__`` methods the program could have replaced. JSON is written by hand
with ``_json.encode_basestring_ascii`` for the same reason.
"""

from __future__ import annotations

import errno
import os
import sys

from pysandboxes.errors import (
    Denial,
    RuleApiPermissionError,
    RuleConnectionRefusedError,
    RuleFileNotFoundError,
    RuleModuleNotFoundError,
    RulePermissionError,
)
from pysandboxes.guard.kit import Kit
from pysandboxes.runtime import RunContext

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple

#: ``exc_kind`` values of ``refuse``.
PERMISSION, NOT_FOUND, CONNECTION, MODULE, API = range(5)

#: How many distinct record lines are remembered for de-duplication before the set restarts.
_SEEN_LIMIT = 65536


class Reporter(NamedTuple):
    """The closures of one armed guard (see the module docstring)."""

    refuse: Callable[..., None]
    record: Callable[[tuple[tuple[str, Any], ...]], None]
    recording: bool
    enforcing: bool
    auditing: bool
    show_path: Callable[[str], str]
    #: Whether ``refuse``'s ``quiet`` and ``deferred`` can change anything: False in enforce
    #: mode without a ``--denials`` file, where a refusal is raised and nothing is written.
    reports: bool


def make_reporter(context: RunContext, kit: Kit, home: str, denials_token: str | None) -> Reporter:
    """Build the reporting closures for ``context`` (mode, record fd, denials file).

    ``denials_token`` is the denials file path as a private ``str`` object: the file guard lets
    an ``open`` of exactly that object through (identity, not equality), so the guard can append
    to a file the program itself cannot write.
    """
    # Captured at arm time: the program can reach this module's namespace.
    captured_oserror = OSError
    captured_len = len
    captured_seen_limit = _SEEN_LIMIT
    captured_denial = Denial

    mode = context.mode
    enforcing = mode == "enforce"
    auditing = mode == "audit"
    recording = mode in ("learn", "audit") and context.record_fd >= 0
    record_fd = context.record_fd
    type_ = kit.type
    json_str = kit.json_str
    write = kit.write
    # The raw posix.open for the --denials file, read now (hook.install calls this before the
    # wrappers replace it); not in the Kit, which a program may reach, nor a module global.
    open_ = sys.modules[os.name].open  # posix (nt on Windows), still the C function
    close = kit.close
    getcwd = kit.getcwd
    dict_of = kit.dict_of
    object_new = kit.object_new
    slots = kit.denial_slots
    oserror_new = captured_oserror.__new__
    importerror_new = ImportError.__new__
    oserror_init = kit.oserror_init
    importerror_init = kit.importerror_init
    seen: set[str] = set()
    home_below = home.rstrip("/") + "/" if home and home != "/" else None
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)  # POSIX's
    classes = (
        RulePermissionError,
        RuleFileNotFoundError,
        RuleConnectionRefusedError,
        RuleModuleNotFoundError,
        RuleApiPermissionError,
    )
    codes = (errno.EACCES, errno.ENOENT, errno.ECONNREFUSED, 0, errno.EACCES)
    module_kind = MODULE  # captured: make_exception runs after arming
    str_ = str
    int_ = int
    bool_ = bool
    tuple_ = tuple
    zip_ = zip
    len_ = kit.len

    def show_path(path: str) -> str:
        """SPEC §2.1: relative to the cwd when below it, ``~/...`` below home."""

        try:
            cwd = getcwd()
        except captured_oserror:
            cwd = ""
        if cwd and cwd != "/":
            if path == cwd:
                return "."
            if path.startswith(cwd + "/"):
                return path[captured_len(cwd) + 1 :]
        if home_below is not None and (path + "/").startswith(home_below):
            return "~" + path[captured_len(home_below) - 1 :]
        return path

    def encode(value: Any) -> str:
        kind = type_(value)
        if value is None:
            return "null"
        if kind is str_:
            return json_str(value)  # type: ignore[no-any-return]
        if kind is bool_:
            return "true" if value else "false"
        if kind is int_:
            return int_.__repr__(value)
        if kind is tuple_:  # ((key, value), ...): an object
            return "{" + ", ".join(json_str(k) + ": " + encode(v) for k, v in value) + "}"
        return "null"

    def append_denial(pairs: tuple[tuple[str, Any], ...]) -> None:
        token = denials_token
        if token is None:
            return
        line = encode(pairs) + "\n"
        if not enforcing:
            if line in seen:
                return
            seen.add(line)
        try:
            fd = open_(token, flags, 0o644)
        except captured_oserror:
            return
        try:
            write(fd, line.encode("utf-8", "surrogateescape"))
        except captured_oserror:
            pass
        finally:
            close(fd)

    def record(fields: tuple[tuple[str, Any], ...]) -> None:
        if not recording:
            return
        line = encode(fields) + "\n"
        if line in seen:
            return
        if len_(seen) >= captured_seen_limit:
            seen.clear()
        seen.add(line)
        try:  # noqa: SIM105  (contextlib.suppress is Python code the program could patch)
            write(record_fd, line.encode("utf-8", "surrogateescape"))
        except captured_oserror:
            pass

    def make_denial(
        kind: str,
        target: str,
        rule: str | None,
        origin: str | None,
        suggestion: str | None,
        detail: str | None,
    ) -> Any:
        denial = object_new(captured_denial)
        for setter, value in zip_(slots, (kind, target, rule, origin, suggestion, detail)):
            setter(denial, value)
        return denial

    def make_exception(exc_kind: int, message: str, denial: Any, filename: str | None) -> Any:
        cls = classes[exc_kind]
        code = codes[exc_kind]
        if exc_kind == module_kind:
            exc = importerror_new(cls, message)
            importerror_init(exc, message, name=filename)
        else:
            exc = oserror_new(cls, code, message)
            if filename is not None:
                oserror_init(exc, code, message, filename)
            else:
                oserror_init(exc, code, message)
        dict_of(exc)["denial"] = denial
        return exc

    def refuse(
        kind: str,
        target: str,
        rule: str | None,
        origin: str | None,
        suggestion: str | None,
        detail: str | None,
        message: str,
        exc_kind: int,
        filename: str | None = None,
        fields: tuple[tuple[str, Any], ...] | None = None,
        quiet: bool = False,
        deferred: bool = False,
    ) -> None:
        """Refuse (enforce) or report (audit/learn) one access the rules do not grant.

        ``deferred`` (audit): recorded with its denial but not appended to ``--denials`` here;
        the supervisor decides at the end whether the run needed it (the import system's
        listing of a ``sys.path`` directory) and appends it then.
        """

        denial = make_denial(kind, target, rule, origin, suggestion, detail)
        pairs = (
            ("kind", kind),
            ("target", target),
            ("rule", rule),
            ("origin", origin),
            ("suggestion", suggestion),
            ("detail", detail),
        )
        if enforcing:
            if not quiet:
                append_denial(pairs)
            # Raised here, not by a helper taking it as an argument: no name of this frame
            # holds the exception, so there is no reference cycle (this frame -> exception ->
            # traceback -> this frame) and a refusal the guard drops does not leave the
            # guard's frames to the garbage collector (gc.garbage under DEBUG_SAVEALL hands
            # them to the program). One frame less in the traceback is also one frame less
            # for the hook's strip to clear: two audit events less per refusal.
            raise make_exception(exc_kind, message, denial, filename)
        if quiet:
            return
        if auditing:
            if not deferred:
                append_denial(pairs)
            if fields is not None:
                record((*fields, ("denial", pairs)))
        elif fields is not None:
            record(fields)

    return Reporter(
        refuse=refuse,
        record=record,
        recording=recording,
        enforcing=enforcing,
        auditing=auditing,
        show_path=show_path,
        reports=not enforcing or denials_token is not None,
    )
