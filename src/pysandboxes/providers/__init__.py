"""The ``os-sandbox`` providers, loaded on demand so a run imports only the one it uses.

Each provider is one module exposing ``PROVIDER`` (see :mod:`pysandboxes.providers.base`).
"""

from __future__ import annotations

from pysandboxes.errors import ConfigError

TYPE_CHECKING = False  # as typing.TYPE_CHECKING: ``typing`` costs start-up time (DESIGN 7)
if TYPE_CHECKING:
    from pysandboxes.providers.base import ProviderImpl

#: ``os-sandbox`` value -> module of this package that implements it.
MODULES: dict[str, str] = {
    "none": "none",
    "subprocess": "subproc",
    "landlock": "landlock",
    "bwrap": "bwrap",
    "unshare": "unshare",
    "qemu": "qemu",
}


def get_provider(name: str) -> ProviderImpl:
    """The provider called ``name``; ``ConfigError`` for an unknown or not-yet-built one."""

    module_name = MODULES.get(name)
    if module_name is None:
        raise ConfigError(f"unknown os-sandbox provider {name!r} (one of: {', '.join(MODULES)})")
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
