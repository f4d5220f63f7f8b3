"""Is python-sb running inside a container, which runtime made it, and what it lets through.

A container changes which providers can work: its seccomp profile may refuse the Landlock system
calls or ``unshare``, its ``/proc`` has masked paths that forbid mounting a new ``/proc`` (which
``bwrap`` and ``unshare`` need for their PID namespace), and it may run without the capabilities
or user namespaces a provider relies on. The providers' availability probes make a real attempt
(``_ns_probe``, ``landlock``); this module adds what the attempt cannot say by itself: that the
refusal comes from the container, and the runtime option that would lift it (issue 31).

Detection reads files only, never runs a program: ``/run/.containerenv`` (written by podman),
``/.dockerenv`` (docker), the Kubernetes service-account directory and service variables, the
``container=`` variable that systemd-nspawn and LXC set, and ``/proc/1/cgroup``. It is a hint for
messages, not a security decision: nothing is granted or refused because of it.
"""

from __future__ import annotations

import os

from pysandboxes.record import Record as _Record

_set = object.__setattr__

#: The runtimes this module can name, in the order their evidence is checked.
RUNTIMES = ("kubernetes", "podman", "docker", "containerd", "lxc", "systemd-nspawn", "container")


class Container(_Record):
    """What was found: ``runtime`` (one of :data:`RUNTIMES`, ``""`` outside a container), the
    file or variable that showed it (``evidence``), whether the runtime says it is rootless
    (podman's ``rootless=1``), and the process's own seccomp mode, ``no_new_privs`` and
    effective capabilities (from ``/proc/self/status``)."""

    __slots__ = ("cap_sys_admin", "evidence", "no_new_privs", "rootless", "runtime", "seccomp")
    _fields = ("runtime", "evidence", "rootless", "seccomp", "no_new_privs", "cap_sys_admin")
    runtime: str
    evidence: str
    rootless: bool
    seccomp: int
    no_new_privs: bool
    cap_sys_admin: bool

    def __init__(
        self,
        runtime: str,
        evidence: str,
        rootless: bool = False,
        seccomp: int = 0,
        no_new_privs: bool = False,
        cap_sys_admin: bool = False,
    ) -> None:
        _set(self, "runtime", runtime)
        _set(self, "evidence", evidence)
        _set(self, "rootless", rootless)
        _set(self, "seccomp", seccomp)
        _set(self, "no_new_privs", no_new_privs)
        _set(self, "cap_sys_admin", cap_sys_admin)

    def __bool__(self) -> bool:
        return bool(self.runtime)

    def describe(self) -> str:
        """One clause for messages: ``a podman container (rootless; /run/.containerenv)``."""

        if not self.runtime:
            return "no container"
        name = "a container" if self.runtime == "container" else f"a {self.runtime} container"
        details = ["rootless"] if self.rootless else []
        details.append(self.evidence)
        return f"{name} ({'; '.join(details)})"


def _read(path: str, limit: int = 65536) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _status() -> tuple[int, bool, bool]:
    """Seccomp mode, no_new_privs and CAP_SYS_ADMIN of this process, from /proc/self/status."""

    seccomp, nnp, admin = 0, False, False
    for line in (_read("/proc/self/status") or "").splitlines():
        name, _, value = line.partition(":")
        value = value.strip()
        if name == "Seccomp" and value.isdigit():
            seccomp = int(value)
        elif name == "NoNewPrivs":
            nnp = value == "1"
        elif name == "CapEff":
            try:
                admin = bool(int(value, 16) & (1 << 21))  # CAP_SYS_ADMIN
            except ValueError:
                admin = False
    return seccomp, nnp, admin


def detect(environ: dict[str, str] | None = None) -> Container:
    """The container around this process, or ``Container("", "")`` when none is seen."""

    env = os.environ if environ is None else environ
    seccomp, nnp, admin = _status()

    def found(runtime: str, evidence: str, rootless: bool = False) -> Container:
        return Container(runtime, evidence, rootless, seccomp, nnp, admin)

    if os.path.isdir("/var/run/secrets/kubernetes.io") or env.get("KUBERNETES_SERVICE_HOST"):
        evidence = (
            "/var/run/secrets/kubernetes.io"
            if os.path.isdir("/var/run/secrets/kubernetes.io")
            else "KUBERNETES_SERVICE_HOST"
        )
        return found("kubernetes", evidence)
    containerenv = _read("/run/.containerenv")
    if containerenv is not None:
        rootless = any(line.strip() == "rootless=1" for line in containerenv.splitlines())
        return found("podman", "/run/.containerenv", rootless)
    if os.path.exists("/.dockerenv"):
        return found("docker", "/.dockerenv")
    marker = env.get("container", "")
    if marker in ("lxc", "systemd-nspawn", "podman", "docker"):
        return found(marker, f"container={marker}")
    cgroup = _read("/proc/1/cgroup") or ""
    for word, runtime in (("kubepods", "kubernetes"), ("libpod", "podman"), ("docker", "docker")):
        if word in cgroup:
            return found(runtime, "/proc/1/cgroup")
    if "containerd" in cgroup:
        return found("containerd", "/proc/1/cgroup")
    if marker:
        return found("container", f"container={marker}")
    return found("", "")


