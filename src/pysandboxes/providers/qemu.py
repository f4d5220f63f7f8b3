"""``os-sandbox=qemu``: the program runs in a disposable virtual machine, under another kernel.

The guest boots a distribution kernel with an initramfs built once from installed files
(``_qemu_kernel``; never a download at run time). Its root file system is the namespace
providers' tree (``_ns_mounts``: only the interpreter, the system trees, the generated /etc files
and the exposed paths, read-only or read-write as the rules say, ``ignore=`` entries absent),
built on the host in qemu's own mount namespace and exported as one 9p share. The guest runs the
host's own interpreter, so the Python layer runs unchanged inside. Everything else the program
does vanishes with the VM.

Processes: python-sb supervises the **host relay** (``_qemu_host``, a ``python -I -S`` step),
which builds the tree, starts qemu (its own user and mount namespaces, a new session, no
capability, ``no_new_privs``, ``-sandbox on``, death with the relay) and relays stdin, stdout,
stderr, signals, the learning records and the exit status over one virtio-serial port
(``_qemu_frames``); in the guest, ``_qemu_guest`` is PID 1.

Network: no ``net=`` rule, no network device at all. With rules, the relay joins the network
namespace ``netns`` builds (nftables ruleset + pasta) before starting qemu, whose user-mode
network (slirp) then opens its sockets there: the ruleset filters every connection on the host
side.

Accelerator (``qemu.accel``): ``auto`` uses KVM when ``/dev/kvm`` is usable for an ordinary
guest, else software emulation (TCG, seconds per start) with a warning.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.errors import ConfigError, ConfigProblem, ProviderUnavailableError
from pysandboxes.policy.model import Policy
from pysandboxes.providers import _ns_common
from pysandboxes.providers.base import Availability, Launch, Prepared, Provider

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import TextIO

    from pysandboxes.providers._ns_mounts import Mount
    from pysandboxes.providers._qemu_kernel import Artefacts
    from pysandboxes.providers._qemu_state import Choice
    from pysandboxes.providers.limits import Notice
    from pysandboxes.providers.netns import Network

QEMU = "qemu-system-x86_64"
DEFAULT_MEMORY = "512M"
DEFAULT_CPUS = "1"
#: Seconds the guest has to say it is up before the boot watchdog ends the run.
BOOT_TIMEOUT = {"kvm": 20.0, "tcg": 120.0}
#: Where the guest's DNS goes (qemu's user-mode network) and the guest's address.
GUEST_RESOLVER = "10.0.2.3"
HOST_ALIAS = "10.0.2.2"
GUEST_ADDRESS = "10.0.2.15"
#: Most ports forwarded into the guest (one qemu hostfwd each).
MAX_FORWARDS = 64
SRC_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST_CODE = (
    "import sys; sys.path.insert(0, {src!r}); "
    "from pysandboxes.providers._qemu_host import main; main()"
)


class SignalForward:
    """The :class:`~pysandboxes.providers.base.SignalRelay` of qemu runs: every signal the
    program should see, sent to python-sb by a process, goes on to the host relay, which sends
    it into the guest as an ``S`` frame. A terminal's signals (Ctrl-C, Ctrl-\\, hang-up)
    already reach the relay, which shares python-sb's process group (qemu does not: it has its
    own session)."""

    def __init__(self) -> None:
        import _signal  # type: ignore[import-not-found]  # ``signal`` imports ``enum``

        self.signals: tuple[int, ...] = tuple(
            getattr(_signal, name)
            for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
        )
        self.pid = 0

    def started(self, pid: int) -> None:
        self.pid = pid

    def deliver(self, signum: int, from_terminal: bool) -> None:
        if from_terminal or not self.pid:
            return
        try:  # noqa: SIM105 (contextlib costs start-up time)
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        self.pid = 0


def qemu_binary() -> str | None:
    return _ns_common.which(QEMU)


# -- the accelerator ------------------------------------------------------------------------------


def kvm_problem() -> str:
    """Why KVM cannot run an ordinary guest kernel here ('' when it can)."""

    if not os.path.exists("/dev/kvm"):
        return "/dev/kvm does not exist"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "/dev/kvm is not readable and writable by this user (the kvm group on Debian)"
    if os.path.isdir("/sys/module/kvm_pvm"):
        return (
            "/dev/kvm is PVM (pagetable-based virtualisation), which boots only PVM-enabled "
            "guest kernels"
        )
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    if "vmx" not in flags and "svm" not in flags:
                        return "the CPU shows no hardware virtualisation (vmx/svm)"
                    break
    except OSError:
        pass
    return ""


def choose_accelerator(requested: str) -> tuple[str, str]:
    """``(accelerator, warning)`` for ``qemu.accel``; ``ProviderUnavailableError`` when ``kvm``
    is asked for and cannot work."""

    if requested == "tcg":
        return "tcg", ""
    problem = kvm_problem()
    if requested == "kvm":
        if problem:
            raise ProviderUnavailableError(f"os-sandbox=qemu: qemu.accel=kvm: {problem}")
        return "kvm", ""
    if problem:
        return "tcg", problem
    return "kvm", ""


def tsc_khz() -> int:
    """The host's TSC frequency in kHz (from /proc/cpuinfo), 0 when unknown. Under TCG the
    guest's TSC runs at the host's rate; giving it spares a calibration that a loaded host can
    spoil (the microvm machine has no other reference clock)."""

    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("cpu MHz"):
                    return int(float(line.split(":", 1)[1]) * 1000)
    except (OSError, ValueError):
        pass
    return 0


# -- the command line -----------------------------------------------------------------------------


def qemu_argv(
    *,
    qemu: str,
    accel: str,
    kernel: str,
    initrd: str,
    memory: str,
    cpus: str,
    export: str,
    console: str,
    python: str,
    src: str,
    network: bool = False,
    forwards: Sequence[tuple[str, int]] = (),
    tsc: int = 0,
) -> list[str]:
    """qemu's command: a microvm with no default device, the kernel and initramfs, the 9p
    export, the ``pysb`` port on ``{port_fd}`` (the relay's end of a socketpair), a network
    device only when ``network``, and qemu's own seccomp filter. Nothing of the run is on the
    kernel command line (a saved state is restored whatever it says): ``python`` and ``src``
    go to ``/init`` on the port (:func:`params_line`), and are checked here for that line."""

    for name, value in (("interpreter", python), ("source directory", src)):
        if any(ch.isspace() or ch in "'\"\\" for ch in value):
            raise ConfigError(
                f"os-sandbox=qemu: the {name} path {value!r} holds blanks or quotes, which "
                "the guest's /init cannot read from its parameter line"
            )
    append = [
        "console=ttyS0",
        "quiet",
        "loglevel=3",
        "reboot=t",
        "panic=-1",
        # The kernel's self-tests of its crypto implementations: a third of a second of boot
        # under TCG, and nothing the guest relies on (they test the kernel build, not the run).
        "cryptomgr.notests",
    ]
    if accel == "tcg" and tsc:
        append.insert(5, f"tsc_early_khz={tsc}")
    machine = "microvm,x-option-roms=off"
    argv = [
        qemu,
        "-nodefaults",
        "-no-user-config",
        "-nographic",
        "-no-reboot",
        "-M",
        machine,
        "-accel",
        "kvm" if accel == "kvm" else "tcg",
        "-cpu",
        "host" if accel == "kvm" else "max",
        "-m",
        memory,
        "-smp",
        cpus,
        "-kernel",
        kernel,
        "-initrd",
        initrd,
        "-append",
        " ".join(append),
        "-chardev",
        f"file,id=con,path={console}",
        "-serial",
        "chardev:con",
        "-fsdev",
        f"local,id=root,path={export},security_model=none,multidevs=remap",
        "-device",
        "virtio-9p-device,fsdev=root,mount_tag=pysbroot",
        "-chardev",
        "socket,id=port,fd={port_fd}",
        "-device",
        "virtio-serial-device",
        "-device",
        "virtserialport,chardev=port,name=pysb",
    ]
    if network:
        netdev = "user,id=net,ipv6=off"
        for proto, port in forwards:
            netdev += f",hostfwd={proto}::{port}-:{port}"
        argv += ["-netdev", netdev, "-device", "virtio-net-device,netdev=net"]
    argv += [
        "-sandbox",
        "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
    ]
    return argv


def params_line(python: str, src: str) -> str:
    """The line ``/init`` reads on the port before it mounts the tree (``qemu_argv`` checked
    that neither path holds a blank or a quote)."""

    return f"{python} {src}"


def _forwards(network: Network) -> list[tuple[str, int]]:
    """The ``IN`` ports (already forwarded by pasta from the host's loopback into the network
    namespace), forwarded on into the guest by qemu."""

    out: list[tuple[str, int]] = []
    for proto, forwards in (("tcp", network.plan.tcp_in), ("udp", network.plan.udp_in)):
        for _address, ranges in forwards:  # pasta binds the host's address; qemu every one
            for lo, hi in ranges:
                out += [(proto, port) for port in range(lo, hi + 1) if (proto, port) not in out]
    if len(out) > MAX_FORWARDS:
        raise ConfigError(
            f"os-sandbox=qemu: the IN rules open {len(out)} ports; at most {MAX_FORWARDS} can "
            "be forwarded into the VM (one qemu forward each)"
        )
    return out


def _ports(ranges: Sequence[tuple[int, int]]) -> list[int]:
    """The ports of ``ranges`` (the host's loopback ports OUT rules allow), forwarded by the
    guest's init from its own 127.0.0.1."""

    out = [port for lo, hi in ranges for port in range(lo, hi + 1)]
    if len(out) > MAX_FORWARDS:
        raise ConfigError(
            f"os-sandbox=qemu: the OUT rules to the host's loopback open {len(out)} ports; at "
            f"most {MAX_FORWARDS} can be forwarded from the VM's 127.0.0.1"
        )
    return out


class FirstRunProgress:
    """What a first run prints while it builds (seconds, where later runs say nothing): one
    ``python-sb: qemu: ...`` line per step on the standard error, and a last one before the
    boot once anything was said (issue 29: the first run was 13 s of silence)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.said = False

    def __call__(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        try:
            stream.write(f"python-sb: qemu: {text}\n")
            stream.flush()
        except (OSError, ValueError, AttributeError):  # no usable stderr: progress is optional
            return
        self.said = True

    def warn(self, text: str) -> None:
        """One line that is not a step of the build (a saved state that cannot be used)."""

        said = self.said
        self(text)
        self.said = said

    def booting(self, accel: str) -> None:
        if self.said:
            slow = " (software emulation: seconds)" if accel == "tcg" else ""
            self(f"booting the VM{slow}; later runs start from the cache")


def compile_ahead(src: str = SRC_DIR, progress: Callable[[str], None] | None = None) -> list[str]:
    """Write the package's byte code on the host where it is missing or older than its source;
    the files compiled. The guest reads the package through a read-only share, where its
    interpreter cannot store byte code: each missing file would be compiled again at every run,
    and compiling costs about thirty times more under TCG (a tenth of a second for the guest's
    init alone). As python-sb's own helper steps (started with ``-I``) already do, this ignores
    ``PYTHONDONTWRITEBYTECODE``: it concerns the package's own files. Nothing is written where
    the package's directories are not writable (an installed package is compiled by its
    installer). ``progress(text)`` is told before anything is compiled."""

    tag = sys.implementation.cache_tag
    if tag is None:
        return []
    stale: list[str] = []
    folders = [os.path.join(src, "pysandboxes")]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
            compiled = {
                e.name: e.stat().st_mtime_ns
                for e in os.scandir(os.path.join(folder, "__pycache__"))
            }
        except FileNotFoundError:
            compiled = {}
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    folders.append(entry.path)
            elif entry.name.endswith(".py"):
                done = compiled.get(f"{entry.name[:-3]}.{tag}.pyc")
                if done is None or done < entry.stat().st_mtime_ns:
                    stale.append(entry.path)
    written: list[str] = []
    if stale and os.access(os.path.dirname(stale[0]), os.W_OK):
        import py_compile

        if progress is not None:
            progress(f"compiling {len(stale)} of python-sb's modules for the guest (once)")

        for path in stale:
            try:
                py_compile.compile(path, doraise=True)
            except (OSError, py_compile.PyCompileError):
                continue
            written.append(path)
    return written


def saved_state(
    policy: Policy,
    argv: list[str],
    workdir: str,
    files: list[str],
    *,
    network: bool,
    accel: str,
    memory: str,
    cpus: str,
    progress: FirstRunProgress,
) -> Choice:
    """Whether this run restores the saved VM state, saves one, or boots cold as before
    (another configuration, or ``qemu.saved-state=false``)."""

    from pysandboxes.providers import _qemu_state

    # A custom initramfs may not speak /init's side of the save (the P frame): it boots cold.
    setting = _param(policy, "saved-state", "true") == "true"
    setting = setting and policy.provider_param("qemu", "initrd") is None
    if not _qemu_state.eligible(
        network=network, accel=accel, memory=memory, cpus=cpus, setting=setting
    ):
        return _qemu_state.Choice()
    key = _qemu_state.state_key(argv, workdir, files)
    return _qemu_state.choose(key, progress=progress, warn=progress.warn)


def _param(policy: Policy, name: str, default: str) -> str:
    line = policy.provider_param("qemu", name)
    return default if line is None else line.value


# -- the provider ---------------------------------------------------------------------------------


class QemuProvider(Provider):
    name = "qemu"
    kernel = True
    contains_processes = True  # its own PID namespace (in the VM)
    passes_descriptors = False  # the VM has its own kernel: only the relay's channel crosses

    def availability(self) -> Availability:
        from pysandboxes.providers import _qemu_kernel
        from pysandboxes.providers._ns_probe import cached_namespace_problem
        from pysandboxes.providers.unshare import MIN_KERNEL, kernel_version

        if os.uname().machine != "x86_64":
            return Availability(False, "os-sandbox=qemu supports x86_64 hosts only")
        if qemu_binary() is None:
            return Availability(False, f"{QEMU} is not installed", _qemu_kernel.INSTALL_HINT)
        if _qemu_kernel.find_busybox() is None:
            return Availability(
                False,
                "no statically linked busybox (the guest's initramfs needs one)",
                _qemu_kernel.INSTALL_HINT,
            )
        if kernel_version() < MIN_KERNEL:
            return Availability(
                False, f"Linux {os.uname().release} lacks mount_setattr (needs >= 5.12)"
            )
        reason, hint = cached_namespace_problem()
        if reason:
            return Availability(False, reason, hint)
        try:
            _qemu_kernel.find_kernel()
        except ProviderUnavailableError as exc:
            return Availability(False, str(exc), _qemu_kernel.INSTALL_HINT)
        return Availability(True)

    def artefacts(
        self, policy: Policy, network: bool, progress: Callable[[str], None] | None = None
    ) -> Artefacts:
        """The kernel and initramfs to boot (built into the cache on first use, told to
        ``progress``)."""

        from pysandboxes.providers import _qemu_kernel

        busybox = _qemu_kernel.find_busybox()
        if busybox is None:
            raise ProviderUnavailableError(
                "os-sandbox=qemu: no statically linked busybox; " + _qemu_kernel.INSTALL_HINT
            )
        explicit = policy.provider_param("qemu", "kernel")
        try:
            kernel = _qemu_kernel.find_kernel(explicit.value if explicit else None)
        except ProviderUnavailableError as exc:
            if explicit is None:
                raise
            # The line that chose this kernel, not "<config>": the command line's is <arg>.
            problems = [ConfigProblem(str(explicit.origin), p.message) for p in exc.problems]
            raise ProviderUnavailableError(problems) from None
        built = _qemu_kernel.prepare_artefacts(kernel, busybox, network=network, progress=progress)
        initrd = policy.provider_param("qemu", "initrd")
        if initrd is not None:
            if not os.access(initrd.value, os.R_OK):
                raise _ns_common.rule_error(
                    initrd.origin, initrd.text, f"{initrd.value} is not readable"
                )
            built = _qemu_kernel.Artefacts(built.kernel, initrd.value, built.pvh)
        return built

    def prepare(self, launch: Launch) -> Prepared:
        import marshal

        from pysandboxes.providers import _qemu_frames, _qemu_host
        from pysandboxes.providers._ns_mounts import build_plan

        policy = launch.policy
        qemu = qemu_binary()
        if qemu is None:
            raise ProviderUnavailableError(f"os-sandbox=qemu: {QEMU} is not installed")
        if not launch.child_argv or not os.path.isabs(launch.child_argv[0]):
            raise ConfigError("os-sandbox=qemu: the interpreter path must be absolute")
        accel, kvm_reason = choose_accelerator(_param(policy, "accel", "auto"))
        progress = FirstRunProgress()
        compile_ahead(progress=progress)
        hostname = _ns_common.hostname(policy, self.name)
        artefacts = self.artefacts(policy, network=bool(policy.net), progress=progress)
        learning = launch.context.mode != "enforce"
        if learning:
            launch = learning_launch(launch)
        network = _ns_common.start_network(policy, self.name, launch.context.denials_file)
        workdir = _work_directory(launch.context.tmpdir)
        state = None
        try:
            forwards = _forwards(network) if network else []
            plan = build_plan(
                launch,
                hostname=hostname,
                pinned=network.pinned if network else (),
                resolver=GUEST_RESOLVER if network else None,
            )
            export = os.path.join(workdir, "root")
            scratch = os.path.join(workdir, "scratch")
            os.mkdir(export)
            os.mkdir(scratch)
            console = os.path.join(workdir, "console.log")
            python = os.path.realpath(launch.child_argv[0])
            memory = _param(policy, "memory", DEFAULT_MEMORY)
            cpus = _param(policy, "cpus", DEFAULT_CPUS)
            argv = qemu_argv(
                qemu=qemu,
                accel=accel,
                kernel=artefacts.kernel,
                initrd=artefacts.initrd,
                memory=memory,
                cpus=cpus,
                export=export,
                console=console,
                python=python,
                src=SRC_DIR,
                network=network is not None,
                forwards=forwards,
                tsc=tsc_khz() if accel == "tcg" else 0,
            )
            state = saved_state(
                policy,
                argv,
                workdir,
                [qemu, artefacts.kernel, artefacts.initrd],
                network=network is not None,
                accel=accel,
                memory=memory,
                cpus=cpus,
                progress=progress,
            )
            progress.booting(accel)
            run_fd = launch.pass_fds[0] if launch.pass_fds else -1
            terminals = [fd for fd in (0, 1, 2) if os.isatty(fd)]
            denials = launch.context.denials_file
            denials = os.path.abspath(denials) if denials else ""
            run = {
                "format": _qemu_frames.RUN_FORMAT,
                "argv": list(launch.child_argv),
                "env": dict(launch.env),
                "cwd": launch.cwd,
                "uid": os.getuid(),
                "gid": os.getgid(),
                "hostname": hostname,
                "run_fd": run_fd,
                "run_data": _read_fd(run_fd) if run_fd >= 0 else b"",
                "record_fd": launch.context.record_fd,
                "denials_path": denials,
                "tty": terminals,
                "winsize": _window_size(terminals),
                "seccomp": _ns_common.seccomp_program() or b"",
                "net": network is not None,
                "loopback_tcp": _ports(network.plan.tcp_to_host) if network else [],
            }
            resolv = b""
            if network is not None and network.resolver:
                resolv = f"nameserver {network.resolver}\n".encode()
            spec = {
                "format": _qemu_host.SPEC_FORMAT,
                "mounts": [_guest_mount(m, denials) for m in plan.mounts],
                "export": export,
                "scratch": scratch,
                "join_user": network.join_user if network else "",
                "join_net": network.join_net if network else "",
                "resolv_conf": resolv,
                "qemu_argv": argv,
                "run": _qemu_frames.encode_run(run),
                "record_fd": launch.context.record_fd,
                "denials": denials,
                "tty": terminals,
                "boot_timeout": float(_param(policy, "boot-timeout", str(BOOT_TIMEOUT[accel]))),
                "console": console,
                "qemu_log": os.path.join(workdir, "qemu.log"),
                "parent_pid": os.getpid(),
                "uid": os.getuid(),
                "gid": os.getgid(),
                "params": params_line(python, SRC_DIR),
                "state_fd": state.fd,
                "state_path": state.path,
                "state_save": state.save,
                "state_header": state.header,
            }
            spec_fd = _ns_common.data_fd(marshal.dumps(spec, 4), "qemu-spec")
        except BaseException:
            if network:
                network.stop()
            if state is not None:
                state.close()
            _remove(workdir)
            raise
        warnings = list(plan.warnings) + (list(network.plan.warnings) if network else [])
        notices = qemu_notices(
            policy,
            kvm_reason=kvm_reason if accel == "tcg" else "",
            terminal=any(os.isatty(fd) for fd in (0, 1, 2)),
        )
        warnings += [f"qemu: {item.text}" for item in notices if item.at_start]
        if learning:
            warnings.append(
                f"qemu: {launch.context.mode} mode runs in the VM: it holds the rules' exposures "
                "plus the working directory and the program's directory, read-only; what the "
                "program does vanishes with the VM"
            )
        cleanup = [lambda: _remove(workdir), state.close]
        if network is not None:
            cleanup.insert(0, network.stop)
        pass_fds = [spec_fd] + ([state.fd] if state.fd >= 0 else [])
        if launch.context.record_fd >= 0:
            pass_fds.append(launch.context.record_fd)
        return Prepared(
            argv=[sys.executable, "-I", "-S", "-c", HOST_CODE.format(src=SRC_DIR), str(spec_fd)],
            env=dict(launch.env),
            pass_fds=tuple(pass_fds),
            needs_parent=True,
            cleanup=cleanup,
            warnings=warnings,
            relay=SignalForward(),
        )

    def announcements(self, policy: Policy, mode: str) -> list[Notice]:
        """The namespace providers' notices (the VM's tree is their mount plan) and the VM's
        own (no KVM, a terminal, the network relays)."""

        from pysandboxes.providers import limits

        return [
            *limits.namespace_notices(policy, self.name),
            *qemu_notices(
                policy,
                kvm_reason=tcg_reason(policy),
                terminal=any(os.isatty(fd) for fd in (0, 1, 2)),
            ),
        ]

    def explain(self, policy: Policy) -> Sequence[str]:
        lines = [
            "os-sandbox=qemu: the program runs in a disposable VM under its own kernel; its root "
            "is one 9p share of the namespace providers' tree (only the interpreter, system "
            "files and exposed paths); qemu runs unprivileged in its own namespaces with "
            "-sandbox on",
            f"  read-only: {len(policy.expose_ro)} exposure(s); read-write: "
            f"{len(policy.expose_rw)}; rule files read-only inside exposures",
        ]
        if policy.net:
            lines.append(
                "  network: qemu's user-mode network inside the nftables + pasta network "
                "namespace of the net= rules (filtered on the host side; the guest is 10.0.2.15 "
                f"on 10.0.2.0/24, the host's loopback is {HOST_ALIAS})"
            )
            from pysandboxes.providers.net_enforcement import explain_lines as net_lines

            lines += net_lines(policy, self.name)
        else:
            lines.append("  network: no network device (no net= rule); loopback only")
        return lines


def _work_directory(tmpdir: str | None) -> str:
    """The run's directory on the host (the export's mount point, the console log), beside the
    run's private temporary directory ``tmpdir`` and named after it (``pysb-<pid>-<hex>-qemu-
    <hex>``): when python-sb is killed and cannot remove it, the next run's sweep of
    finished runs' directories removes it too (``launch/tmpdir.sweep`` goes by the prefix and
    the pid). Not inside ``tmpdir``, which the program can write."""

    if not tmpdir:
        raise OSError("the qemu provider needs the run's private temporary directory")
    for _ in range(100):
        path = f"{tmpdir.rstrip(os.sep)}-qemu-{os.urandom(5).hex()}"
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"could not create a directory for the VM beside {tmpdir}")


def _window_size(terminals: list[int]) -> list[int]:
    """``[rows, columns]`` of python-sb's terminal ([] without one)."""

    for fd in terminals:
        try:
            size = os.get_terminal_size(fd)
        except OSError:
            continue
        return [size.lines, size.columns]
    return []


