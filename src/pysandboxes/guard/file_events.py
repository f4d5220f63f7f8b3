"""The handlers of the file events (``guard/files.py``): ``open`` and its cache, the state a
retried ``open`` is judged again with, listings, the writes (``mkdir``, ``remove``,
``truncate``, metadata...), ``rename``, ``link``, ``symlink`` and ``chdir``.

``open`` is the hot path: a path already judged since the last change of the file tree is
answered from ``cache`` (when caching is on, see ``files.py``'s docstring); reads below the
interpreter's own read-only directories (``PathTable.trusted``) are answered from the written
path. Every handler that changes the tree or the current directory empties the cache first.

Every function here is a factory called when the guard is armed: what its closures use is
passed in or captured then (no module global is read after arming).
"""

from __future__ import annotations

import os

from pysandboxes.guard.denials import PERMISSION
from pysandboxes.guard.paths import FD, names_plainly

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.guard.denials import Reporter
    from pysandboxes.guard.paths import PathTools

    Info = tuple[str | None, str | None]  # (rule text, origin) of the deciding row
    Access = Callable[[str], tuple[int, Info | None]]
    Handler = Callable[[tuple[Any, ...]], None]
    JudgeText = Callable[..., str | None]  # (given, base, write, missing=NO_CHECK)
    Judge = Callable[..., str | None]  # (obj, write, dir_fd, missing=NO_CHECK)


def make_on_open(
    *,
    kit_type: Callable[[object], type],
    tools: PathTools,
    access: Access,
    codes: tuple[int, int, int, int],
    kinds: tuple[int, int, int, int],
    trusted: tuple[str, ...],
    has_ignore: bool,
    denials_token: str | None,
    write_flags: int,
    caching: bool,
    free_reads: bool,
    cache: dict[str, int],
    window: list[Any],
    is_protected: Callable[[str], bool],
    buffer_text: Callable[[Any], str | None],
    unsupported: Callable[[Any], None],
    judge_text: JudgeText,
) -> Handler:
    """The ``open`` handler. ``cache``: the path texts judged since the tree last changed ->
    their access code (when ``caching``); ``window``: ``[path text, write]`` of the last
    ``open`` judged (see :func:`make_window`). ``denials_token``: the denials file's own
    ``str`` object, which the guard's reporter may open (identity, not equality);
    ``write_flags``: the ``open`` flags that make it a write; ``free_reads``: no read can be
    refused (``files.reads_are_free``), so a read of an absolute path is not resolved."""

    _none_code, ro_code, rw_code, ignored_code = codes
    _no_check, target_needed, _entry_needed, parent_needed = kinds
    text_of = tools.text_of
    fd_mark = FD
    o_creat = os.O_CREAT
    type_ = kit_type
    str_ = str
    int_ = int
    len_ = len
    plain_names = names_plainly

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
        if free_reads and not write and text.startswith("/"):
            return  # allowed wherever it leads (files.reads_are_free); the window is set
        if caching:
            code = cache.get(text)
            if code is not None and (code == rw_code or (code == ro_code and not write)):
                return
        if (
            not write
            and text.startswith(trusted)
            and plain_names(text)
            and (not has_ignore or access(text)[0] != ignored_code)
        ):
            # No component is "." or "..": the text names a path below the trusted prefix
            # (a name that merely starts with a dot, ~/.pyenv or .venv, is a name like any).
            return
        resolved = judge_text(text, None, write, missing)
        if caching and resolved is not None:
            code, _row = access(resolved)
            if is_protected(resolved) and code == rw_code:
                code = ro_code
            if len_(cache) >= 4096:
                cache.clear()
            cache[text] = code

    return on_open


def make_window(
    caching: bool,
    cache: dict[str, int],
    window: list[Any],
    depth: list[int],
    judge_text: JudgeText,
) -> tuple[Callable[[], Any], Callable[[Any], None], Callable[[], None]]:
    """``(window_state, recheck, invalidate)`` over the ``open`` handler's ``window`` and
    ``cache``. ``depth``: ``[number of Python signal handlers running]`` (guard/signals.py)."""

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

    def invalidate() -> None:
        if caching:
            cache.clear()
        if not depth[0]:
            # The program changed the tree (or its directory) outside any signal handler: the
            # last open() is over, and a later handler must not judge it again against the new
            # tree (a relative path after chdir would be refused for nothing).
            window[0] = None

    return window_state, recheck, invalidate


