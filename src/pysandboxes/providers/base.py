"""The interface every ``os-sandbox`` provider implements (DESIGN decision 5).

A provider answers two questions: can it run here (and if not, why and what to install), and, for
a given policy and launch, what command to ``exec`` and what to apply to ``python-sb``'s own
process just before (Landlock, seccomp, ``no_new_privs``). It never runs the program itself: the
launcher does, so that exit statuses and signals stay native (DESIGN decision 4).

This module is on the start-up path of every run: hand-written records (as in
``pysandboxes.errors``), no ``dataclasses`` and no ``typing`` at run time (DESIGN decision 7).
"""

from __future__ import annotations

from pysandboxes.record import Record as _Record

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, Protocol

    from pysandboxes.policy.model import Policy
    from pysandboxes.providers.limits import Notice
    from pysandboxes.runtime import RunContext

_set = object.__setattr__


if TYPE_CHECKING:
    from functools import cache

    memo = cache  # what type checkers see: the same contract
else:

    class memo:  # used as a decorator, like functools.cache
        """``functools.cache`` for the providers' probes (positional, hashable arguments), without
        importing ``functools`` on the start-up path; ``cache_clear()`` as there."""

        __slots__ = ("_function", "_results")

        def __init__(self, function: Callable[..., Any]) -> None:
            self._function = function
            self._results: dict[tuple[Any, ...], Any] = {}

        def __call__(self, *args: Any) -> Any:
            try:
                return self._results[args]
            except KeyError:
                result = self._results[args] = self._function(*args)
                return result

        def cache_clear(self) -> None:
            self._results.clear()


class Availability(_Record):
    """Whether a provider can run on this machine; when not, why and what to install."""

    __slots__ = ("install_hint", "ok", "reason")
    _fields = ("ok", "reason", "install_hint")
    ok: bool
    reason: str
    install_hint: str

    def __init__(self, ok: bool, reason: str = "", install_hint: str = "") -> None:
        _set(self, "ok", ok)
        _set(self, "reason", reason)
        _set(self, "install_hint", install_hint)

    def __bool__(self) -> bool:
        return self.ok


class Launch(_Record):
    """What the launcher asks a provider to contain.

    ``child_argv`` is the complete command of the sandboxed interpreter (``python [options]
    .../launch/boot.py CHILD FD SRC``), already built by the launcher; a wrapping provider
    (``bwrap``) puts its own command in front. ``pass_fds`` must stay open in the child (the policy
    descriptor, the learning channel). ``env`` is the child's whole environment, already filtered
    by ``env=``.
    """

    __slots__ = ("child_argv", "context", "cwd", "env", "pass_fds", "policy")
    _fields = ("policy", "context", "child_argv", "env", "pass_fds", "cwd")
    policy: Policy
    context: RunContext
    child_argv: tuple[str, ...]
    env: Mapping[str, str]
    pass_fds: tuple[int, ...]
    cwd: str

    def __init__(
        self,
        policy: Policy,
        context: RunContext,
        child_argv: tuple[str, ...],
        env: Mapping[str, str],
        pass_fds: tuple[int, ...] = (),
        cwd: str = "/",
    ) -> None:
        _set(self, "policy", policy)
        _set(self, "context", context)
        _set(self, "child_argv", child_argv)
        _set(self, "env", env)
        _set(self, "pass_fds", pass_fds)
        _set(self, "cwd", cwd)

    def __hash__(self) -> int:  # env is a mapping: compare launches, do not hash them
        raise TypeError("unhashable type: 'Launch'")