def _guest_mount(mount: Mount, denials: str) -> list[object]:
    """One entry of the mount plan as the relay's spec carries it. The ``--denials`` file, which
    the namespace providers bind read-write, is an empty placeholder in the VM's tree instead:
    the guest binds a pipe over it and the lines come back over the channel (``D`` frames), so
    the host's file is never in the VM."""

    if denials and mount.kind == "bind" and mount.dest == denials:
        return ["file", mount.dest, "", b"", 0o600]
    return [mount.kind, mount.dest, mount.source, mount.data, mount.mode]


def learning_launch(launch: Launch) -> Launch:
    """A learning or audit run: the VM also holds the working directory and the script's
    directory, read-only, so that the program can start and its accesses be recorded (the
    Python layer records every access before the guest kernel answers it)."""

    from pysandboxes.policy.model import Origin, PathRule

    policy = launch.policy
    paths = [launch.cwd]
    program = launch.context.program
    if launch.context.program_kind == "script" and program:
        paths.append(os.path.dirname(os.path.realpath(program)))
    known = {rule.path for rule in (*policy.expose_ro, *policy.expose_rw)}
    extra = tuple(
        PathRule("expose-ro", os.path.realpath(path), Origin(None))
        for path in dict.fromkeys(paths)
        if os.path.realpath(path) not in known and os.path.realpath(path) != "/"
    )
    if not extra:
        return launch
    return Launch(
        policy=policy.replace(expose_ro=(*policy.expose_ro, *extra)),
        context=launch.context,
        child_argv=launch.child_argv,
        env=launch.env,
        pass_fds=launch.pass_fds,
        cwd=launch.cwd,
    )


