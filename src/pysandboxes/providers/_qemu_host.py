"""The host half of ``os-sandbox=qemu``: build the shared tree, run qemu confined, relay.

Run by python-sb's supervisor as ``python -I -S -c 'import ...; main()' SPEC_FD`` (the command
``providers/qemu.py`` builds); the spec descriptor holds a ``marshal``-encoded dict (data only,
see :func:`read_spec`). This process:

1. dies with python-sb (``PR_SET_PDEATHSIG``), and qemu dies with it in turn;
2. enters its own user and mount namespaces (after joining the ``netns`` holder's user and
   network namespaces when ``net=`` rules exist, so that qemu's user-mode network runs behind the
   nftables ruleset);
3. builds the guest's file tree with the namespace providers' mount plan (``_ns_mounts``) in a
   tmpfs: read-only and read-write binds of exactly the exposed paths, ``ignore=`` masks, the
   interpreter, the generated /etc files; that tmpfs, made read-only, is the one 9p export (never
   the host's ``/``);
4. starts qemu in a new session, with no capability, ``no_new_privs``, ``-sandbox on`` and
   ``PR_SET_PDEATHSIG``, the virtio-serial port on one end of a socketpair;
5. relays: its stdin to ``I``/``E`` frames, the signals it receives (SIGINT, SIGTERM, SIGHUP,
   SIGQUIT, SIGUSR1, SIGUSR2) to ``S`` frames, ``O``/``e`` to its stdout/stderr, ``L`` to the
   learning record descriptor, ``D`` to the ``--denials`` file; a **boot watchdog** kills a
   guest that never says ``B`` and prints the console's last lines;
6. ends as the program ended (same exit code, or death by the same signal), or with status 125
   and the reason when the VM failed.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: ``signal`` imports ``enum``
import os
import sys
import time

from pysandboxes.providers import _ns_init
from pysandboxes.providers import _qemu_frames as frames

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

CLONE_NEWNS, CLONE_NEWUSER = _ns_init.CLONE_NEWNS, _ns_init.CLONE_NEWUSER
MS_NOSUID, MS_NODEV, MS_BIND = _ns_init.MS_NOSUID, _ns_init.MS_NODEV, _ns_init.MS_BIND
MS_REC, MS_PRIVATE = _ns_init.MS_REC, _ns_init.MS_PRIVATE
FAILURE = 125
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
#: Seconds between a forwarded signal and qemu's forced end when the guest does not answer.
SIGNAL_GRACE = 10.0
#: Seconds given to qemu to end on its own after the guest reported the program's status.
EXIT_GRACE = 5.0
CONSOLE_LINES = 15

SPEC_FIELDS: dict[str, type] = {
    "format": str,
    "mounts": list,
    "export": str,
    "scratch": str,
    "join_user": str,
    "join_net": str,
    "resolv_conf": bytes,
    "qemu_argv": list,
    "run": bytes,
    "record_fd": int,
    "denials": str,
    "tty": list,
    "boot_timeout": float,
    "console": str,
    "qemu_log": str,
    "parent_pid": int,
    "uid": int,
    "gid": int,
    "params": str,
    "state_fd": int,
    "state_path": str,
    "state_save": str,
    "state_header": bytes,
}
SPEC_FORMAT = "pysb-qemu-host-3"
#: The placeholder in ``qemu_argv`` replaced by qemu's end of the socketpair.
PORT_FD = "{port_fd}"
#: Seconds a save of the VM's state may take before it is given up (the run goes on).
SAVE_TIMEOUT = 60.0


def fail(message: str) -> None:
    _ns_init.die(message, FAILURE)


def check_spec(spec: object) -> dict[str, object]:
    if type(spec) is not dict or set(spec) != set(SPEC_FIELDS):
        raise ValueError("bad qemu host spec")
    for key, kind in SPEC_FIELDS.items():
        if type(spec[key]) is not kind:
            raise ValueError(f"qemu host spec field {key} is not a {kind.__name__}")
    if spec["format"] != SPEC_FORMAT:
        raise ValueError("qemu host spec of another version")
    return spec


def read_spec(fd: int) -> dict[str, object]:
    import marshal

    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return check_spec(marshal.loads(b"".join(chunks)))


# -- namespaces and the tree ----------------------------------------------------------------------


def enter_namespaces(spec: dict[str, object]) -> None:
    for key in ("join_user", "join_net"):
        path = str(spec[key])
        if path:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                _ns_init.sc("setns", fd, 0)
            except OSError as exc:
                fail(f"cannot join the network namespace ({path}): {exc.strerror}")
            finally:
                os.close(fd)
    parent_uid, parent_gid = os.getuid(), os.getgid()
    try:
        _ns_init.sc("unshare", CLONE_NEWUSER | CLONE_NEWNS)
    except OSError as exc:
        fail(f"cannot create a user and mount namespace for qemu: {exc.strerror}")
    _ns_init.write_proc("/proc/self/setgroups", "deny")
    _ns_init.write_proc("/proc/self/uid_map", f"{spec['uid']} {parent_uid} 1\n")
    _ns_init.write_proc("/proc/self/gid_map", f"{spec['gid']} {parent_gid} 1\n")


def build_tree(spec: dict[str, object]) -> None:
    """The guest's root under ``spec['export']``: the namespace providers' tree, mounted by the
    same code (``_ns_init.apply_mounts``), except that /proc and /dev are left empty for the
    guest's own; then the export itself is made read-only."""

    export = str(spec["export"])
    scratch = str(spec["scratch"])
    _ns_init.mount(None, "/", None, MS_REC | MS_PRIVATE)
    _ns_init.mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700")
    _ns_init.mount("tmpfs", export, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    mounts = spec["mounts"]
    assert isinstance(mounts, list)
    _ns_init.apply_mounts([tuple(m) for m in mounts], export, "", scratch, own_proc_dev=False)  # type: ignore[misc]
    _ns_init.set_read_only(export, recursive=False)
    resolv = spec["resolv_conf"]
    assert isinstance(resolv, bytes)
    if resolv and os.path.exists("/etc/resolv.conf"):
        # qemu's user-mode network forwards the guest's DNS to the resolver in qemu's own
        # /etc/resolv.conf: the only one the ruleset lets through (netns.RESOLVER).
        copy = f"{scratch}/resolv.conf"
        _ns_init.write_file(copy, resolv, 0o644)
        _ns_init.mount(copy, "/etc/resolv.conf", None, MS_BIND)


# -- qemu -----------------------------------------------------------------------------------------


def qemu_command(spec: dict[str, object], port_fd: int, restore: bool, qmp_fd: int) -> list[str]:
    """qemu's command for this attempt: the spec's, with the port's descriptor, and either
    ``-incoming`` from the saved state's descriptor (``restore``) or a QMP monitor on
    ``qmp_fd`` (a run that saves the state; -1 otherwise)."""

    argv = [str(a).replace(PORT_FD, str(port_fd)) for a in spec["qemu_argv"]]  # type: ignore[attr-defined]
    sandbox = argv.index("-sandbox")
    extra: list[str] = []
    if restore:
        extra = ["-incoming", f"fd:{spec['state_fd']}"]
    elif qmp_fd >= 0:
        extra = ["-chardev", f"socket,id=qmp,fd={qmp_fd}", "-mon", "chardev=qmp,mode=control"]
    return argv[:sandbox] + extra + argv[sandbox:]


def spawn_qemu(spec: dict[str, object], argv: list[str], keep: list[int]) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
    log = os.open(str(spec["qemu_log"]), flags, 0o600)
    pid = os.fork()
    if pid:
        os.close(log)
        return pid
    try:
        _ns_init.sc("prctl", _ns_init.PR_SET_PDEATHSIG, 9, 0, 0, 0)
        os.setsid()  # out of the terminal's reach: its signals go through the relay
        for signum in range(1, _signal.NSIG):
            try:  # noqa: SIM105
                _signal.signal(signum, _signal.SIG_DFL)
            except (OSError, ValueError, RuntimeError):
                pass
        _signal.pthread_sigmask(_signal.SIG_SETMASK, [])
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        for fd in keep:
            os.set_inheritable(fd, True)
        confine_view(spec, argv)
        _drop_capabilities()
        env = {"PATH": "/usr/bin:/bin", "LANG": "C"}
        os.execve(argv[0], argv, env)
    except BaseException as exc:
        os.write(2, f"cannot start qemu: {exc}\n".encode())
    os._exit(127)


#: What qemu sees of the host besides the system trees: the loader's and resolver's files.
QEMU_ETC = ("ld.so.cache", "resolv.conf", "hosts", "nsswitch.conf", "host.conf", "gai.conf")
QEMU_DEV = ("null", "zero", "full", "random", "urandom", "kvm")


def confine_view(spec: dict[str, object], argv: list[str]) -> None:
    """In qemu's process, before exec: a mount namespace of its own whose root holds only the
    system trees (read-only: its binary, libraries, firmware), a few /etc files, a few device
    nodes, the host's /proc (read-only), the kernel and initramfs (read-only) and the run's work
    directory (the export, the console log). The host's home directories, /tmp, /var, /root...
    are not there."""

    _ns_init.sc("unshare", CLONE_NEWNS)
    _ns_init.mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = f"{spec['scratch']}/qemu-root-{os.getpid()}"  # one per qemu (a restore can fail)
    os.mkdir(root, 0o755)
    _ns_init.mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = "/" + top
        if os.path.islink(host):
            os.symlink(os.readlink(host), root + host)
        elif os.path.isdir(host):
            _bind(host, root + host, read_only=True)
    os.mkdir(root + "/etc", 0o755)
    for name in QEMU_ETC:
        if os.path.exists("/etc/" + name):
            _bind("/etc/" + name, root + "/etc/" + name, read_only=True)
    os.mkdir(root + "/dev", 0o755)
    for name in QEMU_DEV:
        if os.path.exists("/dev/" + name):
            _bind("/dev/" + name, root + "/dev/" + name, read_only=False)
    os.mkdir(root + "/tmp", 0o1777)
    # qemu's 9p server reaches files through /proc/self/fd (chmod and friends on a descriptor
    # opened with O_PATH): the host's /proc, read-only (a new one needs a PID namespace).
    _bind("/proc", root + "/proc", read_only=True)
    for option in ("-kernel", "-initrd"):
        if option in argv:
            folder = os.path.dirname(os.path.realpath(argv[argv.index(option) + 1]))
            if not os.path.exists(root + folder):
                _bind(folder, root + folder, read_only=True)
    workdir = os.path.dirname(str(spec["export"]))
    _bind(workdir, root + workdir, read_only=False)
    os.chdir(root)
    try:
        _ns_init.sc("pivot_root", b".", b".")
        _ns_init.sc("umount2", b".", _ns_init.MNT_DETACH)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot confine qemu's view: {exc.strerror}") from None
    os.chdir("/")


def _bind(source: str, target: str, *, read_only: bool) -> None:
    _ns_init.mountpoint(target, os.path.isdir(source))
    _ns_init.mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        _ns_init.set_read_only(target, recursive=True)


def _drop_capabilities() -> None:
    """No capability survives the exec (even as uid 0 in the namespace), no new privileges."""

    _ns_init.drop_bounding_set()
    _ns_init.sc("prctl", _ns_init.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def console_tail(path: str, lines: int = CONSOLE_LINES) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 8192))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return "(no console output)"
    kept = [line.rstrip("\r") for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join("  | " + line for line in kept) or "  | (no console output)"


# -- the relay ------------------------------------------------------------------------------------


def _write_all(fd: int, data: bytes) -> bool:
    view = memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(fd, view) :]
            except InterruptedError:
                continue
    except OSError:
        return False
    return True


