"""The setup step of ``os-sandbox=unshare``: namespaces and mounts made directly, then exec.

Run as ``python -I -S _ns_init.py SPEC_FD`` (``providers/unshare.py`` builds the command); the
spec descriptor holds NUL-separated tokens (see ``unshare.encode_spec``). It imports only
built-in C modules (no ``json``, ``signal``, ``socket`` or ``typing``, each several ms), so the
step costs about one bare interpreter start-up.

Three processes, each waiting on the next, so that exit statuses and signals pass through:

- **outer** (this process, in the new user namespace, outside the new PID namespace): creates
  the namespaces, forks *init*, forwards the usual signals to it, and ends exactly as the program
  ended (same exit code, or killed by the same signal) from the status *init* sends on a pipe;
- **init** (PID 1 of the new PID namespace, dies with *outer*): builds the mount tree, pivots
  into it, forks the program, forwards signals to it, reaps orphans, reports the status;
- **program** (PID 2): new session, no capabilities (bounding set emptied), ``no_new_privs``,
  the seccomp filter, then ``execve`` of the interpreter with exactly the given environment.

Ordering uses pipes and ``waitpid`` only; nothing sleeps.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: ``signal`` would import ``enum`` (slow at start-up)
import os
import sys

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

# -- constants (linux/sched.h, linux/mount.h, sys/mount.h) ----------------------------------------
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWCGROUP = 0x02000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 1
MOUNT_ATTR_NOSUID = 2
MOUNT_ATTR_NODEV = 4
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 1
FORWARDED = ("SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGWINCH", "SIGCONT")
#: Device nodes bound from the host into the private /dev: ``_ns_mounts.DEV_NODES`` (from the
#: default grants of ``policy/defaults.py``), repeated because this step imports no package (a
#: unit test keeps the two equal).
DEV_NODES = ("null", "zero", "full", "urandom", "random", "tty")
#: /proc entries that would let a process act on the host: bound read-only over themselves.
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs")


#: The system calls this step makes, per architecture (x86_64 table; aarch64 uses the generic
#: one; numbers from 424 on are shared). The same numbers as ``providers/_linux.py``, repeated
#: here because importing that module would import ``typing`` (about 18 ms at start-up).
SYSCALL_NUMBERS = {
    "x86_64": {
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
        "sethostname": 170, "prctl": 157, "seccomp": 317, "mount_setattr": 442, "reboot": 169,
    },
    "aarch64": {
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
        "sethostname": 161, "prctl": 167, "seccomp": 277, "mount_setattr": 442, "reboot": 142,
    },
}  # fmt: skip

_call: object = None
_Long: object = None


def _bind() -> None:
    """libc's ``syscall(2)`` through ``_ctypes`` (the cheap binding ``_linux.py`` explains)."""

    global _call, _Long
    import _ctypes

    class Long(_ctypes._SimpleCData):  # type: ignore[type-arg]
        _type_ = "l"

    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = Long

    class Libc:
        _handle = _ctypes.dlopen(None, os.RTLD_NOW)  # type: ignore[arg-type]

    _call = Function(("syscall", Libc))  # type: ignore[arg-type]
    _Long = Long


def sc(name: str, *args: int | bytes | None) -> int:
    """System call ``name``; ``OSError`` with the kernel's errno on failure."""

    import _ctypes

    if _call is None:
        _bind()
    number = SYSCALL_NUMBERS[os.uname().machine][name]
    converted = [a if a is None or isinstance(a, bytes) else _Long(a) for a in args]  # type: ignore[operator]
    result: int = _call(_Long(number), *converted)  # type: ignore[operator]
    if result == -1:
        err = _ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def pinned(data: bytes) -> tuple[object, int]:
    """A C copy of ``data`` and its address (for ``struct sock_fprog``)."""

    import _ctypes

    class Char(_ctypes._SimpleCData):  # type: ignore[type-arg]
        _type_ = "c"

    array_type = type("Buffer", (_ctypes.Array,), {"_type_": Char, "_length_": len(data)})
    buffer = array_type.from_buffer_copy(data)  # type: ignore[attr-defined]
    return buffer, int(_ctypes.addressof(buffer))


