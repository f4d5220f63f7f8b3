"""PID 1 of the ``os-sandbox=qemu`` guest: receive the run, start the program, relay it.

The initramfs's ``/init`` (``_qemu_kernel.INIT_SCRIPT``) mounts the 9p share as the root, opens
the ``pysb`` virtio-serial port on descriptor 3 and switches to the host's own interpreter
running :func:`main` with ``-I -S``. This module then:

1. mounts the guest's own ``/proc`` and a minimal ``/dev`` (a tmpfs with the same few device
   nodes as the namespace providers, ``/dev/pts``, ``/dev/shm``), says ``B`` (booted);
2. reads the ``C`` frame (the host's clock and randomness: the wall clock is set and the random
   generator reseeded, which a VM restored from a saved state needs) and the ``R`` frame
   (``_qemu_frames.decode_run``: data only, checked);
3. recreates the run's memfd at the descriptor number the ``-c`` bootstrap names, and the learning
   record descriptor as a pipe whose lines go back as ``L`` frames;
4. forks the program: new session, stdin/stdout/stderr on pipes, or on a pseudo-terminal for
   those that are a terminal on the host (:func:`open_terminal`), no capabilities (bounding set
   emptied), the host user's uid and gid, ``no_new_privs``, the seccomp filter of the namespace
   providers, the working directory, then ``execve`` with exactly the granted environment;
5. relays: ``I``/``E`` to the program's stdin, its stdout/stderr as ``O``/``e`` (the terminal's
   output as ``T``; ``W`` sets its window size), the guard's
   ``--denials`` lines as ``D`` (:func:`denials_pipe`), ``S`` as
   ``killpg`` on its session; reaps every orphan (it is PID 1);
6. when the program ends: ``sync`` (writes to read-write exposures reach the host), ``X`` with
   its status, then reboot (qemu runs with ``-no-reboot``: the VM ends).

Any failure of the set-up is sent as ``F`` with the reason, then the VM ends.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: ``signal`` imports ``enum``
import os
import sys

from pysandboxes.providers import _ns_init
from pysandboxes.providers import _qemu_frames as frames

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

MS_NOSUID, MS_NODEV, MS_NOEXEC = _ns_init.MS_NOSUID, _ns_init.MS_NODEV, _ns_init.MS_NOEXEC
MS_BIND = _ns_init.MS_BIND
RB_AUTOBOOT = 0x01234567
LINUX_REBOOT_MAGIC1 = 0xFEE1DEAD
LINUX_REBOOT_MAGIC2 = 672274793
#: (name, major, minor) of the device nodes of the guest's /dev: ``_ns_init.DEV_NODES``.
DEV_NUMBERS = {
    "null": (1, 3),
    "zero": (1, 5),
    "full": (1, 7),
    "random": (1, 8),
    "urandom": (1, 9),
    "tty": (5, 0),
}
HIGH_FD = 100
#: The host's loopback as qemu's user-mode network shows it to the guest.
HOST_ALIAS = "10.0.2.2"
CHUNK = 1 << 16


class GuestError(Exception):
    """A set-up step failed: reported to the host as an ``F`` frame."""


def _mount(source: str, target: str, fstype: str, flags: int, data: str = "") -> None:
    try:
        _ns_init.sc(
            "mount",
            os.fsencode(source),
            os.fsencode(target),
            os.fsencode(fstype),
            flags,
            os.fsencode(data) if data else None,
        )
    except OSError as exc:
        raise GuestError(f"mount {fstype} on {target}: {exc.strerror}") from None


def build_dev() -> None:
    """A minimal /dev: the same nodes and links as the namespace providers'."""

    if not os.path.isdir("/dev"):
        raise GuestError("the shared tree has no /dev")
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")
    for name in _ns_init.DEV_NODES:
        major, minor = DEV_NUMBERS[name]
        os.mknod(f"/dev/{name}", 0o20666, os.makedev(major, minor))
        os.chmod(f"/dev/{name}", 0o666)
    for name, link in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("ptmx", "pts/ptmx"),
    ):
        os.symlink(link, f"/dev/{name}")
    os.mkdir("/dev/pts", 0o755)
    _mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666")
    os.mkdir("/dev/shm", 0o1777)
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