class HostRelay:
    def __init__(
        self, spec: dict[str, object], sock: int, qemu: int, wakeup: int, qmp: int = -1
    ) -> None:
        self.spec = spec
        self.sock = sock
        self.qemu = qemu
        self.wakeup = wakeup
        #: The QMP socket of a run that saves the VM's state when /init asks (-1: none).
        self.qmp = qmp
        self.decoder = frames.Decoder(frames.GUEST_TYPES)
        self.booted = False
        self.status: int | None = None
        self.failure: str | None = None
        self.qemu_status: int | None = None
        self.stdin_open = True
        self.outputs_ok = {1: True, 2: True}
        self.record_fd = int(spec["record_fd"])  # type: ignore[call-overload]
        self.denials_fd = -1
        if spec["denials"]:
            # --denials=FILE: the guard's lines come back as D frames (the file is not in the VM)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
            try:
                self.denials_fd = os.open(str(spec["denials"]), flags)
            except OSError as exc:
                fail(f"--denials={spec['denials']}: {exc.strerror}")
        self.deadline = time.monotonic() + float(spec["boot_timeout"])  # type: ignore[arg-type]
        self.signalled: int | None = None
        #: python-sb's pid (set by :func:`main`): a SIGHUP received once the parent is
        #: another process is the parent-death signal.
        self.parent = 0
        self.signal_deadline = 0.0
        terminals = spec["tty"]
        assert isinstance(terminals, list)
        self.saved_terminal: list[object] | None = None
        #: Where the guest's terminal output goes (T frames): python-sb's terminal.
        self.terminal = -1 if not terminals else 1 if 1 in terminals else terminals[0]

    def send(self, kind: bytes, payload: bytes = b"") -> None:
        _write_all(self.sock, frames.encode(kind, payload))

    def send_params(self) -> None:
        """The line ``/init`` reads before it mounts the tree: interpreter, source directory."""

        _write_all(self.sock, str(self.spec["params"]).encode() + b"\n")

    def loop(self) -> None:
        import select

        while self.status is None and self.failure is None and self.qemu_status is None:
            poller = select.poll()
            poller.register(self.sock, select.POLLIN)
            poller.register(self.wakeup, select.POLLIN)
            if self.stdin_open and self.booted:
                poller.register(0, select.POLLIN)
            timeout = None
            now = time.monotonic()
            if not self.booted:
                timeout = max(0.0, self.deadline - now)
            if self.signalled is not None:
                left = max(0.0, self.signal_deadline - now)
                timeout = left if timeout is None else min(timeout, left)
            try:
                events = poller.poll(None if timeout is None else int(timeout * 1000) + 1)
            except InterruptedError:
                events = []
            for fd, event in events:
                if fd == self.sock:
                    self.from_guest()
                elif fd == self.wakeup:
                    self.wake()
                elif fd == 0:
                    self.from_stdin(event)
            now = time.monotonic()
            if not self.booted and now >= self.deadline and self.status is None:
                self.failure = (
                    f"the guest did not come up within {float(self.spec['boot_timeout']):g} s "  # type: ignore[arg-type]
                    "(boot watchdog); the console's last lines:\n"
                    + console_tail(str(self.spec["console"]))
                )
            elif self.signalled is not None and now >= self.signal_deadline:
                self.status = -self.signalled  # the guest did not answer: end like the signal

    def from_guest(self) -> None:
        try:
            data = os.read(self.sock, 1 << 16)
        except InterruptedError:
            return
        except OSError:
            data = b""
        if not data:
            self.reap_qemu(block=True)
            if self.status is None and self.failure is None:
                self.failure = "the VM ended without reporting the program's status"
            return
        try:
            received = self.decoder.feed(data)
        except frames.FrameError as exc:
            self.failure = f"the guest sent a malformed frame ({exc})"
            return
        for kind, payload in received:
            self.handle(kind, payload)

    def handle(self, kind: bytes, payload: bytes) -> None:
        """One frame from the guest."""

        if kind == b"P":
            # /init waits for its parameter line: where a saved state is taken, if one is due.
            # Only the first P of a run that saves, before B (nothing of the run is in the VM
            # yet); any other is ignored.
            if self.qmp >= 0 and not self.booted:
                qmp, self.qmp = self.qmp, -1
                problem = save_state(self.spec, qmp)
                if problem:
                    os.write(
                        2, f"python-sb: qemu: the VM's state was not saved: {problem}\n".encode()
                    )
                self.send_params()
        elif kind == b"B" and not self.booted:
            self.booted = True
            # Raw from now on (until then Ctrl-C still ends a boot that takes too long).
            self.saved_terminal = raw_terminal(self.spec)
            # The host's clock and randomness first (a restored VM holds the snapshot's), then
            # the run.
            self.send(b"C", frames.encode_clock(time.time_ns(), os.urandom(frames.ENTROPY_BYTES)))
            run = self.spec["run"]
            assert isinstance(run, bytes)
            self.send(b"R", run)
        elif kind in (b"O", b"e"):
            fd = 1 if kind == b"O" else 2
            if self.outputs_ok[fd]:
                self.outputs_ok[fd] = _write_all(fd, payload)
        elif kind == b"T":
            if self.terminal >= 0:
                _write_all(self.terminal, payload)
        elif kind == b"L":
            if self.record_fd >= 0:
                _write_all(self.record_fd, payload)
        elif kind == b"D":
            if self.denials_fd >= 0:
                _write_all(self.denials_fd, payload)
        elif kind == b"X":
            try:
                self.status = frames.decode_status(payload)
            except frames.FrameError as exc:
                self.failure = str(exc)
        elif kind == b"F":
            self.failure = "the guest could not start the program: " + payload.decode(
                "utf-8", "replace"
            )

    def from_stdin(self, event: int) -> None:
        try:
            data = os.read(0, 1 << 16)
        except InterruptedError:
            return
        except OSError:
            data = b""
        if data:
            self.send(b"I", data)
        else:
            self.stdin_open = False
            self.send(b"E")

    def wake(self) -> None:
        try:
            data = os.read(self.wakeup, 64)
        except (BlockingIOError, InterruptedError):
            return
        for signum in data:
            if signum == _signal.SIGHUP and os.getppid() != self.parent:
                # python-sb is gone (killed): restore the terminal it left raw, end the VM
                # (qemu also dies with this process) and leave, nobody waits for a status.
                restore_terminal(self.saved_terminal)
                try:  # noqa: SIM105
                    os.kill(self.qemu, 9)
                except ProcessLookupError:
                    pass
                os._exit(128 + _signal.SIGHUP)
            if signum == _signal.SIGCHLD:
                self.reap_qemu(block=False)
            elif signum == _signal.SIGWINCH:
                if self.terminal >= 0:
                    size = window_size(self.terminal)
                    if size:
                        self.send(b"W", b"".join(n.to_bytes(2, "big") for n in size))
            elif not self.booted:
                # Nothing runs yet: end now, as the program would have.
                self.status = -signum
            else:
                self.send(b"S", bytes([signum]))
                if self.signalled is None:
                    self.signalled = signum
                    self.signal_deadline = time.monotonic() + SIGNAL_GRACE

    def reap_qemu(self, block: bool) -> None:
        if self.qemu_status is not None:
            return
        try:
            pid, status = os.waitpid(self.qemu, 0 if block else os.WNOHANG)
        except ChildProcessError:
            self.qemu_status = -1
            return
        if pid == self.qemu:
            self.qemu_status = status
            # Frames already in the socket still count (the status is sent before the reboot).
            while self.status is None and self.failure is None:
                try:
                    data = os.read(self.sock, 1 << 16)
                except OSError:
                    break
                if not data:
                    break
                self.decoder_feed_tail(data)
            if self.status is None and self.failure is None:
                self.failure = "qemu ended before the program did:\n" + _qemu_log_tail(self.spec)

    def decoder_feed_tail(self, data: bytes) -> None:
        try:
            for kind, payload in self.decoder.feed(data):
                self.handle(kind, payload)
        except frames.FrameError:
            pass


