"""Windows path forms: what a rule path or an accessed path means there, decided lexically.

The rule language and the guard judge POSIX paths (``/``-separated, case-sensitive) on Linux
and macOS. On Windows (``platform_caps.CAPS.path_flavour == "windows"``) a path has a drive
(``C:``) or a UNC share (``\\\\server\\share``), ``\\`` and ``/`` both separate components,
and the file system ignores case. Everything here is pure string work, so that every rule runs
on Linux in the unit tests (``tests/unit/policy/test_pathforms.py``); the platform's own
resolution of links, junctions and 8.3 short names (``nt._getfinalpathname``) is applied by
the callers, to the part of a path that exists.

The forms that would let one text name a file other than the one the rules see are refused,
with the reason (``ValueError`` from :func:`absolute`, a reason from :func:`problem`):

- ``\\\\?\\``, ``\\\\.\\`` and ``\\??\\`` prefixes: the verbatim and device namespaces skip
  Windows' own normalisation (``..`` and trailing dots would then mean something else) or name
  devices (``\\\\.\\PhysicalDrive0``);
- a ``:`` after the drive: an alternate data stream (``secret.txt::$DATA`` is the content of
  ``secret.txt``; ``notes.txt:hidden`` a second content the rules cannot see);
- a component ending in ``.`` or a space (other than ``.`` and ``..``): Windows drops them
  (``secret.txt.`` opens ``secret.txt``), so an ``ignore=`` or an exposure of one name would
  not hold for the other;
- a drive-relative path of another drive than the current directory's (``D:notes``): its
  directory is the per-drive current directory, which python-sb does not know;
- an incomplete UNC path (``\\\\server`` alone), and ``~user`` in a rule (the home directory of
  another user is not known without a user database).

Normalised: ``/`` becomes ``\\``, runs of separators become one, ``.`` is dropped and ``..``
removes the component before it (Windows does this lexically, before any link is followed:
``C:\\allowed\\..\\secret`` *is* ``C:\\secret``), never above the drive or share. Comparison
ignores case (:func:`key`, ``str.lower`` as ``ntpath.normcase``).
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NamedTuple
else:
    from pysandboxes.record import NamedTuple

POSIX = "posix"
WINDOWS = "windows"
SEP = "\\"


class WindowsForms(NamedTuple):
    """The functions of this module, as closures that look no global up when called (the
    guard calls them inside its audit hook, where the program could have rebound a module
    global or a builtin): see :func:`make_windows_forms`."""

    split_drive: Callable[[str], tuple[str, str]]
    problem: Callable[[str], str | None]
    normalise: Callable[[str], str]
    absolute: Callable[..., str]
    key: Callable[[str], str]
    within: Callable[[str, str], bool]
    join_existing: Callable[[str, Callable[[str], bool], Callable[[str], str]], str]


def make_windows_forms() -> WindowsForms:
    """Build the closures (at import, and at the guard's arm time: before program code)."""

    sep = SEP
    prefixes = ("\\\\?\\", "\\\\.\\", "\\??\\")
    value_error = ValueError
    len_, range_, repr_ = len, range, repr
    str_lower = str.lower

    def split_drive(path: str) -> tuple[str, str]:
        """``(drive, rest)`` of a path whose separators are ``\\``: ``C:`` or
        ``\\\\server\\share`` (``""`` when there is none). ``ValueError`` for a UNC path
        without its share."""

        if len_(path) >= 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha():
            return path[:2], path[2:]
        if path.startswith("\\\\"):
            server, found, rest = path[2:].partition(sep)
            share, found2, tail = rest.partition(sep)
            if not server or not found or not share:
                raise value_error(repr_(path) + ": a UNC path needs \\\\server\\share")
            return "\\\\" + server + sep + share, found2 + tail
        return "", path

    def problem(path: str) -> str | None:
        """Why ``path`` (separators ``\\`` or ``/``) is refused on Windows, or ``None``."""

        text = path.replace("/", sep)
        if "\0" in text:
            return "a path cannot contain a NUL character"
        if text.startswith(prefixes):
            return (
                "the \\\\?\\ and \\\\.\\ prefixes (verbatim paths, devices) are refused: "
                "write the plain path"
            )
        try:
            _drive, rest = split_drive(text)
        except value_error as exc:
            return exc.args[0]  # type: ignore[no-any-return]
        if ":" in rest:
            return "a ':' after the drive names an alternate data stream, which is refused"
        for part in rest.split(sep):
            if part in ("", ".", ".."):
                continue
            if part.endswith((".", " ")):
                return (
                    "the component " + repr_(part) + " ends in a dot or a space, which Windows "
                    "drops: it would name another file than the one written"
                )
        return None

    def normalise(path: str) -> str:
        """The lexical form of an absolute Windows path (drive or share first): ``\\``
        separators, no ``.``, ``..`` applied (never above the drive), no trailing separator
        but the root's; a drive letter in capitals."""

        drive, rest = split_drive(path.replace("/", sep))
        parts: list[str] = []
        for part in rest.split(sep):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        if drive.startswith("\\\\"):
            return drive + (sep + sep.join(parts) if parts else "")
        return drive.upper() + sep + sep.join(parts)

    def key(path: str) -> str:
        """The form two paths are compared in: case ignored, as the file system does."""

        return str_lower(path)

    def absolute(path: str, cwd: str, home: str | None = None) -> str:
        """``path`` as an absolute, normalised Windows path; ``cwd`` (absolute) for a
        relative one. ``home`` given (rules): ``~`` and ``~\\...`` are under it; else ``~``
        is a plain name. ``ValueError`` says why a form is refused (the module docstring)."""

        text = path.replace("/", sep)
        if home is not None and (text == "~" or text.startswith("~" + sep)):
            text = home.replace("/", sep).rstrip(sep) + text[1:]
        elif home is not None and text.startswith("~"):
            raise value_error(
                repr_(path) + ": ~user is not supported on Windows (write the full path)"
            )
        reason = problem(text)
        if reason is not None:
            raise value_error(repr_(path) + ": " + reason)
        drive, rest = split_drive(text)
        if drive and rest.startswith(sep):
            return normalise(text)
        if drive.startswith("\\\\"):  # \\server\share alone: its root
            return normalise(text)
        cwd_text = cwd.replace("/", sep)
        cwd_drive, _cwd_rest = split_drive(cwd_text)
        if not cwd_drive:
            raise value_error(
                repr_(cwd) + ": the current directory is not an absolute Windows path"
            )
        if drive:  # "C:notes": relative to that drive's own current directory
            if key(drive) != key(cwd_drive):
                raise value_error(
                    repr_(path)
                    + ": a path relative to the current directory of drive "
                    + drive
                    + " is refused (write the full path)"
                )
            return normalise(cwd_text + sep + rest)
        if rest.startswith(sep):  # "\\notes": the root of the current drive
            return normalise(cwd_drive + rest)
        return normalise(cwd_text + sep + rest)

    def within(path: str, prefix: str) -> bool:
        """Whether normalised ``path`` is ``prefix`` or below it, case ignored."""

        path, prefix = key(path), key(prefix)
        return path == prefix or path.startswith(prefix.rstrip(sep) + sep)

    def plain(path: str) -> str:
        """``\\\\?\\C:\\x`` -> ``C:\\x``; ``\\\\?\\UNC\\srv\\share`` ->
        ``\\\\srv\\share``."""

        if path.startswith("\\\\?\\UNC\\"):
            return "\\\\" + path[8:]
        if path.startswith("\\\\?\\"):
            return path[4:]
        return path

    def join_existing(path: str, exists: Callable[[str], bool], final: Callable[[str], str]) -> str:
        """``path`` (normalised) with its longest existing prefix replaced by the platform's
        final name for it (``final``: ``nt._getfinalpathname``, which resolves links,
        junctions and 8.3 short names); the missing tail is kept as written. A final name in
        the ``\\\\?\\`` form is taken back to the plain form."""

        drive, rest = split_drive(path)
        parts = [part for part in rest.split(sep) if part]
        for end in range_(len_(parts), -1, -1):
            head = drive + sep + sep.join(parts[:end])
            if exists(head):
                tail = parts[end:]
                return normalise(plain(final(head)) + (sep + sep.join(tail) if tail else ""))
        return path

    return WindowsForms(split_drive, problem, normalise, absolute, key, within, join_existing)


#: The closures for callers outside the guard (the rule loader, the decisions).
FORMS = make_windows_forms()
