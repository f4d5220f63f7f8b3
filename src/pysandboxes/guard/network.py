"""Network (SPEC §2.4, §3.2): ``net=`` rules applied to socket events.

:func:`build_rules` compiles the policy's ``net=`` lines at arm time into plain tuples
(address ranges as integers); :func:`make_matcher` applies them with the precedence of
:func:`pysandboxes.policy.decide.net_decision` -- a matching DENY wins from any file, then a
matching ALLOW, else refused -- and the unit tests check that both agree. Addresses are parsed
with ``_socket.inet_pton`` (an IPv4-mapped IPv6 address is judged as IPv4).

Host names: a name that no ``net=`` line can allow (no rule for that name, no ``*`` host) is
refused *before* any query leaves (``getaddrinfo``, ``gethostbyname``, a name in ``connect``).
A name allowed by a host-name rule is resolved by the guard itself when the program resolves
it; the answers are checked and *pinned*: a later connection to one of those addresses is
judged as that name, any other address by the address rules alone, so a second lookup cannot
swap in another address. ``localhost`` resolves without a query and is always allowed to;
its addresses are judged by the address rules.

AF_UNIX addresses are paths: they are judged by the file rules (connect and bind write).
Raw and packet sockets, and families other than IPv4, IPv6 and Unix, are refused.
"""

from __future__ import annotations

import _socket
from collections.abc import Callable

from pysandboxes.guard.denials import CONNECTION, PERMISSION, Reporter
from pysandboxes.guard.kit import Kit, make_busy
from pysandboxes.policy.model import Policy

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (guard/record.py)
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from pysandboxes.guard.record import NamedTuple

# (is_deny, proto, kind, name, version, network, mask, ports, direction, text, origin)
if TYPE_CHECKING:
    NetRow = tuple[bool, str, str, str, int, int, int, Any, str, str, str]

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def build_rules(policy: Policy) -> tuple[NetRow, ...]:
    """The ``net=`` rules as tuples, DENY rules first."""

    rows: list[NetRow] = []
    for rule in policy.net:
        version = network = mask = 0
        if rule.host == "*":
            kind, name = "any", ""
        elif rule.is_name:
            kind, name = "name", rule.host.lower().removesuffix(".")
        else:
            import ipaddress  # only for address rules

            net = ipaddress.ip_network(rule.host, strict=False)
            if isinstance(net, ipaddress.IPv6Network) and net.prefixlen >= 96:
                mapped = int(net.network_address)
                if mapped >> 32 == 0xFFFF:
                    net = ipaddress.IPv4Network((mapped & 0xFFFFFFFF, net.prefixlen - 96))
            kind, name = "ip", ""
            version, network, mask = net.version, int(net.network_address), int(net.netmask)
        rows.append(
            (
                rule.action == "DENY",
                rule.proto,
                kind,
                name,
                version,
                network,
                mask,
                rule.ports,
                rule.direction,
                rule.text,
                str(rule.origin),
            )
        )
    rows.sort(key=lambda row: not row[0])
    return tuple(rows)


if TYPE_CHECKING:
    Matcher = Callable[[str, Any, Any, Any, str], tuple[bool, str | None, str | None]]


def make_matcher(rows: tuple[NetRow, ...]) -> Matcher:
    """``match(proto, names, ip_key, port, direction) -> (allowed, rule_text, origin)``.

    ``names``: host names the address stands for (a tuple, maybe empty); ``ip_key``:
    ``(version, int)`` or ``None`` (not known yet); ``port``: ``None`` when not known (any port
    matches); ``proto``: ``"*"`` when not known (any protocol matches).
    """

    def matches(row: NetRow, proto: str, names: Any, key: Any, port: Any, direction: str) -> bool:
        _deny, rproto, kind, name, version, network, mask, ports, rdir, _t, _o = row
        if rproto != "*" and proto != "*" and rproto != proto:
            return False
        if rdir != "*" and rdir != direction:
            return False
        if ports is not None and port is not None:
            for lo, hi in ports:
                if lo <= port <= hi:
                    break
            else:
                return False
        if kind == "any":
            return True
        if kind == "name":
            return name in names
        return key is not None and key[0] == version and (key[1] & mask) == network

    def match(
        proto: str, names: Any, key: Any, port: Any, direction: str
    ) -> tuple[bool, str | None, str | None]:
        for row in rows:
            if matches(row, proto, names, key, port, direction):
                return (not row[0]), row[9], row[10]
        return False, None, None

    return match


