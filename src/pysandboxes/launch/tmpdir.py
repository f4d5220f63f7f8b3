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

PREFIX = "pysb-"


def base_directory(environ: dict[str, str] | os._Environ[str]) -> str:
    """Where private directories are created: the host's ``TMPDIR`` when usable, else /tmp."""

    for candidate in (environ.get("TMPDIR"), "/tmp", "/var/tmp"):
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


def _pid_of(name: str) -> int | None:
    if not name.startswith(PREFIX):
        return None
    digits = name[len(PREFIX) :].partition("-")[0]
    return int(digits) if digits.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(base: str) -> list[str]:
    """Remove the private directories of finished runs of this user; the paths removed."""

    removed: list[str] = []
    uid = os.getuid()
    me = os.getpid()
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        pid = _pid_of(entry.name)
        if pid is None or pid == me:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not entry.is_dir(follow_symlinks=False) or info.st_uid != uid:
                continue
        except OSError:
            continue
        if _alive(pid):
            continue
        from pysandboxes.launch.child import remove_tree_safely

        remove_tree_safely(entry.path)
        removed.append(entry.path)
    return removed