_cache: list[Container] = []


def cached() -> Container:
    """:func:`detect` once per process (the files it reads do not change during a run)."""

    if not _cache:
        _cache.append(detect())
    return _cache[0]


# -- what would let a provider run ----------------------------------------------------------
# One table: the problem a probe found, and per runtime the option that lifts it. The texts name
# the runtime's own flags (podman run, docker run, a Kubernetes Pod's securityContext).

_SECCOMP = "seccomp"  # the container's seccomp profile refuses the system calls
_PROC = "proc"  # a new /proc cannot be mounted (masked paths of the container's /proc)
_USERNS = "userns"  # user namespaces refused (not by seccomp: a setting or the runtime)
_SECCOMP_NS = "seccomp-ns"  # the profile refuses a call the namespace providers make (sethostname)

_HINTS: dict[str, dict[str, str]] = {
    _SECCOMP: {
        "podman": "podman run --security-opt seccomp=PROFILE.json with the system calls allowed "
        "(or seccomp=unconfined to test)",
        "docker": "docker run --security-opt seccomp=PROFILE.json with the system calls allowed "
        "(Docker >= 23's default profile allows the Landlock calls; or seccomp=unconfined to test)",
        "kubernetes": "securityContext.seccompProfile: type Localhost with a profile that allows "
        "the system calls (RuntimeDefault of containerd >= 1.7 and CRI-O allow the Landlock "
        "calls)",
    },
    _PROC: {
        "podman": "podman run --security-opt unmask=ALL --security-opt seccomp=unconfined (a "
        "new /proc can then be mounted, and the sandbox's host named: podman's profile allows "
        "sethostname only with CAP_SYS_ADMIN); add --device /dev/net/tun for net= rules; or "
        "use os-sandbox=landlock, which needs no namespaces",
        "docker": "docker run --security-opt systempaths=unconfined (with a seccomp profile "
        "that allows unshare), or use os-sandbox=landlock",
        "kubernetes": "securityContext.procMount: Unmasked with hostUsers: false, or use "
        "os-sandbox=landlock",
    },
    _SECCOMP_NS: {
        "podman": "podman run --security-opt seccomp=unconfined (its default profile allows "
        "sethostname only with CAP_SYS_ADMIN), with --security-opt unmask=ALL; or use "
        "os-sandbox=landlock",
        "docker": "docker run --security-opt seccomp=PROFILE.json that allows sethostname and "
        "unshare (or seccomp=unconfined), with --security-opt systempaths=unconfined; or use "
        "os-sandbox=landlock",
        "kubernetes": "a Localhost seccomp profile that allows sethostname and unshare, with "
        "procMount: Unmasked and hostUsers: false; or use os-sandbox=landlock",
    },
    _USERNS: {
        "podman": "podman run --security-opt seccomp=unconfined, or a user-namespace setting "
        "(--userns=auto) on a host that allows them; or os-sandbox=landlock",
        "docker": "docker run --security-opt seccomp=unconfined (Docker's default profile refuses "
        "unshare without CAP_SYS_ADMIN); or os-sandbox=landlock",
        "kubernetes": "hostUsers: false on a node with user-namespace support, with a seccomp "
        "profile that allows unshare; or os-sandbox=landlock",
    },
}


def runtime_hint(problem: str, container: Container | None = None) -> str:
    """The runtime option that lifts ``problem`` (``seccomp``, ``proc``, ``seccomp-ns``,
    ``userns``) in the
    container around this process; ``""`` outside a container or for an unknown runtime."""

    box = cached() if container is None else container
    if not box:
        return ""
    table = _HINTS.get(problem, {})
    hint = table.get(box.runtime) or table.get("docker", "")
    return f"in {box.describe()}: {hint}" if hint else ""
