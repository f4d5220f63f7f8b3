"""Kernel-enforced ``net=`` rules for the namespace providers (``bwrap``, ``unshare``).

With no ``net=`` rule the sandbox gets a network namespace with loopback only and nothing is
started (the providers do that themselves). With rules, :func:`start` prepares, before the
program exists:

1. a **holder**: ``unshare --user --map-root-user --net`` running a tiny shell that loads the
   nftables ruleset built by :func:`build_plan` into the new namespace, says ``ready``, then waits
   for end-of-file on its stdin (``python-sb`` holds the other end; when ``python-sb`` ends, in
   any way, the holder stops pasta and exits);
2. **pasta** (passt), attached to the holder's namespaces, giving the namespace a routed
   interface, a DNS forwarder at :data:`RESOLVER`, the host-loopback forwards of the ``OUT``
   rules that name a loopback address (``-T``/``-U``: the sandbox's ``127.0.0.1:PORT`` is the
   host's ``127.0.0.1:PORT``), and the ``IN`` forwards (``-t``/``-u``): for ``IN`` the HOST of a
   rule is the address the program binds (SPEC §2.4), so the host's port is forwarded from
   every host address for the wildcard bind (``*``, ``0.0.0.0/32``, ``::/128``), from the
   host's loopback for a loopback bind, from that address for an address of the host.
   ``--no-map-gw``: the gateway address is not a back door to the host.

The sandbox then joins that network namespace and makes its own user namespace inside the
holder's, so no process of the sandbox holds a capability over the ruleset.

The ruleset (table ``inet pysb``), in order: loopback inside the sandbox is free (it leads only
to the sandbox itself and to the forwards above, computed with the DENY rules already
subtracted); link-local neighbour discovery goes out to pasta (which learns the namespace's MAC
address from it, and delivers nothing inbound before); DNS to any address but :data:`RESOLVER`
is refused; every DENY rule refuses (for ``IN``, by the destination: the bound address);
replies of accepted flows pass; each ALLOW rule accepts; everything else is refused, for TCP,
UDP and everything else, in both directions. Refused going out: TCP gets a reset (a refused
connect fails at once with ``ECONNREFUSED``), the rest is dropped (the send fails with
``EPERM``); coming in, dropped (``policy drop``). Host names are resolved once, here, and
pinned: the ruleset holds their addresses and the sandbox's ``/etc/hosts`` maps them the same
way. ``docs/network.md`` explains the choices (pasta rather than slirp4netns, the resolver, what
``*`` grants).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pysandboxes.errors import ProviderUnavailableError
from pysandboxes.policy.model import NetRule, Policy
from pysandboxes.policy.netrules import resolve_name
from pysandboxes.providers._ns_common import rule_error
from pysandboxes.providers.edge_rules import (
    ALL_PORTS,
    Ranges,
    edge_port,
    edge_ports,
    merge,
    proxy_env,
)

if sys.platform != "linux":  # Linux kernel features only: imported where CAPS.linux
    raise ImportError(f"{__name__} needs Linux (this is {sys.platform})")

if TYPE_CHECKING:
    import ipaddress

    Net = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The only resolver the sandbox is given (its /etc/resolv.conf). pasta forwards UDP port 53 sent
#: there to the host's first configured resolver. A link-local address, so it never names a real
#: machine.
RESOLVER = "169.254.0.53"

#: Tools and the package that provides each.
TOOLS = {"nft": "nftables", "pasta": "passt", "unshare": "util-linux", "nsenter": "util-linux"}

Forwards = tuple[tuple[str, Ranges], ...]
Resolver = Callable[[str], list[str]]

HOLDER_SCRIPT = (
    "echo ns\n"  # the namespaces exist: pasta may attach while nft loads the rules
    'nft -f "$1" || exit 3\n'
    "echo ready\n"
    "cat >/dev/null\n"
    '[ -s "$2" ] && kill "$(cat "$2")" 2>/dev/null\n'
    "exit 0\n"
)


# -- port ranges -----------------------------------------------------------------------------------


def subtract(ranges: Ranges, removed: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        pieces = [(lo, hi)]
        for rlo, rhi in removed:
            next_pieces = []
            for plo, phi in pieces:
                if rhi < plo or rlo > phi:
                    next_pieces.append((plo, phi))
                    continue
                if plo < rlo:
                    next_pieces.append((plo, rlo - 1))
                if rhi < phi:
                    next_pieces.append((rhi + 1, phi))
            pieces = next_pieces
        out += pieces
    return merge(out)


def port_text(ranges: Ranges) -> str:
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


# -- addresses -------------------------------------------------------------------------------------


def _net(text: str) -> Net:
    import ipaddress

    return ipaddress.ip_network(text, strict=False)


def _is_loopback_net(net: Net) -> bool:
    """Whether ``net`` holds the host's loopback address of its family (127.0.0.1, ::1)."""

    import ipaddress

    target = ipaddress.ip_address("127.0.0.1" if net.version == 4 else "::1")
    return target in net


def _is_wildcard_net(net: Net) -> bool:
    """Whether ``net`` holds the unspecified address of its family (``0.0.0.0``, ``::``): an
    IN rule for it grants the wildcard bind, every interface."""

    return int(net.network_address) == 0


def is_host_address(address: str) -> bool:
    """Whether ``address`` is an address of this host (a socket can be bound to it)."""

    import socket

    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((address, 0))
    except OSError:
        return False
    return True


