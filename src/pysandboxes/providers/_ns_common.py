"""Pieces shared by the namespace providers (``bwrap``, ``unshare``).

Provider parameters (``<provider>.hostname``), descriptors holding generated data, the seccomp
filter descriptor, the network hand-off to ``netns`` and the ``--explain`` lines.
"""

from __future__ import annotations

import os
import sys

from pysandboxes.errors import ConfigError, ConfigProblem
from pysandboxes.policy.model import Origin, Policy
from pysandboxes.providers.base import Provider

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: typing and re stay off the start-up path
if TYPE_CHECKING:
    from collections.abc import Sequence

    from pysandboxes.providers.limits import Notice
    from pysandboxes.providers.netns import Network

DEFAULT_HOSTNAME = "python-sb"


class NamespaceProvider(Provider):
    """What the namespace providers are alike in: a kernel layer with its own PID namespace,
    the edge proxy in its network namespace, and the same ``--explain`` lines and
    announcements (what the rules alone decide of the namespace tree and network; the mount
    plan and the network add, at start, what depends on the host)."""

    kernel = True
    contains_processes = True  # its own PID namespace
    edge = "netns"  # the edge proxy in its network namespace

    def explain(self, policy: Policy) -> Sequence[str]:
        return explain_lines(policy, self.name)

    def announcements(self, policy: Policy, mode: str) -> list[Notice]:
        from pysandboxes.providers.limits import namespace_notices

        return namespace_notices(policy, self.name)


def rule_error(origin: Origin, text: str, message: str) -> ConfigError:
    """A ``ConfigError`` located at a rule: ``.py-sandboxes(3): net=...: message``."""

    return ConfigError([ConfigProblem(str(origin), f"{text}: {message}", origin.sort_key)])


_LABEL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def is_host_label(value: str) -> bool:
    """An RFC 1123 label: 1-63 ASCII letters, digits or '-', not starting or ending with '-'."""

    return (
        0 < len(value) <= 63
        and set(value) <= _LABEL_CHARACTERS
        and not value.startswith("-")
        and not value.endswith("-")
    )


def hostname(policy: Policy, provider: str) -> str:
    """``<provider>.hostname`` (an RFC 1123 label), default ``python-sb``."""

    line = policy.provider_param(provider, "hostname")
    if line is None:
        return DEFAULT_HOSTNAME
    value = line.value.strip()
    if not is_host_label(value):
        raise rule_error(
            line.origin,
            line.text,
            "a host name is 1-63 letters, digits or '-', not starting or ending with '-'",
        )
    return value


def data_fd(data: bytes, label: str) -> int:
    """An inheritable descriptor positioned at the start of ``data`` (a memfd)."""

    fd = os.memfd_create("python-sb" + label.replace("/", "-"), 0)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def seccomp_module_present() -> bool:
    try:
        from pysandboxes.providers import seccomp  # noqa: F401
    except ImportError:
        return False
    return True


def which(tool: str) -> str | None:
    """``shutil.which`` without importing ``shutil`` (which pulls in bz2, lzma, fnmatch: several
    ms of start-up); also looks in the sbin directories."""

    path = [*os.environ.get("PATH", os.defpath).split(os.pathsep), "/usr/sbin", "/sbin"]
    for folder in path:
        candidate = os.path.join(folder or ".", tool)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def seccomp_fd() -> int | None:
    """A descriptor holding the BPF program of ``providers/seccomp.py`` (for ``bwrap
    --seccomp``), or None while that module is absent."""

    if not seccomp_module_present():
        return None
    from pysandboxes.providers import seccomp

    fd = int(seccomp.filter_fd(_filter()))
    os.set_inheritable(fd, True)
    return fd


def seccomp_program() -> bytes | None:
    """The raw BPF program (``struct sock_filter`` array) for the unshare provider."""

    if not seccomp_module_present():
        return None
    return _filter()


def _filter() -> bytes:
    # UDP and AF_UNIX stay allowed: the sandbox has its own network namespace (loopback only, or
    # the nftables ruleset) and abstract Unix sockets are per network namespace; path-named
    # ones are limited to what the mount tree holds.
    from pysandboxes.providers import seccomp

    return bytes(seccomp.filter_program(allow_udp=True, allow_unix=True))


def start_network(
    policy: Policy, provider: str, denials: str | None = None, tmpdir: str | None = None
) -> Network | None:
    """None when no ``net=`` rule exists (loopback only, nothing started); else a running
    user-mode network with its ruleset (``netns``) and, when the rules name hosts for TCP, its
    edge proxy (which writes its refusals to ``denials``, the ``--denials`` file)."""

    if not policy.net:
        return None
    from pysandboxes.providers import netns

    return netns.start(policy, provider, denials=denials, tmpdir=tmpdir)


def explain_lines(policy: Policy, provider: str) -> list[str]:
    """What a namespace provider enforces for ``policy`` and what it cannot."""

    lines = [
        f"os-sandbox={provider}: only the interpreter, system files and exposed paths exist; "
        "own user, PID, IPC, UTS and network namespaces; no_new_privs; seccomp filter",
        f"  read-only: {len(policy.expose_ro)} exposure(s); read-write: "
        f"{len(policy.expose_rw)}; rule files read-only inside exposures",
    ]
    if policy.net:
        lines.append(
            "  network: pasta user-mode network + nftables ruleset from net= rules "
            "(DENY first, default drop; names pinned at start); IN rules forward the host's "
            "port (every host address for a wildcard bind, the host's loopback for a "
            "loopback bind)"
        )
        from pysandboxes.providers.net_enforcement import edge_ports_named, explain_lines

        if edge_ports_named(policy):
            lines.append(
                "  edge proxy: python-sb's host-side proxy judges the sandbox's TCP on the ports "
                "of rules naming hosts (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY name it; other "
                "programs are redirected to it in the sandbox's namespace)"
            )
        lines += explain_lines(policy, provider)
    else:
        lines.append("  network: loopback only (no net= rule)")
    return lines
