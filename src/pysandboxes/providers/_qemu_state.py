"""The saved VM state of ``os-sandbox=qemu``: a guest already booted, restored at each run.

Under TCG the guest kernel's boot and its module loads are most of a run's start (seconds). A run
of the default configuration therefore starts the VM from a state saved after that point: the
initramfs's ``/init`` has loaded its modules, opened the ``pysb`` port and waits there for its
parameter line (``_qemu_kernel.INIT_SCRIPT``); nothing of any run is in the VM yet (the 9p tree
is not mounted, the interpreter and source paths come on the port, the clock and randomness in the
``C`` frame). The host relay saves it (``_qemu_host.save_state``) in the run that finds none;
every other run restores it with ``-incoming`` (``_qemu_host.start_vm``) and falls back to a cold
boot, with one line on the standard error, when the restore fails.

One state per configuration that can use it (:func:`eligible`): no network, the default memory and
CPU count, TCG. It is named after a key of everything that shapes the VM (:func:`state_key`: qemu's
binary and firmware, the kernel, the initramfs, the machine's command line without the run's
paths, python-sb's version), so that a state of another configuration is never restored, and
starts with a header holding that key, checked before use. It lives in the kernel cache
(``_qemu_kernel.cache_root``), owner-only: a state that another user could write, or that does not
belong to this user, is not used. It is renewed after :data:`RENEW_AFTER` seconds: every run
restored from one state shares the guest kernel's per-boot secrets (its KASLR offset, stack
canary, hash keys), as docs/providers/qemu.md says; ``qemu.saved-state=false`` turns it off.
"""

from __future__ import annotations

import os
import stat
import sys
import time

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: Version of the state's header and of what the guest expects after a restore.
STATE_FORMAT = "pysb-qemu-state-1"
#: Seconds after which a state is saved anew (the guest kernel's per-boot secrets change then).
RENEW_AFTER = 24 * 3600
#: Firmware qemu loads into a microvm (part of the state: its memory is in it).
FIRMWARE = (
    "/usr/share/qemu/bios-microvm.bin",
    "/usr/share/qemu/qboot.rom",
    "/usr/share/qemu/pvh.bin",
)
SUFFIX = ".vmstate"


def eligible(*, network: bool, accel: str, memory: str, cpus: str, setting: bool) -> bool:
    """Whether a run of this configuration uses the saved state (others boot cold)."""

    from pysandboxes.providers.qemu import DEFAULT_CPUS, DEFAULT_MEMORY

    return (
        setting
        and not network
        and accel == "tcg"
        and memory == DEFAULT_MEMORY
        and cpus == DEFAULT_CPUS
    )


def _identity(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path}\0missing"
    return f"{os.path.realpath(path)}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}"


def state_key(argv: Sequence[str], workdir: str, files: Sequence[str]) -> str:
    """The key of the VM that ``argv`` starts: qemu's command with the run's own directory
    (``workdir``: the export, the console) replaced by a placeholder, the identity (path, size,
    modification time, inode) of each of ``files`` (qemu's binary, the kernel, the initramfs) and
    of qemu's firmware, python-sb's version, the source of its guest init and of this module,
    and :data:`STATE_FORMAT`. A package upgrade of qemu or of the kernel, a rebuilt initramfs,
    another python-sb: another key."""

    import hashlib

    # The version of the package already loaded (importing the package's root from here would
    # go up the layers), and the code that decides what the state holds: the guest's /init
    # (in _qemu_kernel) and this module, by content.
    version = str(getattr(sys.modules.get("pysandboxes"), "__version__", ""))
    digest = hashlib.sha256()
    for part in (STATE_FORMAT, version, *(a.replace(workdir, "{workdir}") for a in argv)):
        digest.update(part.encode() + b"\0")
    for path in (*files, *FIRMWARE):
        digest.update(_identity(path).encode() + b"\0")
    from pysandboxes.providers import _qemu_kernel

    for module in (_qemu_kernel.__file__, __file__):
        with open(module, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:32]


def header(key: str) -> bytes:
    """The first bytes of a state file: the format and the key (qemu's stream follows)."""

    return f"{STATE_FORMAT} {key}\n".encode()


def state_dir() -> str:
    from pysandboxes.providers._qemu_kernel import cache_root

    return os.path.join(cache_root(), "states")


class Choice:
    """What a run does with the saved state: restore from ``fd`` (positioned after the header;
    -1: no restore), or save one into ``save`` ('': no save); ``path`` names the state,
    ``header`` is what a state of this configuration starts with (:func:`header`)."""

    __slots__ = ("fd", "header", "path", "save")

    def __init__(self, fd: int = -1, path: str = "", save: str = "", key: str = "") -> None:
        self.fd = fd
        self.path = path
        self.save = save
        self.header = header(key) if key else b""

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def choose(
    key: str,
    folder: str | None = None,
    progress: Callable[[str], None] | None = None,
    warn: Callable[[str], None] | None = None,
    now: float | None = None,
) -> Choice:
    """Restore the state of ``key`` when a usable one exists; else save one in this run (told
    to ``progress``; an unusable file is told to ``warn``, one line, and replaced)."""

    folder = folder or state_dir()
    path = os.path.join(folder, key + SUFFIX)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
    except OSError as exc:
        if warn is not None:
            warn(f"no saved VM state ({folder}: {exc.strerror}); booting cold")
        return Choice()
    problem = ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        if progress is not None:
            progress(f"saving the booted VM's state into {path} (once a day)")
        _sweep(folder, keep=path, now=now)
        return Choice(path=path, save=path, key=key)
    except OSError as exc:
        problem = exc.strerror or str(exc)
    else:
        problem = _check(fd, key, now)
        if not problem:
            os.set_inheritable(fd, True)
            return Choice(fd=fd, path=path, key=key)
        os.close(fd)
    if problem == "renew":
        if progress is not None:
            progress(f"renewing the saved VM state {path} (older than a day)")
    elif warn is not None:
        warn(f"the saved VM state {path} is unusable ({problem}); booting cold and saving it anew")
    _sweep(folder, keep=path, now=now)
    return Choice(path=path, save=path, key=key)


def _check(fd: int, key: str, now: float | None) -> str:
    """'' when the open state ``fd`` may be restored (and then positioned after its header);
    ``renew`` when it is too old; else what is wrong with it."""

    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_uid != os.geteuid():
        return f"owned by uid {info.st_uid}, not this user"
    if info.st_mode & 0o077:
        return f"mode {stat.S_IMODE(info.st_mode):o}: others may read or write it"
    if (time.time() if now is None else now) - info.st_mtime > RENEW_AFTER:
        return "renew"
    expected = header(key)
    try:
        found = os.read(fd, len(expected))
    except OSError as exc:
        return exc.strerror or str(exc)
    if found != expected:
        return "its header is not this configuration's"
    return ""


def _sweep(folder: str, keep: str, now: float | None) -> None:
    """Remove states older than :data:`RENEW_AFTER` (another configuration's, left by an upgrade)
    and save attempts left over by a killed run, besides ``keep``."""

    moment = time.time() if now is None else now
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        age = (
            RENEW_AFTER
            if entry.name.endswith(SUFFIX)
            else 3600
            if entry.name.endswith(".tmp")
            else 0
        )
        if entry.path == keep or not age:
            continue
        try:
            if moment - entry.stat(follow_symlinks=False).st_mtime > age:
                os.unlink(entry.path)
        except OSError:
            continue