def system_resolver(name: str) -> list[str]:
    """Every address ``name`` resolves to on the host, IPv4 first (deduplicated): the one answer
    of this run (``policy.netrules.resolve_name``), which the Python layer's DENY addresses use
    too."""

    return list(resolve_name(name))


# -- the plan --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NetPlan:
    """What :func:`start` sets up, computed from the rules alone (plus name resolution)."""

    ruleset: str
    pinned: tuple[tuple[str, str], ...]
    #: IN forwards, host to sandbox: (host address pasta binds, ports); address "" is every
    #: address of the host (both families), "0.0.0.0"/"::" every address of one family.
    tcp_in: Forwards = ()
    udp_in: Forwards = ()
    tcp_to_host: Ranges = ()
    udp_to_host: Ranges = ()
    warnings: tuple[str, ...] = ()
    resolver: str = RESOLVER
    #: IPv6 in the sandbox: only when an ALLOW rule may need it (an IPv6 address, or any host
    #: for OUT);
    #: an IPv4-only pasta starts in about half the time.
    ipv6: bool = True
    #: The edge proxy's port inside the sandbox (``providers/edge_proxy.py``), or ``None``
    #: when no TCP ``OUT`` rule names a host (:func:`edge_port`).
    edge_port: int | None = None


@dataclass
class _Rule:
    rule: NetRule
    nets: list[Net] = field(default_factory=list)  # empty with host "*"

    @property
    def any_host(self) -> bool:
        return self.rule.host == "*"


def _expand(
    policy: Policy, resolve: Resolver
) -> tuple[list[_Rule], list[tuple[str, str]], list[str]]:
    rules: list[_Rule] = []
    pinned: list[tuple[str, str]] = []
    warnings: list[str] = []
    for rule in policy.net:
        if rule.host == "*":
            rules.append(_Rule(rule))
            continue
        if not rule.is_name:
            rules.append(_Rule(rule, [_net(rule.host)]))
            continue
        try:
            addresses = resolve(rule.host)
        except OSError as exc:
            addresses = []
            problem = str(exc)
        else:
            problem = "no address"
        if not addresses:
            if rule.action == "DENY":
                # A DENY that cannot be enforced stops the run (DESIGN decision 6).
                raise rule_error(
                    rule.origin,
                    rule.text,
                    f"cannot resolve {rule.host} ({problem}); a DENY rule must be enforceable",
                )
            warnings.append(
                f"{rule.origin}: {rule.text}: {rule.host} does not resolve ({problem}); "
                "the rule grants nothing"
            )
            continue
        for address in addresses:
            if (rule.host, address) not in pinned:
                pinned.append((rule.host, address))
        rules.append(_Rule(rule, [_net(a) for a in addresses]))
    return rules, pinned, warnings


def _ports(rule: NetRule) -> Ranges:
    return ALL_PORTS if rule.ports is None else merge(rule.ports)


def _protos(rule: NetRule) -> tuple[str, ...]:
    return ("TCP", "UDP") if rule.proto == "*" else (rule.proto,)


def _directions(rule: NetRule) -> tuple[str, ...]:
    return ("OUT", "IN") if rule.direction == "*" else (rule.direction,)


def _loopback_ports(rules: list[_Rule], action: str, proto: str, version: int) -> Ranges:
    """Ports of ``action`` OUT rules for ``proto`` to the host's loopback address of IP
    ``version`` (127.0.0.1 or ::1). An ALLOW for ``*`` is not taken to include the host's own
    services (docs/network.md); a DENY for ``*`` covers them, as it covers every host."""

    found: list[tuple[int, int]] = []
    for item in rules:
        rule = item.rule
        if rule.action != action or "OUT" not in _directions(rule) or proto not in _protos(rule):
            continue
        if (action == "DENY" and item.any_host) or any(
            n.version == version and _is_loopback_net(n) for n in item.nets
        ):
            found += _ports(rule)
    return merge(found)


def _bind_addresses(item: _Rule, is_local: Callable[[str], bool]) -> tuple[list[str], list[Net]]:
    """For an IN rule (HOST: the local address the program binds, SPEC §2.4): the host
    addresses pasta forwards from (``""`` every address of both families, ``0.0.0.0``/``::``
    every address of one, else one address), and the networks it names that no host address
    can reach."""

    if item.any_host:
        return [""], []
    found: list[str] = []
    unreachable: list[Net] = []
    for net in item.nets:
        if _is_wildcard_net(net):
            found.append("0.0.0.0" if net.version == 4 else "::")
        elif _is_loopback_net(net):
            found.append("127.0.0.1" if net.version == 4 else "::1")
        elif net.prefixlen == net.max_prefixlen and is_local(str(net.network_address)):
            found.append(str(net.network_address))
        else:
            unreachable.append(net)
    return found, unreachable


def _covers_address(item: _Rule, address: str) -> bool:
    """Whether a DENY IN rule covers binds of ``address`` (``""``: either wildcard)."""

    if item.any_host:
        return True
    import ipaddress

    targets = ["0.0.0.0", "::"] if address == "" else [address]
    return any(
        ipaddress.ip_address(target) in net
        for net in item.nets
        for target in targets
        if ipaddress.ip_address(target).version == net.version
    )


