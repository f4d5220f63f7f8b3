"""The private temporary directory of one run (SPEC §3.1: ``TMPDIR`` points to it).

Created by the launcher with mode 0700 under the host's temporary directory, named
``pysb-<pid>-<random>``. Because python-sb usually ``exec``s the sandboxed interpreter, nobody is
left to remove the directory afterwards, so two mechanisms share the job:

- the child removes it at interpreter exit (an ``atexit`` handler of the bootstrap; the
  supervisor does it instead when python-sb stays as a parent);
- what is left behind by a run that could not clean up (killed by a signal, ``os._exit``) is
  swept at the start of a later run: a ``pysb-<pid>-*`` directory owned by the same user whose
  process no longer exists is removed. After ``exec`` the child keeps python-sb's pid, so the pid
  in the name is the pid of the process that uses the directory.

``tempfile`` is not imported: it would cost more start-up time than this whole module.
"""

from __future__ import annotations

import os
import stat
import sys

PREFIX = "pysb-"


def base_directory(environ: dict[str, str] | os._Environ[str]) -> str:
    """Where private directories are created: the host's ``TMPDIR`` when usable, else /tmp."""

    for candidate in (environ.get("TMPDIR"), environ.get("TEMP"), "/tmp", "/var/tmp"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return os.path.abspath(candidate)
    return os.getcwd()


def create(base: str) -> str:
    """A new directory ``base/pysb-<pid>-<hex>`` with mode 0700 (whatever the umask)."""

    pid = os.getpid()
    for _ in range(100):
        path = os.path.join(base, f"{PREFIX}{pid}-{os.urandom(5).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)
        return path
    raise FileExistsError(f"could not create a private temporary directory in {base}")


def owned_prefix(kind: str) -> str:
    """The name prefix of another private directory of this process (``kind``: what it holds,
    as ``eval``: guarded evaluation's workers), ``pysb-<pid>-<kind>-``: the sweep of a later
    run removes it once this process is gone, as it removes a run's."""

    return f"{PREFIX}{os.getpid()}-{kind}-"


def _pid_of(name: str) -> int | None:
    if not name.startswith(PREFIX):
        return None
    digits = name[len(PREFIX) :].partition("-")[0]
    return int(digits) if digits.isdigit() else None


def _alive(pid: int) -> bool:
    if sys.platform == "win32":  # os.kill(pid, 0) would end the process there
        return _alive_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive_windows(pid: int) -> bool:
    """Whether process ``pid`` runs (Windows: its exit code is still ``STILL_ACTIVE``)."""

    if sys.platform != "win32":
        raise OSError("Windows only")
    import _winapi

    try:
        handle = _winapi.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    except OSError as exc:  # no such process, or one of another user (then alive)
        return getattr(exc, "winerror", 0) != 87  # ERROR_INVALID_PARAMETER: no such pid
    try:
        return bool(_winapi.GetExitCodeProcess(handle) == 259)  # STILL_ACTIVE
    finally:
        _winapi.CloseHandle(handle)


def sweep(base: str) -> list[str]:
    """Remove the private directories of finished runs of this user; the paths removed."""

    removed: list[str] = []
    # Windows has no uid: the user's own %TEMP% holds only the user's directories.
    uid = os.getuid() if hasattr(os, "getuid") else None
    me = os.getpid()
    try:  # names only, filtered before any other work: /tmp may hold thousands of entries
        names = [name for name in os.listdir(base) if name.startswith(PREFIX)]
    except OSError:
        return removed
    for name in names:
        pid = _pid_of(name)
        if pid is None or pid == me:
            continue
        path = os.path.join(base, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        mine = uid is None or info.st_uid == uid
        if not stat.S_ISDIR(info.st_mode) or not mine or _alive(pid):
            continue
        remove_tree_safely(path)
        removed.append(path)
    return removed


_DIR_FLAGS: int = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def remove_tree_safely(path: str) -> None:
    """Remove ``path`` and everything below it, for python-sb's own process (the stale sweep,
    the supervisor, a launch that fails); errors are ignored.

    It runs with the user's full rights on a directory a sandboxed program could write, so the
    walk goes by directory descriptors opened with ``O_NOFOLLOW``: swapping a subdirectory for
    a symlink while it runs cannot send it outside. (The child's own clean-up at exit is
    ``child.remove_tree``.)
    """

    if os.open not in os.supports_dir_fd or os.scandir not in os.supports_fd:
        # Windows: no directory descriptors. shutil's walk checks each entry with lstat and
        # does not follow symlinks or junctions (a swap between the check and the removal
        # is the race the descriptor walk closes elsewhere).
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        return
    parent, name = os.path.split(os.path.abspath(path))
    try:
        parent_fd = os.open(parent, _DIR_FLAGS)
    except OSError:
        return
    try:
        _remove_entry(parent_fd, name)
    finally:
        os.close(parent_fd)


def _remove_entry(parent_fd: int, name: str) -> None:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError:  # not a directory (or a symlink to one): unlink the name itself
        try:  # noqa: SIM105
            os.unlink(name, dir_fd=parent_fd)
        except OSError:
            pass
        return
    try:
        with os.scandir(fd) as entries:
            names = [entry.name for entry in entries]
        for child in names:
            _remove_entry(fd, child)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:  # noqa: SIM105
        os.rmdir(name, dir_fd=parent_fd)
    except OSError:
        pass