class NetHandlers(NamedTuple):
    handlers: dict[str, Callable[[tuple[Any, ...]], None]]
    ip_key: Callable[[str], Any]


def make_ip_key(kit: Kit) -> Callable[[str], Any]:
    inet_pton = _socket.inet_pton
    from_bytes = kit.int_from_bytes
    af4, af6 = _socket.AF_INET, _socket.AF_INET6

    def ip_key(text: str) -> Any:
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        if "%" in text:
            text = text.split("%", 1)[0]
        try:
            return (4, from_bytes(inet_pton(af4, text), "big"))
        except (OSError, ValueError, TypeError):
            pass
        try:
            value = from_bytes(inet_pton(af6, text), "big")
        except (OSError, ValueError, TypeError):
            return None
        if value >> 32 == 0xFFFF:
            return (4, value & 0xFFFFFFFF)
        return (6, value)

    return ip_key


def make_net_handlers(
    rows: tuple[NetRow, ...],
    kit: Kit,
    reporter: Reporter,
    judge_file: Callable[[Any, bool, Any], str | None],
    busy: dict[int, int],
) -> NetHandlers:
    match = make_matcher(rows)
    ip_key = make_ip_key(kit)
    refuse = reporter.refuse
    record = reporter.record
    recording = reporter.recording
    type_ = kit.type
    get_ident = kit.get_ident
    enter, leave = make_busy(kit, busy)
    getaddrinfo = _socket.getaddrinfo
    family_of = _socket.socket.__dict__["family"].__get__
    type_of = _socket.socket.__dict__["type"].__get__
    af_inet, af_inet6, af_unix = _socket.AF_INET, _socket.AF_INET6, _socket.AF_UNIX
    sock_stream, sock_dgram = _socket.SOCK_STREAM, _socket.SOCK_DGRAM
    sock_raw = _socket.SOCK_RAW
    ai_passive = _socket.AI_PASSIVE
    str_, int_, tuple_, bytes_ = str, int, tuple, bytes
    frozenset_ = frozenset
    len_ = kit.len
    mro_of = type.__dict__["__mro__"].__get__
    names_rules = frozenset_(row[3] for row in rows if row[2] == "name" and not row[0])
    pins: dict[Any, frozenset[str]] = {}  # ip key -> names it was resolved for
    # Address connections already allowed (socket type, host text, port, direction); emptied
    # whenever a pin changes (a pinned name may make a DENY name rule apply to an address).
    allowed_before: set[tuple[int, str, int, str]] = set()
    literal_hosts: set[str] = set(_LOCAL_NAMES)  # no query leaves for these names

    inet_ntop = _socket.inet_ntop
    to_bytes = int.to_bytes

    def text_ip(key: Any) -> str:
        version, value = key
        if version == 4:
            return inet_ntop(af_inet, to_bytes(value, 4, "big"))
        return inet_ntop(af_inet6, to_bytes(value, 16, "big"))

    def proto_of(sock: Any) -> str:
        kind = type_of(sock) & 0xF
        if kind == sock_stream:
            return "TCP"
        if kind == sock_dgram:
            return "UDP"
        return "*"

    def refuse_net(
        proto: str,
        host: str | None,
        shown: str,
        port: Any,
        direction: str,
        rule: str | None,
        origin: str | None,
        ip: str,
    ) -> None:
        port_text = "*" if port is None else int_.__repr__(port)
        target = "[" + shown + "]:" + port_text
        verb = "Connection to " if direction == "OUT" else "Bind to "
        fields = (
            ("kind", "net"),
            ("proto", proto),
            ("host", host),
            ("ip", ip),
            ("port", port),
            ("dir", direction),
        )
        if rule is not None:
            message = f"{verb}{target} DENIED by explicit rule '{rule}' from {origin}"
            suggestion = None
        else:
            message = f"{verb}{target} DENIED: no net= rule allows it"
            suggestion = (
                "net=ALLOW|"
                + ("TCP" if proto == "*" else proto)
                + "|"
                + shown
                + "|"
                + port_text
                + "|"
                + direction
            )
        refuse(
            "net", target, rule, origin, suggestion, direction, message, CONNECTION, None, fields
        )

    def judge_address(proto: str, host: str | None, key: Any, port: Any, direction: str) -> None:
        names = pins.get(key, ()) if host is None else (host,)
        allowed, rule, origin = match(proto, names, key, port, direction)
        if allowed and not recording:
            return
        ip = text_ip(key)
        if allowed:
            if recording:
                record(
                    (
                        ("kind", "net"),
                        ("proto", proto),
                        ("host", host),
                        ("ip", ip),
                        ("port", port),
                        ("dir", direction),
                    )
                )
            return
        refuse_net(proto, host, ip, port, direction, rule, origin, ip)

    def judge_name(
        proto: str, name: str, port: Any, direction: str, family: int, stype: int
    ) -> None:
        """A host name: refused before any query unless a rule can allow it; pinned."""

        name = name.lower()
        if name.endswith("."):
            name = name[:-1]
        if name in _LOCAL_NAMES:
            return
        allowed, rule, origin = match(proto, (name,), None, port, direction)
        if not allowed:
            refuse_net(proto, name, name, port, direction, rule, origin, "")
            return
        if name not in names_rules:
            return  # allowed by a "*" host: the addresses are judged when used
        state = enter()
        try:
            answers = getaddrinfo(name, port, family, stype)
        except OSError:
            return  # the program's own lookup fails the same way
        finally:
            leave(state)
        for answer in answers:
            address: Any = answer[4]
            key = ip_key(address[0])
            if key is None:
                continue
            judge_address(proto, name, key, port, direction)
            known = pins.get(key)
            if len_(pins) > 4096:
                pins.clear()
            pins[key] = frozenset_((name,)) if known is None else known | frozenset_((name,))
            allowed_before.clear()

    def judge_inet(sock: Any, address: Any, direction: str) -> None:
        if type_(address) is not tuple_ or len_(address) < 2:
            return  # CPython rejects it before any packet
        host, port = address[0], address[1]
        if type_(port) is not int_:
            return
        fast_key = None
        if type_(host) is str_:  # exact types only: hashing runs no program code
            fast_key = (type_of(sock), host, port, direction)
            if fast_key in allowed_before:
                return
        if type_(host) is not str_:
            for base in mro_of(type_(host)):  # not isinstance(): no program code in the hook
                if base is str_:
                    host = str_.__str__(host)
                    break
            else:
                return
        proto = proto_of(sock)
        key = (
            ip_key(host)
            if host not in ("", "<broadcast>")
            else ((4, 0) if host == "" else (4, 0xFFFFFFFF))
        )
        if key is not None:
            judge_address(proto, None, key, port, direction)
            if fast_key is not None and not recording:
                if len_(allowed_before) > 1024:
                    allowed_before.clear()
                allowed_before.add(fast_key)  # judge_address returned: allowed
            return
        judge_name(proto, host, port, direction, family_of(sock), type_of(sock))

    def judge_sock(sock: Any, address: Any, direction: str) -> None:
        family = family_of(sock)
        if family in (af_inet, af_inet6):
            judge_inet(sock, address, direction)
        elif family == af_unix:
            if type_(address) in (str_, bytes_) and address[:1] in ("\0", b"\0"):
                fields = (("kind", "file"), ("op", "write"), ("path", "@abstract"))
                refuse(
                    "file",
                    "@" + (address[1:] if type_(address) is str_ else "abstract"),
                    None,
                    None,
                    None,
                    "unix",
                    "Connection to an abstract AF_UNIX socket DENIED: it has no path that "
                    "the file rules could expose",
                    PERMISSION,
                    None,
                    fields,
                )
                return
            judge_file(address, True, -1)

    def on_connect(args: tuple[Any, ...]) -> None:
        judge_sock(args[0], args[1], "OUT")

    def on_bind(args: tuple[Any, ...]) -> None:
        judge_sock(args[0], args[1], "IN")

    def on_sendmsg(args: tuple[Any, ...]) -> None:
        if len_(args) > 1 and args[1] is not None:
            judge_sock(args[0], args[1], "OUT")

    def on_new(args: tuple[Any, ...]) -> None:
        family, stype = args[1], args[2]
        if type_(family) is not int_ or family == -1:
            return
        if family not in (af_inet, af_inet6, af_unix) or (
            type_(stype) is int_ and stype & 0xF == sock_raw
        ):
            refuse(
                "net",
                "socket family " + int_.__repr__(family),
                None,
                None,
                None,
                "socket",
                "Creating a raw, packet or non-IP socket DENIED: the Python layer allows "
                "IPv4, IPv6 and Unix sockets only",
                CONNECTION,
            )

    def on_getaddrinfo(args: tuple[Any, ...]) -> None:
        host = args[0]
        if type_(host) is bytes_:
            host = host.decode("ascii", "replace")
        if type_(host) is not str_ or host == "" or host in literal_hosts:
            return
        if get_ident() in busy:
            return
        if ip_key(host) is not None:
            if len_(literal_hosts) < 256:
                literal_hosts.add(host)  # an address: no query leaves, connect judges it
            return
        port = args[1] if type_(args[1]) is int_ else None
        stype = args[3] if len_(args) > 3 and type_(args[3]) is int_ else 0
        flags = args[5] if len_(args) > 5 and type_(args[5]) is int_ else 0
        family = args[2] if len_(args) > 2 and type_(args[2]) is int_ else 0
        proto = "TCP" if stype == sock_stream else "UDP" if stype == sock_dgram else "*"
        direction = "IN" if flags & ai_passive else "OUT"
        judge_name(proto, host, port, direction, family, stype)

    def on_gethostbyname(args: tuple[Any, ...]) -> None:
        host = args[0]
        if type_(host) is str_ and ip_key(host) is None and host:
            judge_name("*", host, None, "OUT", 0, 0)

    def on_reverse(args: tuple[Any, ...]) -> None:
        address = args[0]
        host = address[0] if type_(address) is tuple_ and address else address
        if type_(host) is not str_:
            return
        key = ip_key(host)
        if key is None:
            judge_name("*", host, None, "OUT", 0, 0)
            return
        allowed, rule, origin = match("*", pins.get(key, ()), key, None, "OUT")
        if not allowed:
            refuse_net("*", None, text_ip(key), None, "OUT", rule, origin, text_ip(key))

    handlers: dict[str, Callable[[tuple[Any, ...]], None]] = {
        "socket.connect": on_connect,
        "socket.bind": on_bind,
        "socket.sendto": on_sendmsg,
        "socket.sendmsg": on_sendmsg,
        "socket.__new__": on_new,
        "socket.getaddrinfo": on_getaddrinfo,
        "socket.gethostbyname": on_gethostbyname,
        "socket.gethostbyaddr": on_reverse,
        "socket.getnameinfo": on_reverse,
    }
    return NetHandlers(handlers=handlers, ip_key=ip_key)