#: What an IN rule for every port from every host address forwards under bwrap and unshare:
#: nothing (pasta holds one host socket per forwarded port, and all 65535 of them cannot be):
#: the sandbox binds any port, none is reachable from the host (issue 27, cause 10).
EVERY_PORT_NOT_FORWARDED = (
    "{rule} ({origin}): the sandbox may bind every port, but pasta forwards none of them "
    "from the host (one host socket per port: all 65535 cannot be); name the ports to reach "
    "them from the host"
)


def _in_forwards(
    rules: list[_Rule],
    proto: str,
    is_local: Callable[[str], bool],
    warnings: list[str],
    every_port_ok: bool = False,
) -> Forwards:
    """The host-to-sandbox forwards of the ALLOW IN rules for ``proto``, minus the ports of the
    DENY IN rules that cover each address; an address covered by a wider one (``""`` covers
    all, ``0.0.0.0`` the IPv4 ones, ``::`` the IPv6 ones) keeps only its other ports.

    ``every_port_ok`` (bwrap, unshare): an ALLOW IN rule for every port from every host
    address forwards nothing, with the warning :data:`EVERY_PORT_NOT_FORWARDED` (the sandbox
    still binds and serves itself); without it (qemu) such a rule is an error that asks for
    the ports."""

    by_address: dict[str, list[tuple[int, int]]] = {}
    for item in rules:
        rule = item.rule
        if rule.action != "ALLOW" or "IN" not in _directions(rule) or proto not in _protos(rule):
            continue
        addresses, unreachable = _bind_addresses(item, is_local)
        if rule.ports is None and addresses == [""] and every_port_ok:
            message = EVERY_PORT_NOT_FORWARDED.format(rule=rule.text, origin=rule.origin)
            if message not in warnings:
                warnings.append(message)
            continue
        if rule.ports is None and addresses:
            raise rule_error(
                rule.origin,
                rule.text,
                "name the ports; each one is forwarded from the host to the sandbox by pasta "
                "(all 65535 cannot be)",
            )
        for address in addresses:
            by_address.setdefault(address, []).extend(_ports(rule))
        for net in unreachable:
            from pysandboxes.providers import limits

            message = limits.notice(
                "net.in-not-a-host-address",
                True,
                rule=rule.text,
                origin=rule.origin,
                net=net.with_prefixlen,
            ).text
            if message not in warnings:
                warnings.append(message)
    result: dict[str, Ranges] = {}
    for address, ranges in by_address.items():
        denied = merge(
            port
            for item in rules
            if item.rule.action == "DENY"
            and "IN" in _directions(item.rule)
            and proto in _protos(item.rule)
            and _covers_address(item, address)
            for port in _ports(item.rule)
        )
        # Port 0 is "any free port" for a bind, never a port pasta can forward (it would bind
        # a random port of the host).
        result[address] = subtract(merge(ranges), merge((*denied, (0, 0))))
    for address in list(result):
        for other in _wider(address):
            if other in result:
                result[address] = subtract(result[address], result[other])
    order = sorted(result, key=lambda a: (a not in ("", "0.0.0.0", "::"), a))
    return tuple((address, result[address]) for address in order if result[address])


def _wider(address: str) -> list[str]:
    """The forward addresses whose socket already covers ``address`` (pasta cannot bind a
    port twice)."""

    if address == "":
        return []
    if address in ("0.0.0.0", "::"):
        return [""]
    return ["", "::" if ":" in address else "0.0.0.0"]


def build_plan(
    policy: Policy,
    resolve: Resolver = system_resolver,
    is_local: Callable[[str], bool] = is_host_address,
    every_port_ok: bool = False,
) -> NetPlan:
    """The ruleset, forwards and pinned names for ``policy`` (which has ``net=`` rules).
    ``every_port_ok``: see :func:`_in_forwards`."""

    rules, pinned, warnings = _expand(policy, resolve)
    tcp_in = _in_forwards(rules, "TCP", is_local, warnings, every_port_ok)
    udp_in = _in_forwards(rules, "UDP", is_local, warnings, every_port_ok)
    _check_socket_budget(rules, (*tcp_in, *udp_in))
    forwards: dict[str, Ranges] = {}
    loopback_drops: list[tuple[str, int, Ranges]] = []
    for proto in ("TCP", "UDP"):
        for item in rules:
            rule = item.rule
            if (
                rule.action == "ALLOW"
                and rule.ports is None
                and "OUT" in _directions(rule)
                and proto in _protos(rule)
                and _any_loop(item)
            ):
                raise rule_error(
                    rule.origin,
                    rule.text,
                    "name the ports; each one is forwarded to the host's loopback by pasta "
                    "(all 65535 cannot be)",
                )
        # Per family: pasta's forward of a port listens on the sandbox's 127.0.0.1 and ::1 and
        # reaches the host's loopback of the same family, so a port granted for one family
        # only is dropped for the other on the sandbox's loopback (ruleset_text).
        by_family = {
            version: subtract(
                _loopback_ports(rules, "ALLOW", proto, version),
                merge((*_loopback_ports(rules, "DENY", proto, version), (0, 0))),
            )
            for version in (4, 6)
        }
        result = merge((*by_family[4], *by_family[6]))
        if any(lo <= 53 <= hi for lo, hi in result):
            result = subtract(result, ((53, 53),))
            warnings.append(
                "port 53 of the host's loopback is not forwarded: DNS goes only to the "
                f"resolver the sandbox is given ({RESOLVER})"
            )
        forwards[proto] = _without_own_ports(rules, proto, result, warnings)
        for version in (4, 6):
            other_family_only = subtract(forwards[proto], by_family[version])
            if other_family_only:
                loopback_drops.append((proto, version, other_family_only))
        if not policy.py_sandbox.value:
            _say_deny_of_own_ports(rules, proto, warnings)
    ipv6 = any(
        item.rule.action == "ALLOW"
        and (
            (item.any_host and item.rule.direction in ("OUT", "*"))
            or any(n.version == 6 for n in item.nets)
        )
        for item in rules
    ) or any(address == "" or ":" in address for address, _ in (*tcp_in, *udp_in))
    edge = edge_port(policy)
    return NetPlan(
        ipv6=ipv6,
        edge_port=edge,
        ruleset=ruleset_text(rules, loopback_drops, edge, edge_ports(policy)),
        pinned=tuple(pinned),
        tcp_in=tcp_in,
        udp_in=udp_in,
        tcp_to_host=forwards["TCP"],
        udp_to_host=forwards["UDP"],
        warnings=tuple(warnings),
    )