def b(text: str) -> bytes:
    return os.fsencode(text)


#: The provider its messages name: the qemu relay, which mounts its tree with the functions of
#: this module (``apply_mounts`` and the helpers below), sets ``qemu``.
WHO = "unshare"


def die(message: str, code: int = 125) -> None:
    os.write(2, b(f"python-sb (os-sandbox={WHO}): " + message + "\n"))
    os._exit(code)


# -- spec ------------------------------------------------------------------------------------------


class Spec:
    def __init__(self, data: bytes) -> None:
        tokens = [os.fsdecode(t) for t in data.split(b"\0")]
        it = iter(tokens)
        if next(it) != "pysb-ns-1":
            die("bad setup data")
        self.hostname = next(it)
        self.cwd = next(it)
        self.join_user = next(it)
        self.join_net = next(it)
        self.parent_pid = int(next(it) or 0)
        self.uid = int(next(it))
        self.gid = int(next(it))
        self.seccomp = bytes.fromhex(next(it))
        self.argv = [next(it) for _ in range(int(next(it)))]
        self.env: dict[str, str] = {}
        for _ in range(int(next(it))):
            key, _, value = next(it).partition("=")
            self.env[key] = value
        self.mounts: list[tuple[str, str, str, bytes, int]] = []
        for _ in range(int(next(it))):
            kind, dest, source, data_hex, mode = (next(it) for _ in range(5))
            self.mounts.append((kind, dest, source, bytes.fromhex(data_hex), int(mode, 8)))


def read_spec(fd: int) -> Spec:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return Spec(b"".join(chunks))


# -- namespaces ------------------------------------------------------------------------------------


def enter_namespaces(spec: Spec) -> None:
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWUSER
    if spec.join_net:
        # The network namespace (and, for an unprivileged user, its user namespace) already
        # exists with pasta and the ruleset in place; join it, then nest a new user namespace so
        # that nothing in the sandbox holds a capability over the ruleset.
        for path in (spec.join_user, spec.join_net):
            if path:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    sc("setns", fd, 0)
                finally:
                    os.close(fd)
    else:
        flags |= CLONE_NEWNET
    parent_uid, parent_gid = os.getuid(), os.getgid()
    try:
        sc("unshare", flags)
    except OSError as exc:
        die(f"cannot create namespaces: {exc.strerror}")
    try:  # noqa: SIM105 (contextlib costs start-up time here)
        sc("unshare", CLONE_NEWCGROUP)
    except OSError:
        pass  # optional, as bwrap --unshare-cgroup-try
    # The host's ids inside (as bubblewrap does), mapped to what this process is in the parent
    # namespace: itself on the host, or the holder's root after joining it.
    write_proc("/proc/self/setgroups", "deny")
    write_proc("/proc/self/uid_map", f"{spec.uid} {parent_uid} 1\n")
    write_proc("/proc/self/gid_map", f"{spec.gid} {parent_gid} 1\n")


def write_proc(path: str, text: str) -> None:
    """Write ``text`` to a /proc file (a namespace's id maps); a missing file is skipped."""

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        os.write(fd, text.encode())
    except OSError as exc:
        die(f"cannot write {path}: {exc.strerror}")
    finally:
        os.close(fd)


# -- mounts ----------------------------------------------------------------------------------------


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    try:
        sc(
            "mount",
            b(source) if source is not None else None,
            b(target),
            b(fstype) if fstype is not None else None,
            flags,
            b(data) if data else None,
        )
    except OSError as exc:
        die(f"mount {source} on {target}: {exc.strerror}")


def set_read_only(target: str, recursive: bool) -> None:
    set_attributes(target, MOUNT_ATTR_RDONLY, recursive, "read-only")


