"""The interface every ``os-sandbox`` provider implements (DESIGN decision 5).

A provider answers two questions: can it run here (and if not, why and what to install), and, for
a given policy and launch, what command to ``exec`` and what to apply to ``python-sb``'s own
process just before (Landlock, seccomp, ``no_new_privs``). It never runs the program itself: the
launcher does, so that exit statuses and signals stay native (DESIGN decision 4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pysandboxes.policy.model import Policy
from pysandboxes.runtime import RunContext


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether a provider can run on this machine; when not, why and what to install."""

    ok: bool
    reason: str = ""
    install_hint: str = ""

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class Launch:
    """What the launcher asks a provider to contain.

    ``child_argv`` is the complete command of the sandboxed interpreter (``python [options] -c
    BOOTSTRAP ...``), already built by the launcher; a wrapping provider (``bwrap``) puts its own
    command in front. ``pass_fds`` must stay open in the child (the policy descriptor, the
    learning channel). ``env`` is the child's whole environment, already filtered by ``env=``.
    """

    policy: Policy
    context: RunContext
    child_argv: tuple[str, ...]
    env: Mapping[str, str]
    pass_fds: tuple[int, ...] = ()
    cwd: str = "/"


@dataclass
class Prepared:
    """A provider's answer: the command to exec and what to do in-process first.

    - ``argv``/``env``: exec'd with ``os.execve`` (or spawned when ``needs_parent``).
    - ``pre_exec``: callables run, in order, in ``python-sb``'s own process right before exec
      (``landlock_restrict_self``, seccomp, ``no_new_privs``); when the launcher spawns, they run in
      the child between fork and exec.
    - ``needs_parent``: ``python-sb`` must stay as a supervisor (a network helper, a VM).
    - ``cleanup``: run by the supervisor after the child ended, on every exit path.
    - ``warnings``: said on stderr at start (for example what Landlock cannot enforce).
    - ``in_process``: nothing is exec'd; the launcher runs the program in its own interpreter
      (``os-sandbox=none``) with ``env`` as ``os.environ``.
    """

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()
    pre_exec: list[Callable[[], None]] = field(default_factory=list)
    needs_parent: bool = False
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    in_process: bool = False


class ProviderImpl(Protocol):
    """One ``os-sandbox`` value."""

    name: str
    #: True when the provider puts a kernel (or VM) boundary around the program.
    kernel: bool

    def availability(self) -> Availability:
        """Probe this machine (cheaply, cached by the caller)."""

    def prepare(self, launch: Launch) -> Prepared:
        """Turn a launch into the command to exec; raise ``ConfigError`` if the policy cannot be
        enforced by this provider (never run with less than asked)."""

    def explain(self, policy: Policy) -> Sequence[str]:
        """Lines for ``--explain``: what this provider enforces for ``policy``, what it cannot."""