def _open_file_limit() -> int:
    """The most descriptors pasta may hold: its soft limit is raised to this (``start``)."""

    import resource

    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


def _check_socket_budget(rules: list[_Rule], forwards: Forwards) -> None:
    """pasta holds one host socket per forwarded port (two for every address: IPv4 and
    IPv6): more than its open-file limit allows made it fail with "Too many open files"
    after the sandbox was set up; refused here, before anything runs, naming the rules."""

    needed = sum(
        (2 if address == "" else 1) * (hi - lo + 1)
        for address, ranges in forwards
        for lo, hi in ranges
    )
    limit = _open_file_limit() - 64  # pasta's own descriptors
    if needed > limit:
        wide = [i.rule for i in rules if i.rule.action == "ALLOW" and "IN" in _directions(i.rule)]
        first = wide[0]
        raise rule_error(
            first.origin,
            first.text,
            f"the IN rules forward {needed} ports from the host, more than pasta can hold "
            f"open (its open-file limit allows {max(limit, 0)}); name fewer ports",
        )


def _any_loop(item: _Rule) -> bool:
    return any(_is_loopback_net(n) for n in item.nets)


def _binds_on_loopback(item: _Rule) -> bool:
    """Whether an IN rule lets the program bind where loopback connections arrive: any
    address, the wildcard, or a loopback network."""

    return item.any_host or any(_is_wildcard_net(n) or _is_loopback_net(n) for n in item.nets)


def _own_loopback_ports(rules: list[_Rule], proto: str) -> Ranges:
    """The ports an ALLOW IN rule for ``proto`` lets the program bind where pasta's host
    forwards listen inside the sandbox (127.0.0.1 and ::1): a bind to any address, to the
    wildcard or to loopback. Port 0 is not one (the kernel picks a free port)."""

    found: list[tuple[int, int]] = []
    for item in rules:
        rule = item.rule
        if rule.action != "ALLOW" or "IN" not in _directions(rule) or proto not in _protos(rule):
            continue
        if _binds_on_loopback(item):
            found += _ports(rule)
    return subtract(merge(found), ((0, 0),))


def _say_deny_of_own_ports(rules: list[_Rule], proto: str, warnings: list[str]) -> None:
    """With the Python layer off: a DENY OUT rule that covers loopback and ports the program
    may bind there itself (port 0: the ephemeral range) is not applied to the sandbox's own
    loopback (``oifname lo accept`` comes first: pasta's splice of the host's connections to
    the program's servers goes that way too); say so at start."""

    own = list(_own_loopback_ports(rules, proto))
    for item in rules:
        rule = item.rule
        if (
            rule.action == "ALLOW"
            and "IN" in _directions(rule)
            and proto in _protos(rule)
            and rule.ports is not None
            and any(lo == 0 for lo, _hi in rule.ports)
            and _binds_on_loopback(item)
        ):
            from pysandboxes.policy.netrules import ephemeral_port_range

            own.append(ephemeral_port_range())
            break
    own_ranges = merge(own)
    for item in rules:
        rule = item.rule
        if rule.action != "DENY" or "OUT" not in _directions(rule) or proto not in _protos(rule):
            continue
        if not (item.any_host or _any_loop(item)):
            continue
        overlap = subtract(own_ranges, subtract(own_ranges, _ports(rule)))
        if not overlap:
            continue
        from pysandboxes.providers import limits

        message = limits.notice(
            "net.own-server-deny-loopback",
            False,
            rule=rule.text,
            origin=rule.origin,
            ports=port_text(overlap),
        ).text
        if message not in warnings:
            warnings.append(message)


def _without_own_ports(
    rules: list[_Rule], proto: str, forwards: Ranges, warnings: list[str]
) -> Ranges:
    """The host-loopback forwards (``-T``/``-U``) minus the ports the program may bind on
    loopback itself: pasta listens on the sandbox's 127.0.0.1 and ::1 for each forward, so
    forwarding such a port would take it from the program (``EADDRINUSE``). On those ports a
    loopback connection goes to the program's own server (SPEC §2.4, docs/network.md)."""

    own = _own_loopback_ports(rules, proto)
    taken = subtract(forwards, subtract(forwards, own))
    if not taken:
        return forwards
    from pysandboxes.providers import limits

    for item in rules:
        rule = item.rule
        if (
            rule.action == "ALLOW"
            and "OUT" in _directions(rule)
            and proto in _protos(rule)
            and _any_loop(item)
            and subtract(_ports(rule), subtract(_ports(rule), taken))
        ):
            message = limits.notice(
                "net.own-port-not-forwarded",
                True,
                rule=rule.text,
                origin=rule.origin,
                ports=port_text(taken),
            ).text
            if message not in warnings:
                warnings.append(message)
    return subtract(forwards, own)