def set_attributes(target: str, attributes: int, recursive: bool, what: str) -> None:
    """``mount_setattr`` of ``attributes`` (``MOUNT_ATTR_*``) on the mount at ``target``."""

    # struct mount_attr { u64 attr_set, attr_clr, propagation, userns_fd; }
    attr = attributes.to_bytes(8, sys.byteorder) + bytes(24)
    try:
        sc("mount_setattr", AT_FDCWD, b(target), AT_RECURSIVE if recursive else 0, attr, 32)
    except OSError as exc:
        die(f"cannot make {target} {what}: {exc.strerror}")


def make_parent(path: str) -> None:
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755, exist_ok=True)


def mountpoint(path: str, directory: bool) -> None:
    if os.path.lexists(path):
        return
    make_parent(path)
    if directory:
        os.mkdir(path, 0o755)
    else:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))


def build_tree(spec: Spec, own_net: bool) -> None:
    """Mount the tree under /newroot, sources seen under /oldroot, then make it the root."""

    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    os.mkdir("/tmp/oldroot")
    os.mkdir("/tmp/newroot")
    try:
        sc("pivot_root", b"/tmp", b"/tmp/oldroot")
    except OSError as exc:
        die(f"pivot_root: {exc.strerror}")
    os.chdir("/")
    mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    apply_mounts(spec.mounts, "/newroot", "/oldroot", "", own_proc_dev=True)
    set_read_only("/newroot", recursive=False)
    if own_net:
        loopback_up()
    # Make /newroot the root: stack the old root on it and detach it (pivot_root(".", ".")).
    os.chdir("/newroot")
    try:
        sc("pivot_root", b".", b".")
        sc("umount2", b".", MNT_DETACH)
    except OSError as exc:
        die(f"cannot switch to the new root: {exc.strerror}")
    os.chdir("/")


def write_file(path: str, data: bytes, mode: int) -> None:
    """Create ``path`` (it must not exist) holding ``data``."""

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def apply_mounts(
    mounts: list[tuple[str, str, str, bytes, int]],
    root: str,
    host: str,
    scratch: str,
    *,
    own_proc_dev: bool,
) -> None:
    """Build the tree of a mount plan (``_ns_mounts``: kind, destination, source, data, mode)
    under ``root``, the host's files being seen under ``host`` (``/oldroot`` after this step's
    pivot, ``''`` for the qemu relay). A generated file that would cover a file of a bound host
    tree is written in ``scratch`` and bound over it read-only: never into the host's file.
    ``own_proc_dev``: mount /proc and /dev here (this step); false for qemu, whose guest mounts
    its own on the empty directories left."""

    count = 0
    for kind, dest, source, data, mode in mounts:
        target = root + dest
        if kind in ("ro-bind", "bind"):
            origin = host + source
            mountpoint(target, os.path.isdir(origin))
            mount(origin, target, None, MS_BIND | MS_REC)
            # As bubblewrap's binds: no device node of a bound tree opens (a read-only mount
            # does not stop writes to one), no set-user-ID bit counts.
            attributes = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID
            if kind == "ro-bind":
                attributes |= MOUNT_ATTR_RDONLY
            set_attributes(target, attributes, True, "read-only, nodev and nosuid")
        elif kind == "dir":
            os.makedirs(target, mode, exist_ok=True)
        elif kind == "tmpfs":
            mountpoint(target, True)
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode:o}")
        elif kind == "symlink":
            make_parent(target)
            os.symlink(source, target)
        elif kind == "file":
            if os.path.lexists(target):
                count += 1
                copy = f"{scratch}/generated-{count}"
                write_file(copy, data, mode)
                mount(copy, target, None, MS_BIND)
                set_read_only(target, recursive=False)
            else:
                make_parent(target)
                write_file(target, data, mode)
        elif kind in ("proc", "dev") and not own_proc_dev:
            mountpoint(target, True)
        elif kind == "proc":
            mountpoint(target, True)
            mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            for name in PROC_READ_ONLY:
                entry = f"{target}/{name}"
                if os.path.exists(entry):
                    mount(entry, entry, None, MS_BIND | MS_REC)
                    set_read_only(entry, recursive=True)
        elif kind == "dev":
            build_dev(target)
        elif kind == "remount-ro":
            set_read_only(target, recursive=False)
        else:
            die(f"unknown mount kind {kind}")