class _Qmp:
    """Just enough of qemu's machine protocol (QMP, JSON lines) to save the VM's state."""

    def __init__(self, fd: int) -> None:
        import _socket

        self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, fd)
        self.sock.settimeout(SAVE_TIMEOUT)
        self.buffer = b""

    def message(self) -> dict[str, object]:
        import json

        while b"\n" not in self.buffer:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise OSError("qemu closed its monitor")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        found = json.loads(line)
        if not isinstance(found, dict):
            raise ValueError("not a QMP message")
        return found

    def execute(
        self, command: str, arguments: dict[str, object] | None = None, fds: tuple[int, ...] = ()
    ) -> object:
        import _socket
        import json

        data = json.dumps({"execute": command, "arguments": arguments or {}}).encode() + b"\n"
        if fds:
            rights = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)
            self.sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        else:
            self.sock.sendall(data)
        while True:
            answer = self.message()
            if "return" in answer:
                return answer["return"]
            if "error" in answer:
                raise OSError(f"{command}: {answer['error']}")


def save_state(spec: dict[str, object], qmp_fd: int) -> str:
    """Save the running VM's state (``/init`` waits for its parameter line: the kernel has booted
    and loaded its modules, nothing of the run is in the VM yet) into ``spec['state_save']``,
    written beside it and renamed into place, owner-only; '' or what went wrong. The VM goes on
    running afterwards: this run continues as a cold boot would have. The file starts with
    ``spec['state_header']`` (the key the next runs check, ``qemu.saved_state``), then qemu's
    migration stream (qemu writes from the descriptor's offset)."""

    final = str(spec["state_save"])
    tmp = f"{final}.{os.getpid()}.tmp"
    deadline = time.monotonic() + SAVE_TIMEOUT
    qmp: _Qmp | None = None
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        os.close(qmp_fd)
        return f"{tmp}: {exc.strerror}"
    try:
        header = spec["state_header"]
        assert isinstance(header, bytes)
        _write_all(fd, header)
        qmp = _Qmp(qmp_fd)
        qmp.message()  # the greeting
        qmp.execute("qmp_capabilities")
        # qemu's default of 32 MiB/s would make a 70 MB state take seconds: a file is no link.
        qmp.execute("migrate-set-parameters", {"max-bandwidth": 1 << 40})
        qmp.execute("getfd", {"fdname": "pysbstate"}, (fd,))
        qmp.execute("migrate", {"uri": "fd:pysbstate"})
        status = ""
        while time.monotonic() < deadline:
            found = qmp.execute("query-migrate")
            status = str(found.get("status", "")) if isinstance(found, dict) else ""
            if status in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.02)
        qmp.execute("cont")  # a finished migration leaves the source paused
        if status != "completed":
            raise OSError(f"migration {status or 'timed out'}")
        os.fsync(fd)
        os.replace(tmp, final)
        return ""
    except (OSError, ValueError) as exc:
        try:  # noqa: SIM105
            os.unlink(tmp)
        except OSError:
            pass
        return str(exc)
    finally:
        os.close(fd)
        if qmp is not None:
            qmp.sock.close()  # the monitor is of no further use: qemu sees it closed
        else:
            os.close(qmp_fd)