# -- nftables --------------------------------------------------------------------------------------


def _l4(rule: NetRule) -> str:
    ports = (
        ""
        if rule.ports is None
        else " th dport { " + port_text(merge(rule.ports)).replace(",", ", ") + " }"
    )
    if rule.proto == "*":
        return "meta l4proto { tcp, udp }" + ports
    return f"meta l4proto {rule.proto.lower()}" + ports


def _matches(item: _Rule, direction: str) -> list[str]:
    """nft match expressions for ``item`` in ``direction`` (one per address family/network)."""

    l4 = _l4(item.rule)
    if item.any_host:
        return [l4]
    out = []
    for net in item.nets:
        family = "ip" if net.version == 4 else "ip6"
        if direction == "IN" and _is_wildcard_net(net):
            # The wildcard bind: a packet for any address of the family reaches it.
            out.append(f"meta nfproto {'ipv4' if net.version == 4 else 'ipv6'} {l4}")
        else:
            # OUT: the peer; IN: the local address the program binds (SPEC §2.4).
            out.append(f"{family} daddr {net.with_prefixlen} {l4}")
    return out


#: The verdict of the output chain's refusals (see the ``refuse`` chain of :func:`ruleset_text`).
REFUSE = "goto refuse"


def ruleset_text(
    rules: Sequence[_Rule],
    loopback_drops: Sequence[tuple[str, int, Ranges]] = (),
    edge: int | None = None,
    edge_ranges: Ranges = ALL_PORTS,
) -> str:
    """The nftables ruleset (``nft -f`` syntax) for the expanded rules.

    ``loopback_drops``: (protocol, IP version, ports) forwarded to the host's loopback for the
    other IP version only (a rule for ``::1`` grants nothing on ``127.0.0.1``): dropped on the
    sandbox's loopback before it is let through.

    ``edge``: the edge proxy's port; every TCP connection to a non-loopback address on
    ``edge_ranges`` (but DNS) is redirected there (chain ``edge``), where the proxy judges it
    by name or address."""

    family_drops = [
        f'    oifname "lo" {"ip daddr 127.0.0.0/8" if version == 4 else "ip6 daddr ::1"} '
        f"meta l4proto {proto.lower()} th dport {{ {port_text(ranges).replace(',', ', ')} }} "
        f'{REFUSE} comment "forwarded for the other IP version only"'
        for proto, version, ranges in loopback_drops
    ]

    out_deny: list[str] = []
    in_deny: list[str] = []
    out_allow: list[str] = []
    in_allow: list[str] = []
    wildcard_out = False
    for item in rules:
        rule = item.rule
        for direction in _directions(rule):
            target = {
                ("DENY", "OUT"): out_deny,
                ("DENY", "IN"): in_deny,
                ("ALLOW", "OUT"): out_allow,
                ("ALLOW", "IN"): in_allow,
            }[(rule.action, direction)]
            # OUT refusals go to the refuse chain (TCP reset: a refused connect fails at once)
            verdict = (
                "accept" if rule.action == "ALLOW" else "drop" if direction == "IN" else REFUSE
            )
            comment = rule.text.replace('"', "'")[:120]
            for match in _matches(item, direction):
                target.append(f'    {match} {verdict} comment "{comment}"')
            if rule.action == "ALLOW" and direction == "OUT" and item.any_host:
                wildcard_out = True
    resolver_lines = []
    if wildcard_out:
        # Names not pinned in /etc/hosts need the resolver; only a rule for any host needs that.
        resolver_lines.append(f'    ip daddr {RESOLVER} udp dport 53 accept comment "resolver"')
    lines = [
        "table inet pysb {",
        # What the output chain refuses: TCP gets a reset, so that a refused connect() fails
        # at once (ECONNREFUSED) instead of retrying its SYN until a timeout (a dropped SYN
        # is retransmitted); anything else is dropped, which fails the send with EPERM.
        "  chain refuse {",
        "    meta l4proto tcp reject with tcp reset",
        "    drop",
        "  }",
        "  chain output {",
        "    type filter hook output priority 0; policy drop;",
        *family_drops,
        '    oifname "lo" accept',
        *_edge_accept(edge),
        # Link-local neighbour discovery, for pasta alone (the only other end of the link):
        # pasta learns the namespace's MAC address from what the namespace sends, and
        # delivers nothing inbound (the IN forwards from the host's addresses) before it has.
        "    icmpv6 type { nd-router-solicit, nd-neighbor-solicit, nd-neighbor-advert, "
        "mld-listener-report, mld2-listener-report } ip6 daddr { ff02::/16, fe80::/10 } accept",
        f"    meta l4proto {{ tcp, udp }} th dport 53 ip daddr != {RESOLVER} {REFUSE}",
        f"    meta nfproto ipv6 meta l4proto {{ tcp, udp }} th dport 53 {REFUSE}",
        *out_deny,
        "    ct state established,related accept",
        *resolver_lines,
        *out_allow,
        f"    {REFUSE}",
        "  }",
        "  chain input {",
        "    type filter hook input priority 0; policy drop;",
        '    iifname "lo" accept',
        *in_deny,
        "    ct state established,related accept",
        *in_allow,
        "  }",
        "}",
        *_edge_tables(edge, edge_ranges),
    ]
    return "\n".join(lines) + "\n"