def build_dev(target: str) -> None:
    mountpoint(target, True)
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")
    for name in DEV_NODES:
        node = f"{target}/{name}"
        mountpoint(node, False)
        mount(f"/oldroot/dev/{name}", node, None, MS_BIND)
    for name, link in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("core", "/proc/kcore"),
        ("ptmx", "pts/ptmx"),
    ):
        os.symlink(link, f"{target}/{name}")
    os.mkdir(f"{target}/pts", 0o755)
    mount("devpts", f"{target}/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666")
    os.mkdir(f"{target}/shm", 0o1777)
    mount("tmpfs", f"{target}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def loopback_up() -> None:
    import _socket  # both already imported by main(), before the host tree went away
    import fcntl

    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM, 0)
    try:
        req = b"lo".ljust(16, b"\0") + bytes(24)
        flags = int.from_bytes(fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, req)[16:18], "little")
        req = b"lo".ljust(16, b"\0") + (flags | IFF_UP).to_bytes(2, "little") + bytes(22)
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, req)
    finally:
        sock.close()


# -- processes -------------------------------------------------------------------------------------


def forwarded() -> list[int]:
    return [getattr(_signal, name) for name in FORWARDED]


def block_forwarded() -> None:
    """Held from before a fork until the parent's handlers exist (no signal lost in between);
    the child unblocks them itself (a mask survives exec)."""

    _signal.pthread_sigmask(_signal.SIG_BLOCK, forwarded())


def unblock_forwarded() -> None:
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, forwarded())


def forward_to(pid: int) -> None:
    def handler(signum: int, frame: object) -> None:
        try:  # noqa: SIM105
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in forwarded():
        _signal.signal(signum, handler)
    unblock_forwarded()


