"""Network, host names (SPEC §2.4): the guard's own lookups, the pins of the names a host-name
rule covers, the names given to ``connect``/``bind``/``sendto``/``sendmsg``, and the handlers
of the resolver's events (``getaddrinfo``, ``gethostbyname``, ``gethostbyaddr``,
``getnameinfo``). What they decide is described in ``guard/network.py``'s module docstring.

The factories of :func:`pysandboxes.guard.network.make_net_handlers` (issue 24 item 6): each
captures what its closures use when the guard is armed, and no closure looks a name up in this
module's namespace, which the program can reach (``tests/unit/guard/test_run_time_state.py``).
"""

from __future__ import annotations

import _socket

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple

    from pysandboxes.guard.kit import Busy, Kit
    from pysandboxes.guard.net_address import JudgeAddress, NetValues, RefuseNet
    from pysandboxes.policy.precedence import NetRow

    Match = Callable[..., tuple[bool, str | None, str | None]]
    #: ``lookup(host, family, flags)``: the address keys, or None.
    Lookup = Callable[[str, int, int], list[Any] | None]
    #: ``judge_name(proto, name, port, direction, family)``, and ``judge_host`` alike.
    JudgeName = Callable[[str, str, Any, str, int], None]
else:
    from pysandboxes.record import NamedTuple


def make_lookup(
    *,
    busy_marks: tuple[Callable[[], Busy], Callable[[Busy], None]],
    ip_key: Callable[[str], Any],
) -> Lookup:
    """``lookup(host, family, flags)``: the guard's own ``getaddrinfo`` (the same hints as
    CPython's ``setipaddr``), with the busy mark (its own query raises events)."""

    enter, leave = busy_marks
    getaddrinfo = _socket.getaddrinfo
    lookup_failed = (OSError, UnicodeError, ValueError)

    def lookup(host: str, family: int, flags: int) -> list[Any] | None:
        """The guard's own ``getaddrinfo`` (the same hints as CPython's ``setipaddr``): the
        address keys, or ``None`` when it fails. ``host`` goes as bytes: a ``str`` would pass
        through the ``idna`` codec, Python code the program could have replaced."""

        state = enter()
        try:
            answers = getaddrinfo(host.encode("ascii"), None, family, 0, 0, flags)
        except lookup_failed:
            return None
        finally:
            leave(state)
        keys = []
        for answer in answers:
            sockaddr: Any = answer[4]
            key = ip_key(sockaddr[0])
            if key is None:
                return None
            keys.append(key)
        return keys

    return lookup


def make_deny_check(rows: tuple[NetRow, ...]) -> Callable[[str, int, str], bool]:
    """``deny_applies(proto, port, direction)``: whether some DENY rule covers this protocol,
    port and direction (any host)."""

    deny_rows = tuple((row[1], row[7], row[8]) for row in rows if row[0])
    any_ = any

    def deny_applies(proto: str, port: int, direction: str) -> bool:
        """Whether some DENY rule covers this protocol, port and direction (any host)."""

        for rproto, ports, rdir in deny_rows:
            if rproto != "*" and proto != "*" and rproto != proto:
                continue
            if rdir != "*" and rdir != direction:
                continue
            if ports is not None and not any_(lo <= port <= hi for lo, hi in ports):
                continue
            return True
        return False

    return deny_applies


def make_pin(
    *,
    kit: Kit,
    names_rules: frozenset[str],
    pins: dict[Any, frozenset[str]],
    allowed_before: set[Any],
) -> Callable[[str, list[Any]], None]:
    """``pin(name, keys)``: the addresses a name resolved to stand for that name in ``pins``
    (ip key -> names), when a host-name rule names it (``names_rules``); ``allowed_before``,
    the addresses already allowed, is emptied (a pinned name may make a DENY name rule
    apply)."""

    len_ = kit.len
    frozenset_ = frozenset

    def pin(name: str, keys: list[Any]) -> None:
        if name not in names_rules:
            return  # no rule names it: a pin would change no decision
        for key in keys:
            known = pins.get(key)
            if len_(pins) > 4096:
                pins.clear()
            pins[key] = frozenset_((name,)) if known is None else known | frozenset_((name,))
        allowed_before.clear()

    return pin