def _edge_tables(edge: int | None, ranges: Ranges = ALL_PORTS) -> list[str]:
    """The ``nat`` output chains that send the sandbox's TCP to the edge proxy: a program that
    ignores the proxy variables reaches it too (the redirected connection keeps its original
    destination, which the proxy reads with ``SO_ORIGINAL_DST``). Loopback (the sandbox's own
    servers, pasta's host-loopback forwards) and DNS (to the resolver, judged by the filter
    chain) are not redirected, nor the ports no rule naming a host covers (the filter chain
    judges those by address, refusing at once: a TCP reset, ``ECONNREFUSED``).

    One table per family (``ip``, ``ip6``): a ``redirect`` in an ``inet`` nat chain was
    accepted by nft but changed nothing here (kernel 6.x)."""

    if edge is None:
        return []
    listed = port_text(ranges).replace(",", ", ")
    ports = "" if ranges == ALL_PORTS else f"tcp dport {{ {listed} }} "
    out: list[str] = []
    for family, loopback in (("ip", "127.0.0.0/8"), ("ip6", "::1")):
        out += [
            f"table {family} pysb_edge {{",
            "  chain output {",
            "    type nat hook output priority -100; policy accept;",
            '    oifname "lo" return',
            f"    {family} daddr {loopback} return",
            "    tcp dport 53 return",
            f'    meta l4proto tcp {ports}redirect to :{edge} comment "python-sb edge proxy"',
            "  }",
            "}",
        ]
    return out


def _edge_accept(edge: int | None) -> list[str]:
    """Filter lines letting the redirected connections reach the proxy: the filter hook still
    sees the interface the packet was routed to before the redirect, not ``lo``."""

    if edge is None:
        return []
    return [
        f'    ip daddr 127.0.0.1 tcp dport {edge} accept comment "python-sb edge proxy"',
        f'    ip6 daddr ::1 tcp dport {edge} accept comment "python-sb edge proxy"',
    ]


# -- running it ------------------------------------------------------------------------------------


def missing_tools() -> list[str]:
    return [
        f"{tool} (apt-get install {package})"
        for tool, package in TOOLS.items()
        if _which(tool) is None
    ]


def _which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")