def window_size(fd: int) -> tuple[int, int] | None:
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return None
    return size.lines, size.columns


def raw_terminal(spec: dict[str, object]) -> list[object] | None:
    """When python-sb's stdin is a terminal, make it raw (every key, Ctrl-C included, goes to
    the program's pseudo-terminal in the guest, whose line discipline edits lines, echoes and
    raises SIGINT); the attributes to restore (None when nothing was changed)."""

    terminals = spec["tty"]
    assert isinstance(terminals, list)
    if 0 not in terminals:
        return None
    import termios
    import tty

    try:
        saved = termios.tcgetattr(0)
        tty.setraw(0, termios.TCSANOW)
    except termios.error:
        return None
    return saved


def restore_terminal(saved: list[object] | None) -> None:
    if saved is None:
        return
    import termios

    try:  # noqa: SIM105
        termios.tcsetattr(0, termios.TCSADRAIN, saved)  # type: ignore[arg-type]
    except termios.error:
        pass


def _qemu_log_tail(spec: dict[str, object]) -> str:
    return console_tail(str(spec["qemu_log"])) + "\n" + console_tail(str(spec["console"]))


def _end_qemu(relay: HostRelay) -> None:
    if relay.qemu_status is not None:
        return
    deadline = time.monotonic() + (EXIT_GRACE if relay.status is not None else 0)
    while time.monotonic() < deadline:
        pid, _ = os.waitpid(relay.qemu, os.WNOHANG)
        if pid:
            return
        time.sleep(0.02)
    try:  # noqa: SIM105
        os.kill(relay.qemu, 9)
    except ProcessLookupError:
        pass
    try:  # noqa: SIM105
        os.waitpid(relay.qemu, 0)
    except ChildProcessError:
        pass