class NameJudges(NamedTuple):
    """:func:`make_name_judges`' functions, ``(proto, name, port, direction, family)``."""

    #: A host name looked up by the program (the resolver's events).
    judge_name: JudgeName
    #: A host that is not an address literal, in connect, bind, sendto or sendmsg.
    judge_host: JudgeName


def make_name_judges(
    *,
    match: Match,
    lookup: Lookup,
    judge_address: JudgeAddress,
    refuse_net: RefuseNet,
    pin: Callable[[str, list[Any]], None],
    deny_applies: Callable[[str, int, str], bool],
    names_rules: frozenset[str],
    local_names: frozenset[str],
) -> NameJudges:
    """The judgment of host names: refused before any query unless a rule can allow them,
    resolved by the guard, every answer judged, pinned when a host-name rule names them.
    ``local_names``: the names that resolve without a query (``localhost``...)."""

    ai_numerichost = _socket.AI_NUMERICHOST

    def judge_name(proto: str, name: str, port: Any, direction: str, family: int) -> None:
        """A host name looked up by the program: refused before any query unless a rule can
        allow it; a name that a host-name rule covers is resolved here, judged and pinned."""

        name = name.lower()
        if name.endswith("."):
            name = name[:-1]
        if name in local_names:
            if name not in names_rules:
                return  # no query leaves; the addresses are judged where they are used
        else:
            allowed, rule, origin = match(proto, (name,), None, port, direction)
            if not allowed:
                refuse_net(proto, name, name, port, direction, rule, origin, "")
                return
            if name not in names_rules:
                return  # allowed by a "*" host: the addresses are judged when used
        keys = lookup(name, family, 0)
        if keys is None:
            return  # the program's own lookup fails the same way
        for key in keys:
            judge_address(proto, name, key, port, direction)
        pin(name, keys)

    def judge_host(proto: str, host: str, port: int, direction: str, family: int) -> None:
        """A host that is not an address literal, in connect, bind, sendto or sendmsg.

        CPython has already resolved it (``setipaddr``, before the audit event) and will use
        that answer: the guard resolves it the same way and judges *every* answer, so a DENY
        of any address the name stands for wins. A numeric form that ``inet_pton`` does not
        read (``127.1``, ``2130706433``, ``0x7f.0.0.01``) is an address, judged as such.

        The guard's answer need not be CPython's (a DNS server may answer two queries
        differently): where that could matter -- a name no host-name rule names, allowed by a
        ``*`` host, while a DENY rule applies to this protocol, port and direction -- the name
        is refused unless it is ``localhost``; resolving first (``getaddrinfo``, as
        ``socket.create_connection`` does) gives an address that is judged exactly.
        """

        keys = lookup(host, family, ai_numerichost)
        if keys is not None:
            for key in keys:
                judge_address(proto, None, key, port, direction)
            return
        name = host.lower()
        if name.endswith("."):
            name = name[:-1]
        if name not in local_names:  # ``localhost``: judged by its addresses alone
            allowed, rule, origin = match(proto, (name,), None, port, direction)
            if not allowed:
                refuse_net(proto, name, name, port, direction, rule, origin, "")
                return
        keys = lookup(host, family, 0)
        if not keys:
            refuse_net(
                proto,
                name,
                name,
                port,
                direction,
                None,
                None,
                "",
                "the guard could not resolve the name to check the addresses it stands for",
            )
            return
        for key in keys:
            judge_address(proto, name, key, port, direction)
        if (
            name not in local_names
            and name not in names_rules
            and deny_applies(proto, port, direction)
        ):
            refuse_net(
                proto,
                name,
                name,
                port,
                direction,
                None,
                None,
                "",
                "a name allowed only by a '*' host is resolved inside the call, where python-sb "
                "cannot pin the address, and a DENY rule applies; resolve it first with "
                "socket.getaddrinfo (socket.create_connection does) and use the address",
            )
            return
        pin(name, keys)

    return NameJudges(judge_name=judge_name, judge_host=judge_host)


