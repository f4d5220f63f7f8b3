"""The ``net=ACTION|PROTO|HOST|PORTS|DIR`` grammar (SPEC §2.4) and address normalisation.

``ipaddress`` is imported on first use only: a rule file without ``net=`` lines never pays for
it, and neither does the sandboxed child of such a file.
"""

from __future__ import annotations

from pysandboxes.policy.model import NetRule, Origin, SecretRule

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import ipaddress
    from collections.abc import Callable

    from pysandboxes.policy.model import Action, Direction, Policy, Proto

__all__ = [
    "ephemeral_port_range",
    "host_key",
    "is_loopback_bind",
    "is_wildcard_bind",
    "normalise_ip",
    "parse_net",
    "parse_ports",
    "pin_deny_names",
    "resolve_name",
]

_ACTIONS: dict[str, Action] = {"ALLOW": "ALLOW", "DENY": "DENY"}
_PROTOS: dict[str, Proto] = {"TCP": "TCP", "UDP": "UDP", "*": "*"}
_DIRS: dict[str, Direction] = {"OUT": "OUT", "IN": "IN", "*": "*"}
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_MAPPED_PREFIX = 0xFFFF << 32  # ::ffff:0:0/96


def host_key(name: str) -> str:
    """A host name in the form rules hold it and every enforcer compares it: lower case, no
    final dot (``Example.ORG.`` is ``example.org``). The rule parser, the guard's and the
    decision tables' matchers (``policy/precedence``) and the edge proxy (the name a
    ``CONNECT``, a ``Host`` line or a TLS server name carries; the hosts of ``secret=``) all
    read names through it. (The guard's resolver handler spells the same two operations
    inline: it runs in the program's event path, where it calls nothing it did not capture.)"""

    return name.lower().removesuffix(".")


def unmap_network(
    net: ipaddress.IPv4Network | ipaddress.IPv6Network,
) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """An IPv4-mapped IPv6 network (``::ffff:10.0.0.0/104``) as the IPv4 network it maps."""

    import ipaddress

    if (
        net.version == 6
        and net.prefixlen >= 96
        and (int(net.network_address) >> 32) == (_MAPPED_PREFIX >> 32)
    ):
        low = int(net.network_address) & 0xFFFFFFFF
        return ipaddress.IPv4Network((low, net.prefixlen - 96))
    return net


def normalise_ip(text: str) -> str:
    """The canonical text of an IP address; an IPv4-mapped IPv6 address becomes IPv4.

    Raises ``ValueError`` for anything that is not an address.
    """

    import ipaddress

    addr = ipaddress.ip_address(text.strip("[]"))
    if addr.version == 6 and addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return str(addr)


def is_wildcard_bind(host: str) -> bool:
    """Whether an ``IN`` rule's HOST (canonical, as :func:`parse_net` leaves it) holds the
    unspecified address of its family: ``0.0.0.0/32``, ``::/128`` or a CIDR around them. For
    ``IN`` HOST is the address the program binds (SPEC §2.4), and that one is the wildcard bind,
    every interface: a rule for it grants what a port-only enforcer (Landlock) grants."""

    return host.split("/", 1)[0] in ("0.0.0.0", "::")


def is_loopback_bind(host: str) -> bool:
    """Whether an ``IN`` rule's HOST (canonical) is a loopback network that holds the
    loopback address of its family (``127.0.0.1``, ``127.0.0.0/8``, ``::1``)."""

    import ipaddress

    try:
        net = ipaddress.ip_network(host, strict=False)
    except ValueError:
        return False  # a host name
    address = ipaddress.ip_address("127.0.0.1" if net.version == 4 else "::1")
    return address in net and net.prefixlen >= (8 if net.version == 4 else 128)


def ephemeral_port_range() -> tuple[int, int]:
    """The kernel's ephemeral port range (Linux: the ports a bind to port 0 and an unbound
    connect get), or the IANA range elsewhere."""

    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as handle:
            low, high = handle.read().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49152, 65535


def parse_ports(text: str) -> tuple[tuple[int, int], ...] | None:
    """``*`` → ``None``; ``N``, ``A-B`` or a comma list → sorted, merged inclusive ranges."""

    if text == "*":
        return None
    ranges: list[tuple[int, int]] = []
    for item in text.split(","):
        item = item.strip()
        lo_text, dash, hi_text = item.partition("-")
        lo = _port(lo_text, text)
        hi = _port(hi_text, text) if dash else lo
        if hi < lo:
            raise ValueError(f"port range {item!r} goes backwards")
        ranges.append((lo, hi))
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _port(text: str, whole: str) -> int:
    text = text.strip()
    if not text.isdigit() or not text.isascii() or len(text) > 5 or int(text) > 65535:
        raise ValueError(
            f"bad PORTS {whole!r}: ports are *, N, A-B or a comma list, each from 0 to 65535"
        )
    return int(text)


def _host(text: str) -> tuple[str, bool]:
    """``(canonical host, is_name)`` for ``*``, an IP, a CIDR or a host name."""

    if text == "*":
        return "*", False
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if "/" in bare:
        import ipaddress

        try:
            net = ipaddress.ip_network(bare, strict=False)
        except ValueError:
            raise ValueError(
                f"bad HOST {text!r}: a CIDR is ADDRESS/PREFIX, such as 10.0.0.0/8 or fd00::/8"
            ) from None
        net = unmap_network(net)
        if net.prefixlen == net.max_prefixlen:
            return str(net.network_address), False
        return str(net), False
    name = host_key(text)
    if ":" in bare or name.rsplit(".", 1)[-1].isdigit():  # may be an address: ask ipaddress
        try:
            return normalise_ip(bare), False
        except ValueError:
            pass
    labels = name.split(".")
    if (
        not name
        or len(name) > 253
        or any(not label or len(label) > 63 for label in labels)
        or not all(c in _HOST_CHARS for c in name.replace(".", ""))
        or any(label.startswith("-") or label.endswith("-") for label in labels)
        or labels[-1].isdigit()
    ):
        raise ValueError(
            f"bad HOST {text!r}: expected *, an IPv4 or IPv6 address, a CIDR or a host name"
        )
    return name, True


