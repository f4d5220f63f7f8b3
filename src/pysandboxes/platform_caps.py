"""What this platform offers python-sb, decided once, by capability (issue 19).

The launcher and the providers ask this module (``CAPS.memfd``, ``CAPS.exec``...) rather than
testing ``sys.platform`` here and there: a path is chosen because the feature it needs is
present, and every fallback path can be forced on Linux, so that it runs in CI here.

``PYSANDBOXES_PORTABLE`` is a switch **for tests only** (it never widens what a run may do; it
only makes python-sb take the paths of a platform with fewer features):

- unset, empty or ``0``: the platform's own capabilities;
- ``1`` or ``posix``: as on macOS -- no memfd (the hand-over goes through an inherited pipe),
  no ``/proc`` reads, no ``sigwaitinfo`` (the supervisor forwards with handlers), no pidfd,
  no kernel provider (Landlock, namespaces, seccomp are Linux's), ``ignore=`` globs matched
  without regard to case;
- ``spawn``: the above, and no ``exec`` that replaces the process either, as on Windows:
  python-sb starts the program with ``subprocess`` and waits for it.

On the start-up path of every run: ``os`` and ``sys`` only.
"""

from __future__ import annotations

import os
import sys

#: The test switch (see the module docstring).
PORTABLE_ENV = "PYSANDBOXES_PORTABLE"
_PROFILES = ("", "0", "1", "posix", "spawn")


class Capabilities:
    """The features python-sb may use here; each attribute is a plain ``bool``.

    - ``linux``: the Linux kernel's sandboxing features may be used at all (Landlock, user
      namespaces, seccomp): the kernel providers and learning's child observation need it.
    - ``memfd``: ``os.memfd_create`` (the policy hand-over in an anonymous file).
    - ``proc``: ``/proc/self`` may be read (python-sb's own process only).
    - ``exec``: ``os.execve`` replaces the process (POSIX); without it python-sb spawns the
      program and stays as its parent (Windows, where ``exec`` starts a new process).
    - ``fork``: ``os.fork`` (the supervisor's spawn with the provider's ``pre_exec`` steps).
    - ``sigwaitinfo``: synchronous signal waiting, which tells a terminal's signal from a kill.
    - ``pidfd``: ``os.pidfd_open`` (signals that cannot reach a recycled pid).
    - ``posix_signals``: ``kill``, process groups, death by a signal (not Windows).
    - ``posix_paths``: ``/``-separated, case-sensitive paths, ``os.getuid`` (not Windows).
    - ``case_insensitive_paths``: the file system usually ignores case (Windows, macOS; and
      under the forced profiles): ``ignore=`` globs then match without regard to case.
    - ``path_flavour``: how paths are written and compared, ``"posix"`` or ``"windows"``
      (drive letters, ``\\`` separators, case ignored: ``policy/pathforms.py``). Never forced:
      a Windows path means nothing to Linux's file system, so the Windows forms are tested as
      functions (``tests/unit/policy/test_pathforms.py``).
    - ``fd_path``: how the path a descriptor is open on is found: ``"proc"`` (Linux's
      ``/proc/self/fd`` links; the forced profiles too, standing in for macOS's query),
      ``"fcntl"`` (``fcntl.F_GETPATH``, macOS) or ``""``: not known here, and the guard refuses
      what it would need it for (a path relative to a ``dir_fd``).
    - ``profile``: the forced profile (``"posix"``, ``"spawn"``) or ``""`` when none.
    """

    __slots__ = (
        "case_insensitive_paths",
        "exec",
        "fd_path",
        "fork",
        "linux",
        "memfd",
        "path_flavour",
        "pidfd",
        "posix_paths",
        "posix_signals",
        "proc",
        "profile",
        "sigwaitinfo",
    )

    def __init__(self, profile: str = "") -> None:
        posix = os.name == "posix"
        linux = sys.platform.startswith("linux")
        forced = profile in ("posix", "spawn")
        self.profile = profile if forced else ""
        self.linux = linux and not forced
        self.memfd = hasattr(os, "memfd_create") and not forced
        self.proc = linux and not forced
        self.exec = posix and profile != "spawn"
        self.fork = hasattr(os, "fork") and profile != "spawn"
        self.sigwaitinfo = _has_signal("sigwaitinfo") and not forced
        self.pidfd = hasattr(os, "pidfd_open") and not forced
        self.posix_signals = posix
        self.posix_paths = posix
        self.case_insensitive_paths = not posix or sys.platform == "darwin" or forced
        self.path_flavour = "posix" if posix else "windows"
        self.fd_path = _fd_path_query(linux)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Capabilities({shown})"


def _fd_path_query(linux: bool) -> str:
    """``"proc"``, ``"fcntl"`` or ``""`` (see :class:`Capabilities`). ``fcntl`` is looked up
    only where ``/proc`` is missing: it is not on the start-up path elsewhere."""

    if linux:
        return "proc"
    if sys.platform == "win32":
        return ""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - every POSIX CPython has it
        return ""
    return "fcntl" if hasattr(fcntl, "F_GETPATH") else ""


def _has_signal(name: str) -> bool:
    try:
        import _signal  # type: ignore[import-not-found,unused-ignore]  # ``signal`` imports enum
    except ImportError:  # pragma: no cover - every CPython has it
        return False
    return hasattr(_signal, name)


def profile_from(environ: dict[str, str] | os._Environ[str]) -> str:
    """The profile ``PYSANDBOXES_PORTABLE`` asks for: ``""``, ``"posix"`` or ``"spawn"``.

    An unknown value is a ``ValueError`` (a test switch that silently did nothing would make a
    CI run prove nothing)."""

    value = environ.get(PORTABLE_ENV, "").strip().lower()
    if value not in _PROFILES:
        raise ValueError(
            f"{PORTABLE_ENV}={value!r}: expected 1, posix or spawn (a switch for tests only)"
        )
    return "posix" if value in ("1", "posix") else value if value == "spawn" else ""


def _current() -> Capabilities:
    """The capabilities for this process; an unknown switch value takes the most portable
    profile here (the launcher refuses it with a clear error: :func:`switch_problem`)."""

    try:
        return Capabilities(profile_from(os.environ))
    except ValueError:
        return Capabilities("spawn")


def switch_problem() -> str | None:
    """The error to report when ``PYSANDBOXES_PORTABLE`` holds an unknown value, or ``None``."""

    try:
        profile_from(os.environ)
    except ValueError as exc:
        return str(exc)
    return None


#: This process's capabilities (read once, when first imported).
CAPS = _current()


def adopt(profile: str) -> None:
    """Take the parent's forced profile in the sandboxed interpreter (whose environment holds
    only what ``env=`` grants, so not the switch): called by the bootstrap before arming."""

    global CAPS
    if profile in ("posix", "spawn"):
        CAPS = Capabilities(profile)


def not_here(feature: str) -> str:
    """The reason a Linux feature cannot be used here, for availability messages."""

    if CAPS.profile:
        return (
            f"{feature} is not available on this platform "
            f"(portable paths forced by {PORTABLE_ENV}, a test switch)"
        )
    return f"{feature} is not available on this platform ({sys.platform}): it is Linux's"
