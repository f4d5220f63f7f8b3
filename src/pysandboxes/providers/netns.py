"""User-mode network and nftables ruleset for the namespace providers (in progress).

Until the network part lands, a policy with ``net=`` rules is refused rather than run with less
than it asks (SPEC §5.1: never a silent downgrade).
"""

from __future__ import annotations

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import Policy


class Network:
    pinned: tuple[tuple[str, str], ...] = ()
    resolver: str | None = None
    join_user: str = ""
    join_net: str = ""

    def enter_argv(self) -> list[str]:
        return []

    def stop(self) -> None:
        return None


def start(policy: Policy, provider: str) -> Network:
    raise ConfigError(f"os-sandbox={provider}: net= rules are not enforced yet by this provider")