class Network:
    """A running user-mode network: the holder process and pasta. :meth:`stop` ends both."""

    def __init__(self, plan: NetPlan, holder: subprocess.Popen[bytes], workdir: str) -> None:
        self.plan = plan
        self.holder = holder
        self.workdir = workdir
        self.pinned = plan.pinned
        self.resolver: str | None = plan.resolver
        self.join_user = f"/proc/{holder.pid}/ns/user"
        self.join_net = f"/proc/{holder.pid}/ns/net"
        self._stopped = False
        #: The edge proxy (``providers/edge_proxy.py``), when the rules name hosts for TCP.
        self.proxy: subprocess.Popen[bytes] | None = None
        #: What the sandbox's environment gains: the proxy variables naming the edge proxy.
        self.env: dict[str, str] = {} if plan.edge_port is None else proxy_env(plan.edge_port)

    @property
    def pidfile(self) -> str:
        return os.path.join(self.workdir, "pasta.pid")

    def enter_argv(self) -> list[str]:
        """Command prefix that runs the rest inside the holder's user and network namespaces."""

        nsenter = _which("nsenter") or "nsenter"
        # --preserve-credentials: no setgroups()/setuid() (the holder's user namespace denies
        # setgroups); the ids are what the holder's map makes of them.
        return [
            nsenter,
            f"--user={self.join_user}",
            f"--net={self.join_net}",
            "--preserve-credentials",
            "--",
        ]

    def stop(self) -> None:
        """End pasta and the holder (idempotent; also what the holder does on its own when
        ``python-sb`` dies)."""

        if self._stopped:
            return
        self._stopped = True
        pasta_pid = _read_pid(self.pidfile)
        if self.holder.stdin is not None:
            with contextlib.suppress(OSError):
                self.holder.stdin.close()
        try:
            self.holder.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.holder.kill()
            self.holder.wait()
        for stream in (self.holder.stdout, self.holder.stderr):
            if stream is not None:
                stream.close()
        if self.proxy is not None:
            _end_proxy(self.proxy)
        if pasta_pid is not None and _is_pasta(pasta_pid):
            _end_pasta(pasta_pid)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _end_proxy(proxy: subprocess.Popen[bytes]) -> None:
    """End the edge proxy: end-of-file on its standard input (what it also gets when python-sb
    dies), then SIGKILL if it lingers."""

    for stream in (proxy.stdin, proxy.stdout, proxy.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        proxy.wait(timeout=PASTA_EXIT_WAIT)
    except subprocess.TimeoutExpired:
        proxy.kill()
        proxy.wait()


#: The edge proxy's command: this interpreter, isolated, importing python-sb from where it is.
EDGE_CODE = (
    "import sys; sys.path.insert(0, {src!r}); "
    "from pysandboxes.providers.edge_proxy import main; sys.exit(main())"
)


def start_proxy(
    plan: NetPlan,
    policy: Policy,
    holder_pid: int,
    denials: str | None,
    secrets: Sequence[dict[str, object]] = (),
    tls: dict[str, str] | None = None,
    workdir: str = "",
) -> subprocess.Popen[bytes]:
    """Start the edge proxy for ``plan`` (which has an ``edge_port``): its configuration in a
    memfd, its lifetime tied to a pipe only python-sb holds. Returns once it is started; the
    caller reads its ``ready`` line."""

    import json

    from pysandboxes.guard.network import build_rules

    assert plan.edge_port is not None
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    config = {
        "holder": holder_pid,
        "port": plan.edge_port,
        "rows": build_rules(policy),
        "denials": os.path.abspath(denials) if denials else None,
        "secrets": list(secrets),
        "tls": tls,
    }
    fd = os.memfd_create("pysb-edge", 0)
    try:
        os.write(fd, json.dumps(config).encode())
        os.lseek(fd, 0, os.SEEK_SET)
        return subprocess.Popen(
            # The work directory names the run's helpers (pasta's pid file lives there).
            [sys.executable, "-I", "-S", "-c", EDGE_CODE.format(src=src), str(fd), workdir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(fd,),
            start_new_session=True,
        )
    finally:
        os.close(fd)


#: How long :func:`_end_pasta` waits for pasta to exit after SIGTERM (then after SIGKILL).
PASTA_EXIT_WAIT = 5.0


def _end_pasta(pid: int) -> None:
    """Stop pasta and wait until it has exited.

    pasta runs detached (it is not python-sb's child, so it cannot be reaped): without the wait,
    python-sb returned while pasta still held the host ports of the ``IN`` forwards, and a run
    started right after, forwarding the same port, failed with "Failed to bind any port". A
    pidfd names this very process (no reused number is signalled) and becomes readable when it
    exits."""

    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # gone already, or no pidfd (Linux < 5.3): signal by number
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
        return
    try:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                signal.pidfd_send_signal(pidfd, sig)
            except ProcessLookupError:
                return
            except PermissionError:
                return
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            if poller.poll(PASTA_EXIT_WAIT * 1000):
                return
    finally:
        os.close(pidfd)


def _is_pasta(pid: int) -> bool:
    """Whether ``pid`` is still a pasta process (not a reused number)."""

    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            name = handle.read().strip()
    except OSError:
        return False
    return name.startswith(("pasta", "passt"))


def _read_pid(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def pasta_argv(plan: NetPlan, holder_pid: int, pidfile: str) -> list[str]:
    def spec(ranges: Ranges, address: str = "") -> str:
        if not ranges:
            return "none"
        return (address + "/" if address else "") + port_text(ranges)

    argv = [_which("pasta") or "pasta"]
    if os.geteuid() == 0:
        # As root pasta would switch to "nobody" first and then fail to open the namespace.
        argv += ["--runas", "0"]
    if not plan.ipv6:
        argv.append("--ipv4-only")
    argv += ["--config-net", "--quiet", "--no-map-gw", "--dns-forward", plan.resolver]
    for option, forwards in (("-t", plan.tcp_in), ("-u", plan.udp_in)):
        if not forwards:
            argv += [option, "none"]
        for address, ranges in forwards:
            argv += [option, spec(ranges, address)]
    argv += [
        "-T",
        spec(plan.tcp_to_host),
        "-U",
        spec(plan.udp_to_host),
        "-P",
        pidfile,
        str(holder_pid),
    ]
    return argv


def _raise_open_file_limit() -> None:
    """In pasta's process before exec: its soft open-file limit raised to the hard one
    (``_check_socket_budget`` refused what would not fit even then)."""

    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _clean_stderr(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip() and "syslog" not in ln]
    return "; ".join(lines[-3:]) or "no message"


def _holder_failed(holder: subprocess.Popen[bytes], provider: str, what: str) -> None:
    assert holder.stderr is not None
    try:
        holder.wait(timeout=10)
    except subprocess.TimeoutExpired:
        holder.kill()
    message = _clean_stderr(holder.stderr.read().decode(errors="replace"))
    raise ProviderUnavailableError(f"os-sandbox={provider}: {what}: {message}")


def prepare_secrets(
    policy: Policy, workdir: str, tmpdir: str | None, environ: dict[str, str] | None = None
) -> tuple[list[dict[str, object]], dict[str, str], dict[str, str] | None]:
    """For the ``secret=`` rules: the proxy's secrets (placeholder and real value, from
    python-sb's own environment), what the sandbox's environment gains (each ``NAME`` as its
    placeholder; ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE`` naming a bundle
    of the system's authorities and the run's, ``NODE_EXTRA_CA_CERTS`` the run's alone) and the
    proxy's certificate and key (made in ``workdir``, python-sb's own directory; only the
    authority's certificate is copied to ``tmpdir``, the run's directory in the sandbox)."""

    import secrets as random_tokens
    import ssl

    from pysandboxes.errors import ConfigError
    from pysandboxes.policy.netrules import host_key
    from pysandboxes.providers.edge_proxy import make_run_ca

    if not policy.secrets:
        return [], {}, None
    source = dict(os.environ) if environ is None else environ
    # compared as the proxy compares them (lower case, no final dot: host_key)
    named = {host_key(r.host) for r in policy.net if r.is_name and r.action == "ALLOW"}
    found: list[dict[str, object]] = []
    env: dict[str, str] = {}
    for rule in policy.secrets:
        value = source.get(rule.name)
        if value is None:
            raise ConfigError(
                f"{rule.origin}: {rule.text}: {rule.name} is not set in python-sb's environment "
                "(the real value comes from there; the sandbox sees a placeholder)"
            )
        missing = [host for host in rule.hosts if host_key(host) not in named]
        if missing:
            raise ConfigError(
                f"{rule.origin}: {rule.text}: no net=ALLOW rule names {', '.join(missing)} "
                "(the secret is only sent through the edge proxy to an allowed host)"
            )
        placeholder = f"pysb-secret-{rule.name}-{random_tokens.token_hex(16)}"
        env[rule.name] = placeholder
        found.append(
            {
                "name": rule.name,
                "hosts": list(rule.hosts),
                "header": rule.header,
                "placeholder": placeholder,
                "value": value,
            }
        )
    if not tmpdir or not os.path.isdir(tmpdir):
        raise ConfigError("secret= needs the run's temporary directory (it holds the CA bundle)")
    private = os.path.join(workdir, "tls")
    os.mkdir(private, 0o700)
    hosts = sorted({host for rule in policy.secrets for host in rule.hosts})
    try:
        tls = make_run_ca(private, hosts)
    except OSError as exc:
        raise ProviderUnavailableError(f"secret=: {exc}") from None
    with open(tls["ca"], encoding="ascii") as handle:
        ca = handle.read()
    system = ""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile, "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and os.path.isfile(candidate):
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                system = handle.read()
            break
    bundle = os.path.join(tmpdir, "pysb-ca-bundle.pem")
    only = os.path.join(tmpdir, "pysb-run-ca.pem")
    with open(bundle, "w", encoding="utf-8") as handle:
        handle.write(system.rstrip("\n") + "\n" + ca)
    with open(only, "w", encoding="ascii") as handle:
        handle.write(ca)
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        env[name] = bundle
    env["NODE_EXTRA_CA_CERTS"] = only
    return found, env, {"cert": tls["cert"], "key": tls["key"]}


def start(
    policy: Policy,
    provider: str,
    resolve: Resolver = system_resolver,
    denials: str | None = None,
    tmpdir: str | None = None,
) -> Network:
    """Set up the network of ``policy`` (which has ``net=`` rules); raises
    ``ProviderUnavailableError`` when a tool is missing or cannot start. ``denials``: the
    ``--denials`` file, where the edge proxy writes its refusals."""

    missing = missing_tools()
    if missing:
        raise ProviderUnavailableError(
            f"os-sandbox={provider}: net= rules need {', '.join(missing)}"
        )
    if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        raise ProviderUnavailableError(
            f"os-sandbox={provider}: net= rules need /dev/net/tun, readable and writable by "
            "this user (pasta creates the sandbox's interface with it; it is mode 0666 on most "
            "distributions): chmod 0666 /dev/net/tun, or in a container add the device "
            "(docker: --device /dev/net/tun)"
        )
    # pasta makes the IN forwards of bwrap and unshare; qemu makes its own (one per port).
    plan = build_plan(policy, resolve, every_port_ok=provider in ("bwrap", "unshare"))
    workdir = tempfile.mkdtemp(prefix="pysb-net-")
    rules_fd = os.memfd_create("pysb-nft", 0)
    try:
        os.write(rules_fd, plan.ruleset.encode())
        os.lseek(rules_fd, 0, os.SEEK_SET)
        holder = subprocess.Popen(
            [
                _which("unshare") or "unshare",
                "--user",
                "--map-root-user",
                "--net",
                "--",
                "sh",
                "-c",
                HOLDER_SCRIPT,
                "pysb-net-holder",
                f"/proc/self/fd/{rules_fd}",
                os.path.join(workdir, "pasta.pid"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(rules_fd,),
            start_new_session=True,
        )
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    finally:
        os.close(rules_fd)
    network = Network(plan, holder, workdir)
    try:
        assert holder.stdout is not None and holder.stderr is not None
        if holder.stdout.readline() != b"ns\n":
            _holder_failed(holder, provider, "cannot create a user and network namespace")
        # pasta configures the interface while nft loads the ruleset; nothing runs in the
        # namespace before both are done.
        pasta = subprocess.Popen(
            pasta_argv(plan, holder.pid, network.pidfile),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_raise_open_file_limit,  # one host socket per forwarded port
        )
        if plan.edge_port is not None:
            secrets, secret_env, tls = prepare_secrets(policy, workdir, tmpdir)
            network.env.update(secret_env)
            network.proxy = start_proxy(
                plan, policy, holder.pid, denials, secrets, tls, network.workdir
            )
        ready = holder.stdout.readline() == b"ready\n"
        _, pasta_err = pasta.communicate(timeout=30)
        if not ready:
            _holder_failed(holder, provider, "cannot install the nftables ruleset")
        holder.stdout.close()
        if pasta.returncode != 0:
            raise ProviderUnavailableError(
                f"os-sandbox={provider}: pasta could not start the sandbox's network: "
                f"{_clean_stderr(pasta_err.decode(errors='replace'))}"
            )
        proxy = network.proxy
        if proxy is not None:
            assert proxy.stdout is not None and proxy.stderr is not None
            if proxy.stdout.readline() != b"ready\n":
                proxy.wait(timeout=10)
                raise ProviderUnavailableError(
                    f"os-sandbox={provider}: the edge proxy could not start: "
                    f"{_clean_stderr(proxy.stderr.read().decode(errors='replace'))}"
                )
    except BaseException:
        network.stop()
        raise
    return network