class Prepared:
    """A provider's answer: the command to exec and what to do in-process first.

    - ``argv``/``env``: exec'd with ``os.execve`` (or spawned when ``needs_parent``).
    - ``pre_exec``: callables run, in order, in ``python-sb``'s own process right before exec
      (``landlock_restrict_self``, seccomp, ``no_new_privs``); when the launcher spawns, they run in
      the child between fork and exec.
    - ``needs_parent``: ``python-sb`` must stay as a supervisor (a network helper, a VM).
    - ``cleanup``: run by the supervisor after the child ended, on every exit path.
    - ``warnings``: said on stderr at start (for example what Landlock cannot enforce).
    - ``relay``: when the spawned command does not pass signals on to the program (bubblewrap),
      the object the supervisor hands them to instead (see :class:`SignalRelay`); set with
      ``needs_parent``.

    Mutable (a provider may fill it in steps); compared by value.
    """

    __slots__ = (
        "argv",
        "cleanup",
        "env",
        "needs_parent",
        "pass_fds",
        "pre_exec",
        "relay",
        "warnings",
    )
    _fields = (
        "argv",
        "env",
        "pass_fds",
        "pre_exec",
        "needs_parent",
        "cleanup",
        "warnings",
        "relay",
    )

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        pass_fds: tuple[int, ...] = (),
        pre_exec: list[Callable[[], None]] | None = None,
        needs_parent: bool = False,
        cleanup: list[Callable[[], None]] | None = None,
        warnings: list[str] | None = None,
        relay: SignalRelay | None = None,
    ) -> None:
        self.argv = argv
        self.env = env
        self.pass_fds = pass_fds
        self.pre_exec: list[Callable[[], None]] = [] if pre_exec is None else pre_exec
        self.needs_parent = needs_parent
        self.cleanup: list[Callable[[], None]] = [] if cleanup is None else cleanup
        self.warnings: list[str] = [] if warnings is None else warnings
        self.relay = relay

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"Prepared({args})"


if TYPE_CHECKING:

    class SignalRelay(Protocol):
        """Delivers to the program the signals python-sb receives, when the command between them
        (bubblewrap) would not."""

        #: The signals the supervisor watches and hands to :meth:`deliver`.
        signals: tuple[int, ...]

        def started(self, pid: int) -> None:
            """The command runs as ``pid`` (python-sb's child)."""

        def deliver(self, signum: int, from_terminal: bool) -> None:
            """Send ``signum`` on; ``from_terminal``: the terminal generated it (Ctrl-C,
            hang-up), rather than a process's ``kill``."""

        def close(self) -> None:
            """The run is over: release what the relay holds."""

    class ProviderImpl(Protocol):
        """One ``os-sandbox`` value (:class:`Provider` gives the defaults)."""

        name: str
        #: True when the provider puts a kernel (or VM) boundary around the program.
        kernel: bool
        #: True when nothing is exec'd: the launcher runs the program in its own interpreter
        #: (``none``); a partial-mode worker cannot be started by such a provider.
        in_process: bool
        #: Whether the launcher's descriptors reach the program (a worker needs its socket).
        passes_descriptors: bool
        #: Whether the program's processes end with it (a PID namespace of its own, a VM).
        contains_processes: bool
        #: Where the edge proxy (issue 32) stands for this provider: ``"netns"`` (the sandbox's
        #: network namespace is redirected to it: ``secret=`` works), ``"variables"`` (a host
        #: listener the proxy variables name), ``""`` (none: qemu's host side runs it unseen
        #: by the guest's Python layer, or no network boundary at all).
        edge: str

        def availability(self) -> Availability:
            """Probe this machine (cheaply, cached by the caller)."""

        def prepare(self, launch: Launch) -> Prepared:
            """Turn a launch into the command to exec; raise ``ConfigError`` if the policy cannot
            be enforced by this provider (never run with less than asked)."""

        def explain(self, policy: Policy) -> Sequence[str]:
            """Lines for ``--explain``: the boundary this provider puts around a program under
            ``policy`` (its limits are :meth:`announcements`)."""

        def announcements(self, policy: Policy, mode: str) -> list[Notice]:
            """What this provider cannot enforce, or enforces with a difference worth knowing,
            for ``policy`` in ``mode`` (``enforce``, ``learn``, ``audit``): the records
            ``--explain`` prints as text and JSON, each saying whether a run says it at
            start (``providers/limits.py``)."""


class Provider:
    """The defaults every provider class inherits (``ProviderImpl`` is the contract): a kernel
    boundary, run by exec. ``none`` overrides ``kernel`` and ``in_process``; every provider
    says its own :meth:`announcements`."""

    name = ""
    kernel = True
    in_process = False
    #: Whether the descriptors the launcher passes (``Launch.pass_fds``) reach the program as
    #: descriptors: a partial-mode worker talks to its caller through one (qemu's VM has
    #: its own kernel: a host descriptor does not cross into it).
    passes_descriptors = True
    #: Whether every process the program starts ends with it because the provider runs it in
    #: a PID namespace of its own or a VM; otherwise the launcher sees to it for a partial-mode
    #: worker (``launch/spawn.tree_mechanism``).
    contains_processes = False
    #: See ``ProviderImpl.edge``.
    edge = ""

    def announcements(self, policy: Policy, mode: str) -> list[Notice]:
        raise NotImplementedError(f"os-sandbox={self.name} says nothing of its limits")
