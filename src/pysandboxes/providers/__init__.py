"""The ``os-sandbox`` providers, loaded on demand so a run imports only the one it uses.

Each provider is one module exposing ``PROVIDER`` (see :mod:`pysandboxes.providers.base`).
"""

from __future__ import annotations

from pysandboxes.errors import ConfigError

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: ``typing`` costs start-up time (DESIGN 7)
if TYPE_CHECKING:
    from pysandboxes.policy.model import Policy
    from pysandboxes.providers.base import Availability, Launch, Prepared, ProviderImpl
    from pysandboxes.providers.limits import Notice

#: ``os-sandbox`` value -> module of this package that implements it.
MODULES: dict[str, str] = {
    "none": "none",
    "subprocess": "subproc",
    "landlock": "landlock",
    "bwrap": "bwrap",
    "unshare": "unshare",
    "qemu": "qemu",
}


#: The providers built on Linux kernel features, and the feature each needs (issue 19).
LINUX_ONLY: dict[str, str] = {
    "landlock": "Landlock (a Linux security module)",
    "bwrap": "bubblewrap (Linux namespaces and seccomp)",
    "unshare": "Linux namespaces and seccomp",
    "qemu": "the qemu provider (built on Linux namespaces for its network and files)",
}


class UnavailableProvider:
    """A kernel provider on a platform without its kernel feature: it says why, never runs
    (``availability()`` is false, so the launcher refuses the run with the reason)."""

    kernel = True
    in_process = False
    passes_descriptors = True
    contains_processes = False
    edge = ""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def availability(self) -> Availability:
        from pysandboxes.providers.base import Availability

        return Availability(False, self.reason, "use os-sandbox=subprocess or none here")

    def prepare(self, launch: Launch) -> Prepared:
        raise ConfigError(f"os-sandbox={self.name} cannot run here: {self.reason}")

    def explain(self, policy: Policy) -> list[str]:
        return [
            "no kernel boundary can be set up on this platform: the Python layer is the only "
            "enforcement here (os-sandbox=subprocess or none)",
        ]

    def announcements(self, policy: Policy, mode: str) -> list[Notice]:
        """Nothing runs under it here: its refusal is :meth:`availability`'s."""

        return []


def get_provider(name: str) -> ProviderImpl:
    """The provider called ``name``; ``ConfigError`` for an unknown or not-yet-built one. A
    kernel provider on a platform without its kernel feature is an :class:`UnavailableProvider`
    (its module, which would not even import there, is not loaded)."""

    module_name = MODULES.get(name)
    if module_name is None:
        raise ConfigError(f"unknown os-sandbox provider {name!r} (one of: {', '.join(MODULES)})")
    if name in LINUX_ONLY:
        from pysandboxes.platform_caps import CAPS, not_here

        if not CAPS.linux:
            return UnavailableProvider(name, not_here(LINUX_ONLY[name]))
    try:
        # __import__ rather than importlib.import_module: importing importlib costs start-up time.
        module = __import__(f"{__name__}.{module_name}", fromlist=("PROVIDER",))
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{module_name}":
            raise
        raise ConfigError(
            f"os-sandbox={name} is not available in this version of python-sb"
        ) from None
    provider: ProviderImpl = module.PROVIDER
    return provider


def unavailable_message(name: str, available: Availability) -> str:
    """The refusal of a run whose provider cannot work here: the reason, what to install or
    change, and -- inside a container (issue 31) -- which providers do work here, so that the
    choice is the user's and never a silent fallback."""

    hint = f" ({available.install_hint})" if available.install_hint else ""
    message = f"os-sandbox={name} cannot run here: {available.reason}{hint}"
    from pysandboxes.platform_caps import CAPS

    if not CAPS.linux:
        return message
    from pysandboxes.providers import _container

    box = _container.cached()
    if not box:
        return message
    working = [other for other in MODULES if other != name and _works(other)]
    here = ", ".join(working) if working else "none of the kernel providers"
    return f"{message}; python-sb runs in {box.describe()}, where these work: {here}"


def _works(name: str) -> bool:
    try:
        return bool(get_provider(name).availability())
    except ConfigError:
        return False