def end_like(status: int) -> None:
    """Leave exactly as the program did."""

    if os.WIFSIGNALED(status):
        die_by(os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def die_by(signum: int) -> None:
    """End this process by signal ``signum``, the one that ended the program (also the qemu
    relay's end). SIGKILL's disposition cannot be changed nor the signal blocked: it is sent
    as it is (asking for its default raised EINVAL, and the run was misreported). No core file
    of this process: the program's own is the one that matters."""

    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, OSError, ValueError):
        pass
    if signum != _signal.SIGKILL:
        _signal.signal(signum, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal that does not end a process by default: report it


def drop_bounding_set() -> None:
    """Empty the capability bounding set: no capability survives an exec, even for uid 0 (a
    capability this process no longer holds is skipped)."""

    try:
        with open("/proc/sys/kernel/cap_last_cap", "rb") as handle:
            last = int(handle.read())
    except OSError:
        last = 63
    for cap in range(last + 1):
        try:  # noqa: SIM105
            sc("prctl", PR_CAPBSET_DROP, cap, 0, 0, 0)
        except OSError:
            pass


def lock_down(spec: Spec) -> None:
    """In the program's process, just before exec: no capabilities, no new privileges, seccomp."""

    drop_bounding_set()
    sc("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if spec.seccomp:
        keep, address = pinned(spec.seccomp)
        fprog = (len(spec.seccomp) // 8).to_bytes(2, sys.byteorder) + bytes(6)
        fprog += address.to_bytes(8, sys.byteorder)
        try:
            sc("seccomp", 1, 0, fprog)
        except OSError as exc:
            die(f"cannot load the seccomp filter: {exc.strerror}")
        del keep


def run_init(spec: Spec, status_w: int, *, execs: bool) -> None:
    """PID 1 of the sandbox. Returns only in the program's process, when ``execs`` is false
    (the caller then execs the program itself)."""

    try:  # noqa: SIM105
        sc("prctl", PR_SET_PDEATHSIG, 9, 0, 0, 0)
    except OSError:
        pass
    # (getppid() is 0 here: the parent lives outside this PID namespace. If outer died before
    # the prctl, the status pipe's reader is gone and the write below fails: init ends.)
    build_tree(spec, own_net=not spec.join_net)
    try:
        sc("sethostname", b(spec.hostname), len(b(spec.hostname)))
    except OSError as exc:
        die(f"sethostname: {exc.strerror}")
    block_forwarded()
    pid = os.fork()
    if pid == 0:
        os.close(status_w)
        # Dispositions as a fresh process has them (the interpreter ignored SIGPIPE, SIGXFSZ).
        for signum in (*forwarded(), _signal.SIGPIPE, _signal.SIGXFSZ):
            _signal.signal(signum, _signal.SIG_DFL)
        unblock_forwarded()
        os.setsid()
        try:
            os.chdir(spec.cwd)
        except OSError as exc:
            die(f"cannot enter {spec.cwd}: {exc.strerror}")
        lock_down(spec)
        if not execs:
            return
        try:
            os.execve(spec.argv[0], spec.argv, spec.env)
        except OSError as exc:
            die(f"cannot run {spec.argv[0]}: {exc.strerror}", 127)
    forward_to(pid)
    while True:
        try:
            reaped, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if reaped == pid:
            os.write(status_w, status.to_bytes(4, "little"))
            os._exit(0)


def start(spec: Spec, *, execs: bool) -> None:
    """Create the sandbox and become its *outer* process (which never returns). With ``execs``
    false this returns in the program's process, locked down, for the caller to exec."""

    if spec.parent_pid:
        # Supervised by python-sb (a network run, learning): die with it. init and the
        # program follow (PID namespace).
        sc("prctl", PR_SET_PDEATHSIG, 9, 0, 0, 0)
        if os.getppid() != spec.parent_pid:
            os._exit(1)  # the supervisor died before the line above
    if not spec.join_net:
        # Extension modules load from the interpreter's lib-dynload: import them while the host
        # tree is still the root.
        import _socket  # noqa: F401
        import fcntl  # noqa: F401
    enter_namespaces(spec)
    status_r, status_w = os.pipe()
    block_forwarded()
    pid = os.fork()
    if pid == 0:
        os.close(status_r)
        # The forwarded signals stay blocked in init until it knows the program's PID: one sent
        # meanwhile waits, and then reaches the program.
        run_init(spec, status_w, execs=execs)
        return  # the program's process (execs false); init and a failed exec never get here
    os.close(status_w)
    forward_to(pid)
    data = b""
    while len(data) < 4:
        try:
            chunk = os.read(status_r, 4 - len(data))
        except InterruptedError:
            continue
        if not chunk:
            break
        data += chunk
    while True:
        try:
            _, init_status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if len(data) == 4:
        end_like(int.from_bytes(data, "little"))
    # init ended without a report: it failed while building the sandbox (message on stderr).
    end_like(init_status)


def enter_in_process(data: bytes, prepared_in: int) -> None:
    """``Prepared.pre_exec`` form: python-sb's own process becomes *outer* and the caller execs
    the interpreter in the program's process, saving the setup step's interpreter start.

    ``prepared_in`` is the PID that prepared the run: another PID here means a supervising
    python-sb forked this process, which must then die with it.
    """

    spec = Spec(data)
    if os.getpid() != prepared_in:
        spec.parent_pid = prepared_in
    start(spec, execs=False)


def main() -> None:
    start(read_spec(int(sys.argv[1])), execs=True)


if __name__ == "__main__":
    main()
