"""The judgments of the file guard (``guard/files.py``): one path text, one path argument of
any type the guard reads, one change of a directory entry.

:func:`make_judge_text` resolves a path and answers with the table's precedence
(``files.make_access``); :func:`make_judge` first reads the argument (``str``, ``bytes``,
``os.DirEntry``, ``pathlib``, a buffer when no other thread runs) and its ``dir_fd``;
:func:`make_judge_entry` judges an entry and the directory that holds it (remove, rename...).

Every function here is a factory called when the guard is armed: what its closures use is
passed in or captured then (no module global is read after arming).
"""

from __future__ import annotations

from pysandboxes.guard.denials import PERMISSION
from pysandboxes.guard.paths import FD

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from pysandboxes.guard.denials import Reporter
    from pysandboxes.guard.paths import PathTools

    Info = tuple[str | None, str | None]  # (rule text, origin) of the deciding row
    Access = Callable[[str], tuple[int, Info | None]]
    JudgeText = Callable[..., str | None]  # (given, base, write, missing=NO_CHECK)


def make_buffer_text(
    kit_type: Callable[[object], type], single_thread: bool, encoding: str
) -> Callable[[Any], str | None]:
    """``buffer_text(obj)``: the path of a ``bytearray`` or ``memoryview`` argument, when it
    can be judged (see the closure). ``single_thread``: no thread nor child process is
    granted (``hook.py``); ``encoding``: the file system's (``sys.getfilesystemencoding``)."""

    type_ = kit_type
    bytearray_ = bytearray
    memoryview_ = memoryview
    bytes_ = bytes
    type_error_, value_error_ = TypeError, ValueError
    decode = bytes.decode
    from _thread import _count as count_threads  # Python threads other than the main one

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

    return buffer_text


def make_base_of(
    kit_type: Callable[[object], type], fd_path: Callable[[int], str | None]
) -> Callable[[Any], str | None]:
    """``base_of(dir_fd)``: the directory a ``dir_fd`` argument is open on, else ``None``."""

    type_ = kit_type
    int_ = int

    def base_of(dir_fd: Any) -> str | None:
        if type_(dir_fd) is int_ and dir_fd >= 0:
            return fd_path(dir_fd)
        return None

    return base_of


def make_judge_text(
    *,
    reporter: Reporter,
    resolve: Callable[[str, str | None], str],
    access: Access,
    codes: tuple[int, int, int, int],
    no_check: int,
    has_ignore: bool,
    is_protected: Callable[[str], bool],
    lexical_of: Callable[[str, str | None], str | None],
    refuse_path: Callable[..., None],
) -> JudgeText:
    """``judge_text(given, base, write, missing=NO_CHECK)``. ``codes``: ``files.py``'s
    ``(NONE, RO, RW, IGNORED)``."""

    _none_code, ro_code, rw_code, ignored_code = codes
    recording = reporter.recording
    record = reporter.record

    def judge_text(
        given: str, base: str | None, write: bool, missing: int = no_check
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

    return judge_text


def make_judge(
    *,
    reporter: Reporter,
    tools: PathTools,
    kit_type: Callable[[object], type],
    windows: bool,
    no_check: int,
    base_of: Callable[[Any], str | None],
    buffer_text: Callable[[Any], str | None],
    unsupported: Callable[[Any], None],
    judge_text: JudgeText,
) -> Callable[..., str | None]:
    """``judge(obj, write, dir_fd, missing=NO_CHECK)``: judge a path argument of any type,
    relative to ``dir_fd`` when it is a descriptor (``windows``: the table's paths are Windows
    paths, ``PathTable.windows``); ``None`` when there is no path to judge
    (a descriptor) or the argument was refused."""

    refuse = reporter.refuse
    permission = PERMISSION
    text_of = tools.text_of
    fd_known = tools.fd_known
    sep = "\\" if windows else "/"
    fd_mark = FD
    type_ = kit_type
    int_ = int

    def judge(obj: Any, write: bool, dir_fd: Any, missing: int = no_check) -> str | None:
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

    return judge


def make_judge_entry(
    *,
    reporter: Reporter,
    tools: PathTools,
    kit_type: Callable[[object], type],
    windows: bool,
    access: Access,
    codes: tuple[int, int, int, int],
    kinds: tuple[int, int, int, int],
    own_roots: frozenset[str],
    is_protected: Callable[[str], bool],
    base_of: Callable[[Any], str | None],
    judge: Callable[..., str | None],
    refuse_path: Callable[..., None],
    would_be_missing: Callable[[str, int], bool],
) -> Callable[..., str | None]:
    """``judge_entry(obj, dir_fd, missing=ENTRY)`` (see the closure). ``codes``: ``files.py``'s
    ``(NONE, RO, RW, IGNORED)``; ``kinds``: its ``(NO_CHECK, TARGET, ENTRY, CREATE)``."""

    _none_code, _ro_code, rw_code, _ignored_code = codes
    no_check, _target_needed, entry_needed, _parent_needed = kinds
    recording = reporter.recording
    record = reporter.record
    text_of = tools.text_of
    resolve = tools.resolve
    sep = "\\" if windows else "/"
    fd_mark = FD
    type_ = kit_type
    int_ = int

    def judge_entry(obj: Any, dir_fd: Any, missing: int = entry_needed) -> str | None:
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
        stripped = text.rstrip("/\\") if windows else text.rstrip("/")
        cut = stripped.rfind("/")
        if windows:
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

    return judge_entry