def make_reads(
    listing: list[bool],
    target_needed: int,
    judge: Judge,
    free_text_of: Callable[[Any], Any] | None = None,
) -> tuple[Handler, Handler]:
    """``(on_read_dir, on_xattr_read)``: a directory listing (``listing`` is ``[True]`` while
    it is judged, for the refusal's reporting) and the reading of extended attributes.
    ``free_text_of``: ``PathTools.text_of`` when no read can be refused
    (``files.reads_are_free``): an argument whose text is an absolute path is then allowed
    without resolving it; any other (a relative path, a type the guard cannot read) is judged
    as always, so its refusals are the same."""

    str_ = str
    type_ = type  # of a value text_of returned: str, int (FD) or None, never the program's

    def free(obj: Any) -> bool:
        if free_text_of is None:
            return False
        text = free_text_of(obj)
        return type_(text) is str_ and text.startswith("/")  # type: ignore[no-any-return]

    def on_read_dir(args: tuple[Any, ...]) -> None:
        obj = args[0] if args else None
        if obj is None:
            obj = "."
        if free(obj):
            return
        listing[0] = True
        try:
            judge(obj, False, -1, target_needed)
        finally:
            listing[0] = False

    def on_xattr_read(args: tuple[Any, ...]) -> None:
        obj = args[0] if args else None
        if obj is not None and free(obj):
            return
        judge("." if obj is None else obj, False, -1)  # attributes are content too

    return on_read_dir, on_xattr_read


def make_writers(
    *,
    kit_type: Callable[[object], type],
    tools: PathTools,
    target_needed: int,
    invalidate: Callable[[], None],
    judge: Judge,
    judge_entry: Callable[..., str | None],
    judge_text: JudgeText,
) -> tuple[
    Callable[[int, int], Handler],
    Callable[[int, int, bool, int], Handler],
    Callable[[int], Handler],
]:
    """``(entry_writer, writer, metadata_writer)``: makers of the handlers of the events that
    write, by where their path and ``dir_fd`` arguments are (``-1``: none)."""

    text_of = tools.text_of
    fd_path = tools.fd_path
    fd_mark = FD
    type_ = kit_type
    int_ = int
    len_ = len

    def entry_writer(path_index: int, fd_index: int) -> Handler:
        def handler(args: tuple[Any, ...]) -> None:
            invalidate()
            dir_fd = args[fd_index] if fd_index >= 0 and len_(args) > fd_index else -1
            judge_entry(args[path_index], dir_fd)

        return handler

    def writer(path_index: int, fd_index: int, changes_tree: bool, missing: int) -> Handler:
        def handler(args: tuple[Any, ...]) -> None:
            if changes_tree:
                invalidate()
            dir_fd = args[fd_index] if fd_index >= 0 and len_(args) > fd_index else -1
            judge(args[path_index], True, dir_fd, missing)

        return handler

    def metadata_writer(fd_index: int) -> Handler:
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

    return entry_writer, writer, metadata_writer


def make_on_rename(
    reporter: Reporter,
    protected: frozenset[str],
    windows: bool,
    kinds: tuple[int, int, int, int],
    invalidate: Callable[[], None],
    judge_entry: Callable[..., str | None],
) -> Handler:
    """The ``os.rename`` handler: both names are entries (``judge_entry``), and neither may be
    a directory that holds a path nobody may change (``protected``, lowered on Windows)."""

    _no_check, _target_needed, entry_needed, parent_needed = kinds
    refuse = reporter.refuse
    show = reporter.show_path
    permission = PERMISSION
    sep = "\\" if windows else "/"
    lower = str.lower
    any_ = any
    protected_below = tuple(p + sep for p in protected)

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

    return on_rename


def make_links(
    *,
    reporter: Reporter,
    tools: PathTools,
    access: Access,
    codes: tuple[int, int, int, int],
    kinds: tuple[int, int, int, int],
    invalidate: Callable[[], None],
    judge: Judge,
    unsupported: Callable[[Any], None],
    free_reads: bool,
) -> tuple[Handler, Handler, Handler]:
    """``(on_link, on_symlink, on_chdir)``: a hard link is a second way to write its file; a
    symbolic link may not point outside the exposures; both change the tree, and ``chdir``
    changes what relative paths mean (the cache is emptied). ``free_reads``: every path is
    readable (``files.reads_are_free``), so every target is exposed: the link's own name is
    judged, its target is not resolved."""

    none_code, ro_code, rw_code, _ignored_code = codes
    _no_check, target_needed, _entry_needed, parent_needed = kinds
    refuse = reporter.refuse
    show = reporter.show_path
    permission = PERMISSION
    text_of = tools.text_of
    resolve = tools.resolve
    fd_mark = FD

    def on_link(args: tuple[Any, ...]) -> None:
        invalidate()
        # a hard link to a file is a second way to write it
        judge(args[0], True, args[2], target_needed)
        judge(args[1], True, args[3], parent_needed)

    def on_symlink(args: tuple[Any, ...]) -> None:
        invalidate()
        link = judge(args[1], True, args[2], parent_needed)
        target = text_of(args[0])
        if free_reads and link is not None and target is not None and target is not fd_mark:
            return  # wherever it points, the target is readable: exposed
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

    return on_link, on_symlink, on_chdir