def start_vm(spec: dict[str, object], wakeup: int, restore: bool) -> HostRelay:
    """qemu started on a new socketpair (restored from the saved state when ``restore``, with a
    monitor to save one when the spec asks and this is not a restore), and its relay. The
    parameter line goes at once, except when the state is to be saved first (on ``P``)."""

    import _socket  # type: ignore[import-not-found]

    host_end, guest_end = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM, 0)
    sock = host_end.detach()
    port = guest_end.detach()
    os.set_inheritable(sock, False)
    qmp_host = qmp_qemu = -1
    if not restore and spec["state_save"]:
        qmp_a, qmp_b = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM, 0)
        qmp_host, qmp_qemu = qmp_a.detach(), qmp_b.detach()
        os.set_inheritable(qmp_host, False)
    keep = [port] + ([qmp_qemu] if qmp_qemu >= 0 else [])
    if restore:
        keep.append(int(spec["state_fd"]))  # type: ignore[call-overload]
    qemu = spawn_qemu(spec, qemu_command(spec, port, restore, qmp_qemu), keep)
    os.close(port)
    if qmp_qemu >= 0:
        os.close(qmp_qemu)
    relay = HostRelay(spec, sock, qemu, wakeup, qmp_host)
    if qmp_host < 0:
        relay.send_params()
    return relay