class Port:
    """The virtio-serial port: blocking writes of whole frames, frames read as they come."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.decoder = frames.Decoder(frames.HOST_TYPES)
        #: Frames read with the run description and due after it (stdin, a signal...): the
        #: host sends ``C``, ``R`` and the program's first input in one go.
        self.pending: list[tuple[bytes, bytes]] = []

    def send(self, kind: bytes, payload: bytes = b"") -> None:
        view = memoryview(frames.encode(kind, payload))
        while view:
            try:
                view = view[os.write(self.fd, view) :]
            except InterruptedError:
                continue

    def receive(self) -> list[tuple[bytes, bytes]]:
        """The frames of one read (possibly none); ``GuestError`` when the host went away."""

        try:
            data = os.read(self.fd, CHUNK)
        except InterruptedError:
            return []
        if not data:
            raise GuestError("the host closed the channel")
        return self.decoder.feed(data)

    def receive_run(self) -> dict[str, object]:
        """The ``C`` frame (applied at once: :func:`set_clock_and_reseed`), then the run."""

        clocked = False
        while True:
            received = self.receive()
            for index, (kind, payload) in enumerate(received):
                if kind == b"C" and not clocked:
                    set_clock_and_reseed(*frames.decode_clock(payload))
                    clocked = True
                elif kind == b"R" and clocked:
                    self.pending = received[index + 1 :]
                    return frames.decode_run(payload)
                else:
                    raise GuestError(f"frame {kind!r} out of order before the run description")


#: ``ioctl`` requests of the kernel's random device (``linux/random.h``).
RNDADDENTROPY = 0x40085203
RNDRESEEDCRNG = 0x5207


def set_clock_and_reseed(time_ns: int, entropy: bytes) -> None:
    """The guest's wall clock from the host's, and its random generator reseeded from the host's
    bytes, before anything of the run starts. A VM restored from a saved state
    (``_qemu_state``) resumes with the snapshot's clock and the snapshot's generator state: without
    this every run restored from one state would draw the same "random" numbers (hash seeds,
    ``os.urandom``, ``secrets``). ``RNDADDENTROPY`` mixes the bytes into the input pool (credited:
    they come from the host's own generator), ``RNDRESEEDCRNG`` makes the generator rekey from it
    at once rather than at its next scheduled reseed. A cold boot does the same (one path)."""

    import fcntl
    import time

    try:
        time.clock_settime_ns(time.CLOCK_REALTIME, time_ns)
    except OSError as exc:
        raise GuestError(f"cannot set the guest's clock: {exc.strerror}") from None
    info = (len(entropy) * 8).to_bytes(4, sys.byteorder) + len(entropy).to_bytes(4, sys.byteorder)
    fd = os.open("/dev/urandom", os.O_WRONLY | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, RNDADDENTROPY, info + entropy)
        fcntl.ioctl(fd, RNDRESEEDCRNG)
    except OSError as exc:
        raise GuestError(f"cannot reseed the guest's random generator: {exc.strerror}") from None
    finally:
        os.close(fd)


_next_high = [HIGH_FD]


def _high(fd: int) -> int:
    """``fd`` moved to a number above the ones the program receives (close-on-exec; PID 1
    opens few descriptors, so a counter suffices and ``fcntl`` need not be loaded)."""

    moved = _next_high[0]
    _next_high[0] += 1
    os.dup2(fd, moved, inheritable=False)
    os.close(fd)
    return moved


def _reboot() -> None:
    """End the VM (qemu runs with ``-no-reboot``: a reboot makes it exit)."""

    _ns_init.sc("reboot", LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, RB_AUTOBOOT, None)


def _lock_down(seccomp: bytes) -> None:
    class Spec:  # what _ns_init.lock_down reads
        pass

    spec = Spec()
    spec.seccomp = seccomp  # type: ignore[attr-defined]
    _ns_init.lock_down(spec)  # type: ignore[arg-type]


def open_terminal(run: dict[str, object]) -> tuple[int, int]:
    """A pseudo-terminal for the program (python-sb's own stdin, stdout or stderr is a
    terminal): ``(master, slave)``. The slave belongs to the program's user (it may reopen
    ``/dev/tty``), has the host terminal's window size, and no suspend character: Ctrl-Z would
    stop the program in a VM that has no shell to resume it."""

    import termios

    master, slave = (_high(fd) for fd in os.openpty())
    os.fchown(slave, int(run["uid"]), int(run["gid"]))  # type: ignore[call-overload]
    os.fchmod(slave, 0o600)
    attrs = termios.tcgetattr(slave)
    attrs[6][termios.VSUSP] = 0  # _POSIX_VDISABLE
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    size = run["winsize"]
    assert isinstance(size, list)
    if size:
        set_window_size(master, size[0], size[1])
    return master, slave


def set_window_size(master: int, rows: int, columns: int) -> None:
    """The terminal's size (the kernel sends SIGWINCH to the program's foreground group)."""

    import fcntl
    import termios

    packed = b"".join(n.to_bytes(2, sys.byteorder) for n in (rows, columns, 0, 0))
    try:  # noqa: SIM105
        fcntl.ioctl(master, termios.TIOCSWINSZ, packed)
    except OSError:
        pass


def start_program(
    run: dict[str, object],
    stdio: tuple[int, int, int],
    extra: dict[int, int],
    *,
    terminal: int = -1,
) -> int:
    """Fork the program with ``stdio`` on 0-2 and ``extra`` (target -> source) descriptors;
    ``terminal``, when given, becomes its controlling terminal."""

    pid = os.fork()
    if pid:
        return pid
    try:
        for signum in range(1, _signal.NSIG):
            try:  # noqa: SIM105
                _signal.signal(signum, _signal.SIG_DFL)
            except (OSError, ValueError, RuntimeError):
                pass
        _signal.pthread_sigmask(_signal.SIG_SETMASK, [])
        os.setsid()
        if terminal >= 0:
            import fcntl
            import termios

            fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)
        for target, source in enumerate(stdio):
            os.dup2(source, target)
        for target, source in extra.items():
            os.dup2(source, target)  # inheritable
        uid, gid = int(run["uid"]), int(run["gid"])  # type: ignore[call-overload]
        seccomp = run["seccomp"]
        assert isinstance(seccomp, bytes)
        os.setgroups([])
        os.setgid(gid)
        # The bounding set is emptied (and no_new_privs set) while still root; after that the
        # program holds no capability even with uid 0.
        _ns_init.drop_bounding_set()
        os.setuid(uid)
        os.chdir(str(run["cwd"]))
        _lock_down(seccomp)
        argv = run["argv"]
        env = run["env"]
        assert isinstance(argv, list) and isinstance(env, dict)
        os.execve(argv[0], argv, env)
    except BaseException as exc:
        try:
            message = f"python-sb (os-sandbox=qemu guest): cannot start the program: {exc}\n"
            os.write(2, message.encode())
        finally:
            os._exit(127)
    raise AssertionError("unreachable")


def _read_available(fd: int) -> bytes | None:
    """What can be read now (b'' when nothing; None at end of file, or EIO: a terminal's master
    once every descriptor of its slave is closed)."""

    try:
        data = os.read(fd, CHUNK)
    except (BlockingIOError, InterruptedError):
        return b""
    except OSError:
        return None
    return data if data else None


class Relay:
    """The loop of PID 1 once the program runs."""

    def __init__(self, port: Port, pid: int, stdin_w: int, outputs: dict[int, bytes]) -> None:
        self.port = port
        self.pid = pid
        self.stdin_w: int | None = stdin_w
        self.stdin_pending = bytearray()
        self.stdin_eof = False
        self.outputs = outputs  # fd -> frame type
        self.status: int | None = None
        self.master = -1  # the pseudo-terminal's master, when the program has one
        self.stdin_is_terminal = False  # I frames go to the master: E does not close it

    def run(self, wakeup: int) -> int:
        import select

        poller = select.poll
        readable = select.POLLIN | select.POLLHUP | select.POLLERR
        early, self.port.pending = self.port.pending, []
        for kind, payload in early:
            self.host_frame(kind, payload)
        while self.status is None:
            # One mask per descriptor: a terminal's master is both the program's input and its
            # output (registering it twice would replace the first mask).
            masks = dict.fromkeys((self.port.fd, wakeup, *self.outputs), select.POLLIN)
            if self.stdin_w is not None and self.stdin_pending:
                masks[self.stdin_w] = masks.get(self.stdin_w, 0) | select.POLLOUT
            p = poller()
            for fd, mask in masks.items():
                p.register(fd, mask)
            try:
                events = p.poll()
            except InterruptedError:
                events = []
            for fd, event in events:
                if fd == wakeup:
                    _read_available(wakeup)
                elif fd == self.port.fd:
                    for kind, payload in self.port.receive():
                        self.host_frame(kind, payload)
                    continue
                if fd == self.stdin_w and event & select.POLLOUT:
                    self.flush_stdin()
                if fd in self.outputs and event & readable:
                    self.forward(fd)
            self.reap()
        for fd in list(self.outputs):
            while fd in self.outputs:
                self.forward(fd)
        return self.status

    def forward(self, fd: int) -> None:
        data = _read_available(fd)
        if data is None:
            os.close(fd)
            del self.outputs[fd]
        elif data:
            self.port.send(self.outputs[fd], data)
        elif self.status is not None:
            del self.outputs[fd]  # drained; a descendant may hold it open

    def host_frame(self, kind: bytes, payload: bytes) -> None:
        if kind == b"I":
            if self.stdin_w is not None:
                self.stdin_pending += payload
                self.flush_stdin()
        elif kind == b"E":
            if not self.stdin_is_terminal:
                self.stdin_eof = True
                self.flush_stdin()
        elif kind == b"W" and len(payload) == 4 and self.master >= 0:
            rows, columns = int.from_bytes(payload[:2], "big"), int.from_bytes(payload[2:], "big")
            set_window_size(self.master, rows, columns)
        elif kind == b"S" and len(payload) == 1:
            try:  # noqa: SIM105
                os.killpg(self.pid, payload[0])
            except (ProcessLookupError, PermissionError):
                pass
        # R again is ignored.

    def flush_stdin(self) -> None:
        if self.stdin_w is None:
            return
        try:
            while self.stdin_pending:
                written = os.write(self.stdin_w, self.stdin_pending)
                del self.stdin_pending[:written]
        except BlockingIOError:
            return
        except OSError:  # the program closed its stdin
            self.stdin_pending.clear()
        if self.stdin_eof and not self.stdin_pending:
            os.close(self.stdin_w)
            self.stdin_w = None

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                if os.WIFSIGNALED(status):
                    self.status = -os.WTERMSIG(status)
                else:
                    self.status = os.waitstatus_to_exitcode(status)


def forward_loopback(ports: list[int]) -> None:
    """The host's loopback ports that ``OUT`` rules allow, on the guest's 127.0.0.1: each
    connection is relayed to the same port of ``HOST_ALIAS`` (qemu's user-mode network reaches
    the host's loopback there, through the ruleset's namespace), so that a rule naming
    127.0.0.1 means the host's service under qemu too."""

    import socket
    import threading

    def pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(CHUNK)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
                try:  # noqa: SIM105
                    sock.shutdown(how)
                except OSError:
                    pass

    def serve_port(listener: socket.socket, number: int) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                continue
            try:
                upstream = socket.create_connection((HOST_ALIAS, number), timeout=30)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    for number in ports:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", number))
        listener.listen(64)
        threading.Thread(target=serve_port, args=(listener, number), daemon=True).start()