def tcg_reason(policy: Policy) -> str:
    """Why a run of ``policy`` uses TCG under ``qemu.accel=auto`` ('' otherwise)."""

    try:
        accel, reason = choose_accelerator(_param(policy, "accel", "auto"))
    except ProviderUnavailableError as exc:
        return str(exc)
    return reason if accel == "tcg" else ""


def qemu_notices(policy: Policy, *, kvm_reason: str, terminal: bool = True) -> list[Notice]:
    """The qemu-specific notices of ``providers/limits.py`` for ``policy`` (``terminal``: the
    run has a terminal the program will not see as one)."""

    from pysandboxes.providers import limits

    python_layer = bool(policy.py_sandbox.value)
    found = [limits.notice("qemu.terminal", python_layer)] if terminal else []
    if kvm_reason:
        found.append(limits.notice("qemu.no-kvm", python_layer, reason=kvm_reason))
    if any(
        rule.direction in ("OUT", "*") and rule.proto != "TCP" and _names_loopback(rule.host)
        for rule in policy.net
    ):
        found.append(limits.notice("net.qemu-host-loopback", python_layer, alias=HOST_ALIAS))
    for rule in policy.net:
        if (
            rule.action == "ALLOW"
            and rule.direction in ("OUT", "*")
            and rule.proto != "UDP"
            and rule.host == "::1"
        ):
            found.append(
                limits.notice(
                    "net.qemu-host-ipv6-loopback", python_layer, rule=rule.text, origin=rule.origin
                )
            )
            break  # one rule named is enough: the limit is the same for all
    for rule in policy.net:
        if rule.action == "ALLOW" and rule.direction in ("IN", "*") and _names_loopback(rule.host):
            found.append(
                limits.notice(
                    "net.qemu-in-loopback",
                    python_layer,
                    rule=rule.text,
                    origin=rule.origin,
                    guest=GUEST_ADDRESS,
                )
            )
            break  # one rule named is enough: the limit is the same for all
    if policy.expose_rw:
        found.append(limits.notice("qemu.unix-socket-paths", python_layer))
    return found


def _names_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _remove(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


PROVIDER = QemuProvider()