def make_lookup_arguments(
    *, kit: Kit, values: NetValues, refuse_net: RefuseNet
) -> tuple[Callable[[Any], str | None], Callable[[], None]]:
    """``lookup_text(obj)``, the text of a host given to a lookup function (``str``,
    ``bytes`` or a subclass, else ``None``), and ``refuse_mutable_lookup()``, the refusal of a
    host given as a ``bytearray`` (it could change between the judgment and the query)."""

    type_, decode = kit.type, kit.decode
    str_, bytes_ = str, bytes
    exact = values.exact

    def lookup_text(obj: Any) -> str | None:
        """The text of a host given to a lookup function (str, bytes or a subclass)."""

        value = exact(obj)
        if type_(value) is bytes_:
            return decode(value, "ascii", "surrogateescape")
        if type_(value) is str_:
            return value  # type: ignore[no-any-return]
        return None

    def refuse_mutable_lookup() -> None:
        refuse_net(
            "*",
            None,
            "?",
            None,
            "OUT",
            None,
            None,
            "",
            "a host given as a bytearray (python-sb judges str and bytes hosts only)",
        )

    return lookup_text, refuse_mutable_lookup


def make_resolver_handlers(
    *,
    kit: Kit,
    busy: dict[int, int],
    values: NetValues,
    ip_key: Callable[[str], Any],
    match: Match,
    pins: dict[Any, frozenset[str]],
    lookup: Lookup,
    judge_name: JudgeName,
    own_address: Callable[[Any], bool],
    refuse_net: RefuseNet,
    names_rules: frozenset[str],
    local_names: frozenset[str],
) -> dict[str, Callable[[tuple[Any, ...]], None]]:
    """The handlers of ``socket.getaddrinfo``, ``socket.gethostbyname``,
    ``socket.gethostbyaddr`` and ``socket.getnameinfo``: a name no rule can allow is refused
    before its query leaves; an address (a literal, or a form only ``getaddrinfo`` reads)
    goes without a query and is judged where it is used (the reverse lookups:
    :func:`make_reverse_handler`)."""

    get_ident = kit.get_ident
    type_, len_ = kit.type, kit.len
    int_ = int
    exact, mutable = values.exact, values.mutable
    lookup_text, refuse_mutable_lookup = make_lookup_arguments(
        kit=kit, values=values, refuse_net=refuse_net
    )
    af_inet = _socket.AF_INET
    sock_stream, sock_dgram = _socket.SOCK_STREAM, _socket.SOCK_DGRAM
    ai_numerichost = _socket.AI_NUMERICHOST
    # Hosts no query leaves for, and that no host-name rule names (those are resolved, pinned).
    literal_hosts: set[str] = (set(local_names) - names_rules) | {"<broadcast>"}

    def is_numeric(host: str, family: int) -> bool:
        """An address CPython resolves without a query (a literal, or an ``inet_aton`` form)."""

        if ip_key(host) is not None:
            return True
        return host.isascii() and lookup(host, family, ai_numerichost) is not None

    def on_getaddrinfo(args: tuple[Any, ...]) -> None:
        if get_ident() in busy:
            return
        host = lookup_text(args[0])
        if host is None or host == "" or host in literal_hosts:
            return  # None: no host (CPython refuses any other type before the event)
        family = args[2] if len_(args) > 2 and type_(args[2]) is int_ else 0
        if is_numeric(host, family):
            if len_(literal_hosts) < 256:
                literal_hosts.add(host)  # an address: no query leaves, connect judges it
            return
        port = args[1] if type_(args[1]) is int_ else None
        stype = args[3] if len_(args) > 3 and type_(args[3]) is int_ else 0
        proto = "TCP" if stype == sock_stream else "UDP" if stype == sock_dgram else "*"
        # The event does not carry the flags (AI_PASSIVE): a lookup for a server (asyncio's
        # create_server) is judged as IN when no OUT rule could allow the name.
        name = host.lower().removesuffix(".")  # policy.netrules.host_key, inline
        direction = "OUT"
        if (
            not match(proto, (name,), None, port, "OUT")[0]
            and match(proto, (name,), None, port, "IN")[0]
        ):
            direction = "IN"
        judge_name(proto, host, port, direction, family)

    def on_gethostbyname(args: tuple[Any, ...]) -> None:
        if get_ident() in busy or not args:
            return
        if exact(args[0]) is mutable:
            refuse_mutable_lookup()
            return
        host = lookup_text(args[0])
        if host is None or host == "" or host in literal_hosts or is_numeric(host, af_inet):
            return
        judge_name("*", host, None, "OUT", 0)

    on_reverse = make_reverse_handler(
        kit=kit,
        busy=busy,
        values=values,
        ip_key=ip_key,
        match=match,
        pins=pins,
        lookup=lookup,
        judge_name=judge_name,
        own_address=own_address,
        refuse_net=refuse_net,
        lookup_arguments=(lookup_text, refuse_mutable_lookup),
    )
    return {
        "socket.getaddrinfo": on_getaddrinfo,
        "socket.gethostbyname": on_gethostbyname,
        "socket.gethostbyaddr": on_reverse,
        "socket.getnameinfo": on_reverse,
    }