def denials_pipe(path: str) -> int:
    """``--denials=FILE`` in the guest: a FIFO bound over ``path`` (a placeholder in the shared
    tree; the host's file is not in the VM), whose lines go back as ``D`` frames; its read end.
    PID 1 also holds a write end, so that the guard opening and closing it for each line never
    leaves the FIFO without a writer (no end of file, no busy poll)."""

    fifo = "/dev/.pysb-denials"
    os.mkfifo(fifo, 0o600)
    _mount(fifo, path, "none", MS_BIND)
    reader = _high(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    _high(os.open(fifo, os.O_WRONLY))  # kept open until the VM ends
    return reader


def serve(port: Port) -> None:
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    build_dev()
    port.send(b"B")
    run = port.receive_run()
    try:
        _ns_init.sc("sethostname", os.fsencode(str(run["hostname"])), len(str(run["hostname"])))
    except OSError as exc:
        raise GuestError(f"sethostname: {exc.strerror}") from None
    ports = run["loopback_tcp"]
    assert isinstance(ports, list)
    if ports:
        forward_loopback(ports)
    extra: dict[int, int] = {}
    run_fd = int(run["run_fd"])  # type: ignore[call-overload]
    memfd = _high(os.memfd_create("pysandboxes-run", 0))
    data = run["run_data"]
    assert isinstance(data, bytes)
    view = memoryview(data)
    while view:
        view = view[os.write(memfd, view) :]
    os.lseek(memfd, 0, os.SEEK_SET)
    extra[run_fd] = memfd
    outputs: dict[int, bytes] = {}
    record_fd = int(run["record_fd"])  # type: ignore[call-overload]
    if record_fd >= 0:
        record_r, record_w = (_high(fd) for fd in os.pipe())
        extra[record_fd] = record_w
        outputs[record_r] = b"L"
    denials = str(run["denials_path"])
    if denials:
        outputs[denials_pipe(denials)] = b"D"
    terminal = run["tty"]
    assert isinstance(terminal, list)
    master, slave = open_terminal(run) if terminal else (-1, -1)
    stdio: list[int] = []
    readers: list[int] = []  # the read ends of the pipes, kept in the relay
    for fd in (0, 1, 2):
        if fd in terminal:
            stdio.append(slave)
            readers.append(-1)
            continue
        r, w = (_high(end) for end in os.pipe())
        stdio.append(r if fd == 0 else w)
        readers.append(w if fd == 0 else r)
    pid = start_program(run, (stdio[0], stdio[1], stdio[2]), extra, terminal=slave)
    for fd in {*stdio, memfd, *([extra[record_fd]] if record_fd >= 0 else [])}:
        os.close(fd)
    stdin_w = master if 0 in terminal else readers[0]
    if readers[1] >= 0:
        outputs[readers[1]] = b"O"
    if readers[2] >= 0:
        outputs[readers[2]] = b"e"
    if master >= 0:
        outputs[master] = b"T"
    for fd in (*outputs, stdin_w):
        os.set_blocking(fd, False)
    wake_r, wake_w = (_high(fd) for fd in os.pipe())
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    _signal.signal(_signal.SIGCHLD, lambda *_: None)
    _signal.set_wakeup_fd(wake_w)
    relay = Relay(port, pid, stdin_w, outputs)
    relay.master = master
    relay.stdin_is_terminal = 0 in terminal
    status = relay.run(wake_r)
    os.sync()  # the program's writes to read-write exposures reach the host before X
    port.send(b"X", frames.encode_status(status))


def main(fd: int) -> None:
    """Entry point (``/init`` passes the port on ``fd``)."""

    for std in (0, 1, 2):  # the console; /dev/null when the kernel gave none
        try:
            os.fstat(std)
        except OSError:
            os.dup2(os.open("/dev/null", os.O_RDWR), std)
    port = Port(_high(fd))
    try:
        serve(port)
    except BaseException as exc:
        message = f"{type(exc).__name__}: {exc}" if not isinstance(exc, GuestError) else str(exc)
        try:
            port.send(b"F", message.encode("utf-8", "replace"))
        except OSError:
            os.write(2, f"python-sb guest: {message}\n".encode())
    finally:
        try:
            os.sync()
        finally:
            _reboot()
            os._exit(1)
    sys.exit(0)