def discard_state(spec: dict[str, object]) -> None:
    """Remove the saved state that failed to restore, if the path still names that file."""

    fd = int(spec["state_fd"])  # type: ignore[call-overload]
    path = str(spec["state_path"])
    try:
        held, named = os.fstat(fd), os.stat(path)
        if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
            os.unlink(path)
    except OSError:
        pass


def end_like(status: int) -> None:
    """End as the program in the VM did (``status``: an exit code, or minus a signal)."""

    if status < 0:
        _ns_init.die_by(-status)
    os._exit(status & 0xFF)


def main() -> None:
    _ns_init.WHO = "qemu"  # the shared mount code's messages name this provider
    spec_fd = int(sys.argv[1])
    parent = os.getppid()
    _ns_init.sc("prctl", _ns_init.PR_SET_PDEATHSIG, 9, 0, 0, 0)
    try:
        spec = read_spec(spec_fd)
    except (ValueError, EOFError, TypeError) as exc:
        fail(str(exc))
    if spec["parent_pid"] and os.getppid() != parent:
        os._exit(FAILURE)
    enter_namespaces(spec)
    build_tree(spec)
    # Signals wake the loop through a pipe (set_wakeup_fd); they are caught from now on.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    for name in (*SIGNALS, "SIGCHLD", "SIGWINCH"):
        _signal.signal(getattr(_signal, name), lambda *_: None)
    _signal.set_wakeup_fd(wake_w)
    restore = int(spec["state_fd"]) >= 0  # type: ignore[call-overload]
    relay = start_vm(spec, wake_r, restore)
    relay.parent = parent
    # From now on python-sb's death is a SIGHUP the loop sees (HostRelay.wake), so that the
    # terminal made raw is restored and qemu ended; before, SIGKILL (nothing to restore yet).
    _ns_init.sc("prctl", _ns_init.PR_SET_PDEATHSIG, _signal.SIGHUP, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), _signal.SIGHUP)  # it died before the line above: the same path
    try:
        relay.loop()
        if restore and not relay.booted and relay.status is None:
            # The saved state did not come up (corrupt, truncated, of another qemu): say so
            # once, drop it (the next run saves a new one) and boot cold; never a failed run.
            _end_qemu(relay)
            os.close(relay.sock)
            said = [line[4:] for line in (relay.failure or "").splitlines() if line[:4] == "  | "]
            reason = said[0] if said else (relay.failure or "no reason").splitlines()[0]
            discard_state(spec)
            os.write(
                2,
                f"python-sb: qemu: the saved VM state {spec['state_path']} could not be "
                f"restored ({reason}); booting cold\n".encode(),
            )
            relay = start_vm(spec, wake_r, restore=False)
            relay.parent = parent
            relay.loop()
    finally:
        restore_terminal(relay.saved_terminal)
        _end_qemu(relay)
    if relay.status is not None:
        end_like(relay.status)
    fail(relay.failure or "the VM failed")
