"""Which rules need the edge proxy, and what the sandbox is told of it: pure functions of the
policy, for every provider with an edge (``ProviderImpl.edge``: netns for bwrap and unshare, the
proxy variables for landlock) and for the start path.

Apart from ``netns.py`` (the user-mode network: pasta, nftables, subprocesses), whose import
costs some 17 ms: the start path and landlock ask these questions of every run with ``net=``
rules, and most runs need no proxy at all.
"""

from __future__ import annotations

from pysandboxes.policy.model import NetRule, Policy

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Iterable

#: Port ranges, merged and sorted: ``((lo, hi), ...)``.
Ranges = tuple[tuple[int, int], ...]

__all__ = [
    "ALL_PORTS",
    "EDGE_PORT",
    "Ranges",
    "edge_guard_rule",
    "edge_port",
    "edge_ports",
    "merge",
    "names_hosts_for_tcp",
    "proxy_env",
]


def merge(ranges: Iterable[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


ALL_PORTS: Ranges = ((1, 65535),)


#: The first port tried for the edge proxy inside the sandbox (a namespace of its own: only the
#: rules' ports can be taken there).
EDGE_PORT = 3128


def names_hosts_for_tcp(policy: Policy) -> bool:
    """Whether a TCP ``OUT`` rule names a host (ALLOW or DENY): what the edge proxy is for."""

    return any(
        rule.is_name and rule.proto in ("TCP", "*") and rule.direction in ("OUT", "*")
        for rule in policy.net
    )


def edge_port(policy: Policy) -> int | None:
    """The edge proxy's port inside the sandbox for ``policy``, from the rules alone (the
    Python layer is told it before the network starts): :data:`EDGE_PORT` or the first port
    above it that no rule names (which the program may bind, or pasta forward); ``None``
    when no TCP ``OUT`` rule names a host."""

    if not names_hosts_for_tcp(policy):
        return None
    taken = merge(port for rule in policy.net if rule.ports is not None for port in rule.ports)
    port = EDGE_PORT
    while any(lo <= port <= hi for lo, hi in taken):
        port += 1
    return port


def edge_ports(policy: Policy) -> Ranges:
    """The TCP ports redirected to the edge proxy: those of the ``OUT`` rules naming a host."""

    found: list[tuple[int, int]] = []
    for rule in policy.net:
        if rule.is_name and rule.proto in ("TCP", "*") and rule.direction in ("OUT", "*"):
            found += ALL_PORTS if rule.ports is None else rule.ports
    return merge(found)


def edge_guard_rule(policy: Policy, edge: str = "netns") -> NetRule | None:
    """The rule the Python layer needs to reach the edge proxy (``HTTPS_PROXY`` names it):
    ``net=ALLOW|TCP|127.0.0.1|PORT|OUT``, origin ``<edge proxy>``. ``edge``: the provider's
    (``ProviderImpl.edge``); for ``"variables"`` (landlock) the port is the host-loopback
    listener's (``edge_proxy.host_listener``), made now."""

    port = edge_port(policy)
    if port is None:
        return None
    if edge == "variables":
        from pysandboxes.providers.edge_proxy import host_listener

        port = int(host_listener().getsockname()[1])
    from pysandboxes.policy.model import Origin

    return NetRule(
        action="ALLOW",
        proto="TCP",
        host="127.0.0.1",
        ports=((port, port),),
        direction="OUT",
        origin=Origin("<edge proxy>"),
        text=f"net=ALLOW|TCP|127.0.0.1|{port}|OUT",
        is_name=False,
    )


def proxy_env(port: int) -> dict[str, str]:
    """The proxy variables of the sandbox: every usual spelling names the edge proxy; loopback
    is not proxied (the sandbox's own servers, the host-loopback forwards)."""

    url = f"http://127.0.0.1:{port}"
    env: dict[str, str] = {}
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    return env