def make_reverse_handler(
    *,
    kit: Kit,
    busy: dict[int, int],
    values: NetValues,
    ip_key: Callable[[str], Any],
    match: Match,
    pins: dict[Any, frozenset[str]],
    lookup: Lookup,
    judge_name: JudgeName,
    own_address: Callable[[Any], bool],
    refuse_net: RefuseNet,
    lookup_arguments: tuple[Callable[[Any], str | None], Callable[[], None]],
) -> Callable[[tuple[Any, ...]], None]:
    """The handler of ``socket.gethostbyaddr`` and ``socket.getnameinfo``: every address the
    host stands for judged as ``OUT`` (a name: judged as a forward lookup); the name of the
    program's own loopback server (``own_address``) belongs to its IN grant.
    ``lookup_arguments``: :func:`make_lookup_arguments`' two functions."""

    get_ident = kit.get_ident
    exact, mutable, is_tuple = values.exact, values.mutable, values.is_tuple
    text_ip = values.text_ip
    lookup_text, refuse_mutable_lookup = lookup_arguments
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    ai_numerichost = _socket.AI_NUMERICHOST

    def on_reverse(args: tuple[Any, ...]) -> None:
        if get_ident() in busy or not args:
            return
        address = args[0]
        if is_tuple(address):  # getnameinfo: a sockaddr tuple, its host numeric only
            if tuple_len(address) < 1:
                return
            address = tuple_item(address, 0)
        if exact(address) is mutable:
            refuse_mutable_lookup()
            return
        host = lookup_text(address)
        if host is None:
            return
        key = ip_key(host)
        keys = [key] if key is not None else None
        if keys is None and host.isascii():
            keys = lookup(host, 0, ai_numerichost)
        if keys is None:
            judge_name("*", host, None, "OUT", 0)  # gethostbyaddr of a name: a forward query
            return
        for key in keys:
            allowed, rule, origin = match("*", pins.get(key, ()), key, None, "OUT")
            if not allowed and rule is None and own_address(key):
                continue  # the name of the program's own loopback server (getfqdn)
            if not allowed:
                refuse_net("*", None, text_ip(key), None, "OUT", rule, origin, text_ip(key))

    return on_reverse