def parse_net(value: str, origin: Origin) -> NetRule:
    """One ``net=`` value into a :class:`NetRule`. Raises ``ValueError`` with the message."""

    fields = value.split("|")
    if len(fields) != 5:
        raise ValueError(
            f"net= takes 5 fields ACTION|PROTO|HOST|PORTS|DIR, got {len(fields)} in {value!r}"
        )
    action, proto, host, ports, direction = (f.strip() for f in fields)
    if action.upper() not in _ACTIONS:
        raise ValueError(f"bad ACTION {action!r} in net=: expected ALLOW or DENY")
    if proto.upper() not in _PROTOS:
        raise ValueError(f"bad PROTO {proto!r} in net=: expected TCP, UDP or *")
    if direction.upper() not in _DIRS:
        raise ValueError(f"bad DIR {direction!r} in net=: expected OUT, IN or *")
    canonical, is_name = _host(host)
    return NetRule(
        action=_ACTIONS[action.upper()],
        proto=_PROTOS[proto.upper()],
        host=canonical,
        ports=parse_ports(ports),
        direction=_DIRS[direction.upper()],
        origin=origin,
        text=f"net={value}",
        is_name=is_name,
    )


# -- secret= (issue 32) ----------------------------------------------------------------------


def parse_secret(value: str, origin: Origin) -> SecretRule:
    """``secret=NAME|HOST[,HOST]|HEADER``: a variable name, host names (no address, no ``*``:
    the proxy matches the name a request gives) and an HTTP header name."""

    fields = value.split("|")
    if len(fields) != 3:
        raise ValueError(f"secret= takes NAME|HOST[,HOST]|HEADER, got {value!r}")
    name, hosts_text, header = (f.strip() for f in fields)
    if not (name.isidentifier() and name.isascii()):
        raise ValueError(f"bad variable name {name!r} in secret=")
    hosts: list[str] = []
    for item in hosts_text.split(","):
        host, is_name = _host(item.strip())
        if not is_name:
            raise ValueError(f"secret= takes host names, not {item.strip()!r}")
        hosts.append(host)
    token = "!#$%&'*+-.^_`|~"
    if not header or not all(c.isascii() and (c.isalnum() or c in token) for c in header):
        raise ValueError(f"bad header name {header!r} in secret=")
    return SecretRule(name, tuple(hosts), header, origin, f"secret={value}")


# -- host names resolved once per run ------------------------------------------------------------

#: name -> its addresses, for the life of this process: python-sb resolves each name of the
#: rules once, and every enforcer of the run (the Python layer's DENY addresses, the nftables
#: ruleset and the sandbox's /etc/hosts of ``providers/netns.py``) uses that one answer.
_RESOLVED: dict[str, tuple[str, ...]] = {}


def resolve_name(name: str) -> tuple[str, ...]:
    """Every address ``name`` resolves to on the host (IPv4 first, deduplicated, IPv4-mapped
    IPv6 answers as IPv4), resolved once per process. Raises ``OSError`` when it fails."""

    known = _RESOLVED.get(name)
    if known is not None:
        return known
    import socket

    infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    found: list[str] = []
    for family in (socket.AF_INET, socket.AF_INET6):
        for fam, *_rest, sockaddr in infos:
            if fam != family:
                continue
            address = normalise_ip(str(sockaddr[0]).split("%", 1)[0])
            if address not in found:
                found.append(address)
    answer = tuple(found)
    _RESOLVED[name] = answer
    return answer


def pin_deny_names(
    policy: Policy, resolve: Callable[[str], tuple[str, ...] | list[str]] = resolve_name
) -> Policy:
    """``policy`` with, beside each ``DENY`` rule that names a host, the same rule for each
    address the name resolves to now (SPEC §2.4: a DENY by name holds for the name's
    addresses, so a program that connects to the hard-coded address of ``metadata.internal``
    is refused as one that connects by name). The added rules keep the rule's text and origin,
    so a refusal names the rule as written.

    Fails closed (DESIGN decision 6): a DENY name that does not resolve stops the run with a
    ``ConfigError`` naming the rule, as the namespace providers do. The policy is returned
    unchanged (the same object) when it has no DENY rule by name.
    """

    names = [rule for rule in policy.net if rule.action == "DENY" and rule.is_name]
    if not names:
        return policy
    from pysandboxes.errors import ConfigError, ConfigProblem

    added: list[NetRule] = []
    problems: list[ConfigProblem] = []
    for rule in names:
        try:
            addresses = tuple(resolve(rule.host))
            problem = "no address"
        except (OSError, UnicodeError) as exc:
            addresses, problem = (), str(exc)
        if not addresses:
            problems.append(
                ConfigProblem(
                    str(rule.origin),
                    f"{rule.text}: cannot resolve {rule.host} ({problem}); a DENY rule must be "
                    "enforceable (python-sb denies the addresses a DENY name resolves to at "
                    "start)",
                    rule.origin.sort_key,
                )
            )
            continue
        for address in addresses:
            added.append(
                NetRule(
                    action="DENY",
                    proto=rule.proto,
                    host=normalise_ip(address),
                    ports=rule.ports,
                    direction=rule.direction,
                    origin=rule.origin,
                    text=rule.text,
                    is_name=False,
                )
            )
    if problems:
        raise ConfigError(problems)
    return policy.replace(net=(*policy.net, *added))
