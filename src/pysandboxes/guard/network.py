"""Network (SPEC §2.4, §3.2): ``net=`` rules applied to socket events.

:func:`build_rules` compiles the policy's ``net=`` lines at arm time into plain tuples
(address ranges as integers); :func:`make_matcher` applies them with the one precedence of
``policy/precedence.py``, which :func:`pysandboxes.policy.decide.net_decision` uses too -- a
matching DENY wins from any file, then a matching ALLOW, else refused. Addresses are parsed
with ``_socket.inet_pton`` (an IPv4-mapped IPv6 address is judged as IPv4).

Host names: a name that no ``net=`` line can allow (no rule for that name, no ``*`` host) is
refused *before* any query leaves (``getaddrinfo``, ``gethostbyname``, ``gethostbyaddr``). A
name allowed by a host-name rule is resolved by the guard itself when the program resolves
it; the answers are checked and *pinned*: a later connection to one of those addresses is
judged as that name, any other address by the address rules alone, so a second lookup cannot
swap in another address. ``localhost`` resolves without a query: the lookup is let through,
its addresses are judged where they are used.

A name in ``connect``/``bind``/``sendto``/``sendmsg`` itself: CPython resolves it *before*
the audit event (``getsockaddrarg``) and connects to that answer, which the hook cannot see or
replace. The guard judges the name (refused when no rule can allow it), resolves it the same
way (``getaddrinfo`` with the socket's family) and judges *every* answer by the address rules:
a DENY of any address the name stands for wins, and a name allowed only by a ``*`` rule still
meets ``net=DENY|*|10.0.0.0/8|*|OUT``. The guard's answer need not be the one CPython uses (a
DNS server may answer two queries differently: rebinding), so a name allowed only by a ``*``
host is refused in these calls whenever a DENY rule applies (SPEC §2.4's intranet example);
programs that resolve first (``socket.create_connection``, ``asyncio``, ``urllib``,
``http.client``, ``requests``) connect to a numeric address, judged exactly, and are not
affected. A name a host-name rule allows is trusted as far as that rule. CPython's order
would let the program's own query leave before the hook runs; so when a socket of a new class
is made, the guard puts a pre-check in front of ``socket.socket``'s ``connect``,
``connect_ex``, ``bind`` and ``sendto`` (:func:`make_precheck_installer`) that judges the name
first: an uncovered name is refused before its query leaves. Only the C methods called
directly (``_socket.socket.connect``) skip it: that one query then leaves before the refusal
(``tests/e2e/test_guard_dns.py``).

What CPython accepts is judged as CPython reads it: hosts as ``str``, ``bytes`` or their
subclasses (copied with the C methods, no program code), ports as an ``int``, ``bool`` or int
subclass by value; a numeric form ``inet_pton`` does not read (``127.1``, ``2130706433``,
``0x7f.0.0.01``: ``getaddrinfo`` with ``AI_NUMERICHOST``) is an address; ``""``, ``0.0.0.0``
and ``::`` are judged as the loopback address for ``OUT`` (where Linux sends them). Refused
rather than judged: a ``bytearray`` host (it could change between CPython's copy and the
judgment), a port given as an ``__index__`` object (its method would run inside the hook), a
non-ASCII host in ``connect`` (it needs the ``idna`` codec, Python code: resolve it with
``getaddrinfo`` first). The guard never hands a ``str`` to ``getaddrinfo`` for the same reason.

The program's own server belongs to the IN grant (SPEC §2.4, docs/network.md): a connection or
datagram to a loopback address that no OUT rule allows and no DENY refuses is allowed when a
socket the program bound under an IN rule (remembered by a weak reference when its bind or
listen is judged) holds that address and port alone (``own_server``,
``guard/net_sockets.py``); :func:`pysandboxes.policy.decide.net_decision` takes the same
sockets as ``own_sockets``. The other loopback address of such a port (``localhost``'s second
answer) gets the kernel's ``ConnectionRefusedError``, without a denial.

UDP replies belong to the IN grant (SPEC §2.4): a send from a UDP socket whose local endpoint an
``IN`` rule grants, to an address that sent it a datagram, is allowed unless a DENY rule covers
it. The senders are learned from the receive methods :func:`make_receive_methods` puts on the
socket class, which raise ``pysandboxes.received``; the event is believed only when the frame
that raised it called the C method itself (see there).

AF_UNIX addresses are paths: they are judged by the file rules (connect and bind write), up to
the first NUL (where the kernel stops reading). Sockets: IPv4/IPv6 ``SOCK_STREAM`` (TCP) and
``SOCK_DGRAM`` (UDP) and Unix stream, datagram and seqpacket sockets only: raw, packet
(``SOCK_PACKET``), ICMP, SCTP and other families are refused at creation, and any address
operation on a socket of another family. ``listen`` on an unbound socket (which the kernel
binds to a free port on every interface) raises no audit event in CPython 3.11: the pre-check
of ``socket.socket.listen`` judges it as that bind (``IN``, the any-address, port 0); the C
method called directly is not judged. A TCP bind to port 0 on a loopback address is judged at
that same pre-check, when the socket listens (``defer_bind``, ``guard/net_sockets.py``): a
bind alone serves nothing (urllib3's IPv6 check binds ``::1`` port 0 and closes), so it needs no
``IN`` rule and is neither refused nor recorded.

Where the code is: this module holds the rules' matcher, the socket handlers and pre-checks,
and :func:`make_net_handlers`, which assembles the handlers from small factories, here and in
``guard/net_address.py`` (what an event's arguments say, one address judged),
``guard/net_names.py`` (host names: the guard's lookups, pins, the resolver's events) and
``guard/net_sockets.py`` (the program's own sockets: servers, deferred binds, UDP peers). Each
factory captures what its closures use when the guard is armed.
"""

from __future__ import annotations

import _socket
import os

from pysandboxes.guard.denials import CONNECTION, PERMISSION, Reporter
from pysandboxes.guard.kit import Kit, make_busy
from pysandboxes.guard.net_address import make_address_judge, make_net_values, make_refuse_net
from pysandboxes.guard.net_names import (
    make_deny_check,
    make_lookup,
    make_name_judges,
    make_pin,
    make_resolver_handlers,
)
from pysandboxes.guard.net_sockets import make_deferred_binds, make_own_servers, make_udp_replies
from pysandboxes.policy.model import Policy

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple

    from pysandboxes.guard.kit import Busy
    from pysandboxes.guard.net_address import JudgeAddress, NetValues, RefuseNet
    from pysandboxes.policy.precedence import NetRow
else:
    from pysandboxes.record import NamedTuple

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def build_rules(policy: Policy) -> tuple[NetRow, ...]:
    """The ``net=`` rules as tuples, DENY rules first (``policy/precedence.net_rows``, the
    rows ``policy/decide`` matches too)."""

    from pysandboxes.policy.precedence import net_rows

    return net_rows(policy.net)


if TYPE_CHECKING:
    Matcher = Callable[[str, Any, Any, Any, str], tuple[bool, str | None, str | None]]


def make_matcher(rows: tuple[NetRow, ...]) -> Matcher:
    """``match(proto, names, ip_key, port, direction) -> (allowed, rule_text, origin)``: the
    one precedence of ``policy/precedence.make_net_matcher``.

    ``names``: host names the address stands for (a tuple, maybe empty); ``ip_key``:
    ``(version, int)`` or ``None`` (not known yet); ``port``: ``None`` when not known (any port
    matches); ``proto``: ``"*"`` when not known (any protocol matches).
    """

    from pysandboxes.policy.precedence import make_net_matcher

    answers = tuple(((not row[0]), row[9], row[10]) for row in rows)
    return make_net_matcher(rows, answers, (False, None, None))


class NetHandlers(NamedTuple):
    handlers: dict[str, Callable[[tuple[Any, ...]], None]]
    ip_key: Callable[[str], Any]


def make_ip_key(kit: Kit) -> Callable[[str], Any]:
    inet_pton = _socket.inet_pton
    from_bytes = kit.int_from_bytes
    af4, af6 = _socket.AF_INET, _socket.AF_INET6
    not_an_address = (OSError, ValueError, TypeError)  # captured: nothing read from the module

    def ip_key(text: str) -> Any:
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        if "%" in text:
            text = text.split("%", 1)[0]
        try:
            return (4, from_bytes(inet_pton(af4, text), "big"))
        except not_an_address:
            pass
        try:
            value = from_bytes(inet_pton(af6, text), "big")
        except not_an_address:
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
    """The network handlers of the hook, ``{event: handler}``, assembled from the factories
    of this module, ``guard/net_address.py`` (the address judging), ``guard/net_names.py``
    (host names, the resolver's events) and ``guard/net_sockets.py`` (the program's own
    sockets). Each factory captures what its closures use now, at arm time: the program can
    reach these modules' namespaces (a pre-check's ``__globals__``, ``sys.modules``) and
    rebind any name there, so no handler looks one up while it runs."""

    match = make_matcher(rows)
    ip_key = make_ip_key(kit)
    busy_marks = make_busy(kit, busy)
    values = make_net_values(kit)
    refuse_net = make_refuse_net(reporter)
    names_rules = frozenset(row[3] for row in rows if row[2] == "name")  # ALLOW or DENY
    local_names = _LOCAL_NAMES
    pins: dict[Any, frozenset[str]] = {}  # ip key -> names it was resolved for
    # Address connections already allowed (family, socket type, host text, port, direction);
    # emptied whenever a pin changes (a pinned name may make a DENY name rule apply).
    allowed_before: set[tuple[int, int, str, int, str]] = set()
    # TCP binds to port 0 on loopback, judged at listen (defer_bind): id -> (weak ref, address)
    pending_binds: dict[int, tuple[Any, Any]] = {}
    receive_methods, receive_codes = make_receive_methods(kit.audit)
    learning = reporter.recording and not reporter.auditing
    servers = make_own_servers(
        kit=kit, values=values, ip_key=ip_key, match=match, pins=pins, learning=learning
    )
    replies = make_udp_replies(
        kit=kit,
        busy_marks=busy_marks,
        values=values,
        ip_key=ip_key,
        match=match,
        pins=pins,
        receive_codes=receive_codes,
    )
    judge_address = make_address_judge(
        match=match,
        pins=pins,
        own_server=servers.own_server,
        reporter=reporter,
        text_ip=values.text_ip,
        refuse_net=refuse_net,
    )
    lookup = make_lookup(busy_marks=busy_marks, ip_key=ip_key)
    names = make_name_judges(
        match=match,
        lookup=lookup,
        judge_address=judge_address,
        refuse_net=refuse_net,
        pin=make_pin(kit=kit, names_rules=names_rules, pins=pins, allowed_before=allowed_before),
        deny_applies=make_deny_check(rows),
        names_rules=names_rules,
        local_names=local_names,
    )
    judge_unix = make_unix_judge(kit=kit, reporter=reporter, values=values, judge_file=judge_file)
    judge_sock = make_socket_judge(
        kit=kit,
        values=values,
        ip_key=ip_key,
        judge_address=judge_address,
        judge_host=names.judge_host,
        judge_unix=judge_unix,
        refuse_net=refuse_net,
        allowed_before=allowed_before,
        recording=reporter.recording,
    )
    defer_bind = make_deferred_binds(
        kit=kit, values=values, ip_key=ip_key, pending_binds=pending_binds
    )
    handlers = make_address_handlers(
        kit=kit,
        values=values,
        ip_key=ip_key,
        judge_sock=judge_sock,
        defer_bind=defer_bind,
        remember_bound=servers.remember_bound,
        is_reply=replies.is_reply,
        allowed_before=allowed_before,
        pending_binds=pending_binds,
        recording=reporter.recording,
    )
    handlers["socket.__new__"] = make_new_socket_check(
        kit=kit,
        busy_marks=busy_marks,
        reporter=reporter,
        install_prechecks=make_precheck_installer(kit.audit, receive_methods),
    )
    handlers["pysandboxes.received"] = replies.on_received
    handlers.update(
        make_resolver_handlers(
            kit=kit,
            busy=busy,
            values=values,
            ip_key=ip_key,
            match=match,
            pins=pins,
            lookup=lookup,
            judge_name=names.judge_name,
            own_address=servers.own_address,
            refuse_net=refuse_net,
            names_rules=names_rules,
            local_names=local_names,
        )
    )
    return NetHandlers(handlers=handlers, ip_key=ip_key)


def make_socket_judge(
    *,
    kit: Kit,
    values: NetValues,
    ip_key: Callable[[str], Any],
    judge_address: JudgeAddress,
    judge_host: Callable[[str, str, Any, str, int], None],
    judge_unix: Callable[[Any], None],
    refuse_net: RefuseNet,
    allowed_before: set[tuple[int, int, str, int, str]],
    recording: bool,
) -> Callable[[Any, Any, str], None]:
    """``judge_sock(sock, address, direction)``: the address of a socket operation judged by
    the socket's family -- IPv4/IPv6 by the ``net=`` rules (an address allowed before is
    kept in ``allowed_before``, the fast path), AF_UNIX by the file rules, any other family
    refused."""

    type_, len_ = kit.type, kit.len
    str_, int_ = str, int
    family_of = _socket.socket.__dict__["family"].__get__
    type_of = _socket.socket.__dict__["type"].__get__
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    af_unix = getattr(_socket, "AF_UNIX", -1)  # absent on some Windows builds
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    is_tuple, proto_of = values.is_tuple, values.proto_of
    host_text, port_number = values.host_text, values.port_number

    def judge_inet(sock: Any, address: Any, direction: str) -> None:
        family = family_of(sock)
        stype = type_of(sock)
        proto = proto_of(sock)
        if not is_tuple(address) or tuple_len(address) < 2:
            refuse_net(
                proto, None, "?", None, direction, None, None, "", "the address is not a tuple"
            )
            return
        host_obj, port_obj = tuple_item(address, 0), tuple_item(address, 1)
        fast_key = None
        if type_(host_obj) is str_ and type_(port_obj) is int_:
            fast_key = (family, stype, host_obj, port_obj, direction)
            if fast_key in allowed_before:
                return
        host = host_text(host_obj)
        port = port_number(port_obj)
        if host is None:
            refuse_net(
                proto,
                None,
                "?",
                port,
                direction,
                None,
                None,
                "",
                "the host is neither a str nor bytes, or not ASCII (resolve a non-ASCII name "
                "with socket.getaddrinfo first)",
            )
            return
        if port is None:
            refuse_net(
                proto,
                None,
                host,
                None,
                direction,
                None,
                None,
                "",
                "the port is not an int",
            )
            return
        if host == "":
            key = (4, 0) if family == af_inet else (6, 0)
        elif host == "<broadcast>":
            key = (4, 0xFFFFFFFF)
        elif host.startswith("["):
            key = None  # not an address for CPython: a name
        else:
            key = ip_key(host)
        if key is None:
            judge_host(proto, host, port, direction, family)
            return
        cacheable = judge_address(proto, None, key, port, direction)
        if fast_key is not None and cacheable and not recording:
            if len_(allowed_before) > 1024:
                allowed_before.clear()
            allowed_before.add(fast_key)  # judge_address returned: allowed

    def judge_sock(sock: Any, address: Any, direction: str) -> None:
        family = family_of(sock)
        if family in (af_inet, af_inet6):
            judge_inet(sock, address, direction)
        elif family == af_unix:
            judge_unix(address)
        else:
            refuse_net(
                "*",
                None,
                "family " + int_.__repr__(family),
                None,
                direction,
                None,
                None,
                "",
                "the Python layer allows IPv4, IPv6 and Unix sockets only",
            )

    return judge_sock


def make_unix_judge(
    *,
    kit: Kit,
    reporter: Reporter,
    values: NetValues,
    judge_file: Callable[[Any, bool, Any], str | None],
) -> Callable[[Any], None]:
    """``judge_unix(address)``: an AF_UNIX address is a path, judged by the file rules
    (``judge_file``, as a write) up to its first NUL; an abstract address (no path) and one
    that is neither ``str`` nor ``bytes`` are refused."""

    refuse = reporter.refuse
    permission_error = PERMISSION
    type_, str_ = kit.type, str
    exact, mutable = values.exact, values.mutable

    def refuse_unix(target: str, message: str) -> None:
        fields = (("kind", "file"), ("op", "write"), ("path", target))
        refuse("file", target, None, None, None, "unix", message, permission_error, None, fields)

    def judge_unix(address: Any) -> None:
        value = exact(address)
        if value is None or value is mutable:
            refuse_unix(
                "?",
                "Connection to an AF_UNIX socket DENIED: python-sb judges str and bytes paths only",
            )
            return
        nul = "\0" if type_(value) is str_ else b"\0"
        if value[:1] == nul:
            refuse_unix(
                "@" + (value[1:] if type_(value) is str_ else "abstract"),
                "Connection to an abstract AF_UNIX socket DENIED: it has no path that "
                "the file rules could expose",
            )
            return
        cut = value.find(nul)
        if cut >= 0:
            value = value[:cut]  # the kernel reads the path up to its first NUL
        judge_file(value, True, -1)

    return judge_unix


def make_address_handlers(
    *,
    kit: Kit,
    values: NetValues,
    ip_key: Callable[[str], Any],
    judge_sock: Callable[[Any, Any, str], None],
    defer_bind: Callable[[Any, Any], bool],
    remember_bound: Callable[[Any], None],
    is_reply: Callable[[Any, Any], bool],
    allowed_before: set[tuple[int, int, str, int, str]],
    pending_binds: dict[int, tuple[Any, Any]],
    recording: bool,
) -> dict[str, Callable[[tuple[Any, ...]], None]]:
    """The handlers of the address operations of a socket: ``socket.connect``, ``socket.bind``,
    ``socket.sendto``/``socket.sendmsg``, and the pre-checks' ``pysandboxes.sockaddr`` and
    ``pysandboxes.listen`` (:func:`make_precheck_installer`)."""

    type_, len_ = kit.type, kit.len
    str_, int_ = str, int
    family_of = _socket.socket.__dict__["family"].__get__
    type_of = _socket.socket.__dict__["type"].__get__
    getsockname = _socket.socket.getsockname
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    id_, os_error = id, OSError
    is_socket, is_tuple, host_text = values.is_socket, values.is_tuple, values.host_text
    numeric_hosts: set[str] = set()  # host strings the pre-check found to be addresses

    def on_sockaddr(args: tuple[Any, ...]) -> None:
        """``pysandboxes.sockaddr`` (sock, address, direction): raised by the ``socket.socket``
        methods :func:`make_precheck_installer` installs, *before* CPython resolves a name given in
        the address. Only names are judged here (an address is judged by CPython's own event,
        once); in learning and audit runs nothing is (the event that follows records it)."""

        if recording or len_(args) != 3:
            return
        sock, address, direction = args
        if not is_tuple(address) or tuple_len(address) < 2:
            return
        host_obj = tuple_item(address, 0)
        if type_(host_obj) is str_ and host_obj in numeric_hosts:
            return  # the common case, kept cheap: an address seen before
        if not is_socket(sock) or type_(direction) is not str_ or direction not in ("IN", "OUT"):
            return
        if family_of(sock) not in (af_inet, af_inet6):
            return
        host = host_text(host_obj)
        if host is None or host in ("", "<broadcast>"):
            return  # judged (or refused) by CPython's event, which follows
        if ip_key(host) is not None:
            if type_(host_obj) is str_ and len_(numeric_hosts) < 1024:
                numeric_hosts.add(host_obj)
            return
        judge_sock(sock, address, direction)

    def on_listen(args: tuple[Any, ...]) -> None:
        """``pysandboxes.listen`` (sock): ``listen`` on an unbound IPv4/IPv6 socket makes the
        kernel bind it to a free port on every interface, with no audit event: judged as that
        bind (``IN``, the any-address, port 0)."""

        if len_(args) != 1 or not is_socket(args[0]):
            return
        sock = args[0]
        family = family_of(sock)
        if family not in (af_inet, af_inet6):
            return
        try:
            port = tuple_item(getsockname(sock), 1)
        except os_error:
            return  # a closed socket: CPython's listen reports it
        if port == 0:
            judge_sock(sock, ("0.0.0.0" if family == af_inet else "::", 0), "IN")
        else:
            pending = pending_binds.pop(id_(sock), None)
            if pending is not None and pending[0]() is sock:
                judge_sock(sock, pending[1], "IN")  # the bind it deferred: now a server
        remember_bound(sock)

    def on_bind(args: tuple[Any, ...]) -> None:
        if not defer_bind(args[0], args[1]):
            judge_sock(args[0], args[1], "IN")
        remember_bound(args[0])  # judged (or recorded): the bind happens after this event

    def allowed_already(sock: Any, address: Any) -> bool:
        """The fast path of ``judge_inet``: an OUT to this exact address already allowed."""

        if not is_tuple(address) or tuple_len(address) < 2:
            return False
        host_obj, port_obj = tuple_item(address, 0), tuple_item(address, 1)
        if type_(host_obj) is not str_ or type_(port_obj) is not int_ or not is_socket(sock):
            return False
        return (family_of(sock), type_of(sock), host_obj, port_obj, "OUT") in allowed_before

    def on_sendmsg(args: tuple[Any, ...]) -> None:
        if len_(args) > 1 and args[1] is not None:
            if allowed_already(args[0], args[1]):
                return
            if is_reply(args[0], args[1]):
                return  # belongs to the IN grant, as the replies of an accepted connection
            judge_sock(args[0], args[1], "OUT")

    def on_connect(args: tuple[Any, ...]) -> None:
        if is_reply(args[0], args[1]):
            return  # a UDP server that connects its socket to a peer it answers
        judge_sock(args[0], args[1], "OUT")

    return {
        "socket.connect": on_connect,
        "pysandboxes.sockaddr": on_sockaddr,
        "pysandboxes.listen": on_listen,
        "socket.bind": on_bind,
        "socket.sendto": on_sendmsg,
        "socket.sendmsg": on_sendmsg,
    }


def make_new_socket_check(
    *,
    kit: Kit,
    busy_marks: tuple[Callable[[], Busy], Callable[[Busy], None]],
    reporter: Reporter,
    install_prechecks: Callable[[Any], None],
) -> Callable[[tuple[Any, ...]], None]:
    """The ``socket.__new__`` handler: puts the pre-checks on the socket's class
    (``install_prechecks``), and refuses a socket of a family or type the Python layer does
    not judge (IPv4/IPv6 TCP and UDP, Unix stream, datagram and seqpacket only), unless it
    wraps a descriptor that exists already."""

    refuse = reporter.refuse
    connection_error = CONNECTION
    enter, leave = busy_marks
    getframe = kit.getframe
    type_, len_ = kit.type, kit.len
    str_, int_ = str, int
    str_eq = str.__eq__
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    af_unix = getattr(_socket, "AF_UNIX", -1)  # absent on some Windows builds
    sock_stream, sock_dgram = _socket.SOCK_STREAM, _socket.SOCK_DGRAM
    unix_types = (sock_stream, sock_dgram, _socket.SOCK_SEQPACKET)
    type_flags = getattr(_socket, "SOCK_NONBLOCK", 0) | getattr(_socket, "SOCK_CLOEXEC", 0)
    tcp_protos = (-1, 0, _socket.IPPROTO_TCP)
    # UDP-Lite (IPPROTO_UDPLITE) is an IP datagram socket like UDP: judged by the UDP rules
    # (issue 27, cause 9); the kernel providers' rulesets let none of its packets out.
    udp_protos = (-1, 0, _socket.IPPROTO_UDP, getattr(_socket, "IPPROTO_UDPLITE", 0))
    socket_py = os.path.join(os.path.dirname(os.__file__), "socket.py")
    eight = (0,) * 8  # the frames looked at, at most (no range() lookup at run time)

    def on_new(args: tuple[Any, ...]) -> None:
        install_prechecks(args[0])
        family, stype = args[1], args[2]
        proto = args[3] if len_(args) > 3 else -1
        if type_(family) is not int_ or type_(stype) is not int_ or type_(proto) is not int_:
            return  # CPython passes C ints ("Oiii")
        if family == -1:
            return  # fileno= given: a descriptor that exists already, detected after this
        kind = sock_stream if stype == -1 else stype & ~type_flags
        if family in (af_inet, af_inet6):
            allowed = (kind == sock_stream and proto in tcp_protos) or (
                kind == sock_dgram and proto in udp_protos
            )
        elif family == af_unix:
            allowed = kind in unix_types
        else:
            allowed = False
        if allowed or wraps_descriptor():
            return
        refuse(
            "net",
            "socket family "
            + int_.__repr__(family)
            + " type "
            + int_.__repr__(stype)
            + " proto "
            + int_.__repr__(proto),
            None,
            None,
            None,
            "socket",
            "Creating a raw, packet or non-IP socket DENIED: the Python layer allows "
            "IPv4, IPv6 and Unix sockets only",
            connection_error,
        )

    def wraps_descriptor() -> bool:
        """Whether the socket being made wraps a descriptor that exists already: the caller
        of the C ``__init__`` is ``socket.socket.__init__`` of the standard library with a
        ``fileno`` (``socket.socket(family, type, proto, fileno=fd)``: the family given only
        labels the object, no socket is created; the address operations on it are judged by
        their own events, with that label). Read from the frames, with the busy mark."""

        state = enter()
        try:
            frame: Any = getframe(1)
            for _ in eight:
                frame = frame.f_back
                if frame is None:
                    return False
                code = frame.f_code
                name, where = code.co_name, code.co_filename
                # exact str compared in C: a str subclass's __eq__ never runs here
                if (
                    type_(where) is str_
                    and type_(name) is str_
                    and str_eq(where, socket_py)
                    and str_eq(name, "__init__")
                ):
                    found = frame.f_locals.get("fileno")
                    return found is not None and found is not False
            return False
        finally:
            frame = None
            leave(state)

    return on_new


def make_receive_methods(
    audit: Callable[..., None],
) -> tuple[tuple[tuple[str, Callable[..., Any], Any], ...], dict[Any, Any]]:
    """The ``recvfrom``, ``recvfrom_into``, ``recvmsg`` and ``recvmsg_into`` that
    :func:`make_precheck_installer` puts on the socket class, and ``{code: C method}``.

    Each calls the C method, then raises ``pysandboxes.received`` (socket, result): the address
    a datagram came from, so that a UDP server granted ``IN`` may answer it (SPEC §2.4: replies
    belong to the IN grant). The hook believes the event only when the frame that raised it
    runs one of these codes *and* its local ``fn`` is the C method of that code (held in the
    returned table, captured now): an event the program raises itself, or one of these
    functions whose closure cell was made to hold another callable, records nothing.
    """

    base = _socket.socket
    c_recvfrom: Any = base.recvfrom
    c_recvfrom_into: Any = base.recvfrom_into
    # recvmsg/sendmsg are POSIX's (Windows sockets have neither: nothing to wrap there).
    c_recvmsg: Any = getattr(base, "recvmsg", None)
    c_recvmsg_into: Any = getattr(base, "recvmsg_into", None)

    # (*args, **kwargs): a wrong call gets the C method's own TypeError (issue 27, cause 8).
    def recvfrom(*args: Any, **kwargs: Any) -> Any:
        fn = c_recvfrom
        result = fn(*args, **kwargs)
        audit("pysandboxes.received", args[0], result)
        return result

    def recvfrom_into(*args: Any, **kwargs: Any) -> Any:
        fn = c_recvfrom_into
        result = fn(*args, **kwargs)
        audit("pysandboxes.received", args[0], result)
        return result

    def recvmsg(*args: Any, **kwargs: Any) -> Any:
        fn = c_recvmsg
        result = fn(*args, **kwargs)
        audit("pysandboxes.received", args[0], result)
        return result

    def recvmsg_into(*args: Any, **kwargs: Any) -> Any:
        fn = c_recvmsg_into
        result = fn(*args, **kwargs)
        audit("pysandboxes.received", args[0], result)
        return result

    methods: tuple[tuple[str, Callable[..., Any], Any], ...] = (
        ("recvfrom", recvfrom, c_recvfrom),
        ("recvfrom_into", recvfrom_into, c_recvfrom_into),
        ("recvmsg", recvmsg, c_recvmsg),
        ("recvmsg_into", recvmsg_into, c_recvmsg_into),
    )
    methods = tuple(row for row in methods if row[2] is not None)
    for _name, method, original in methods:
        _look_like(method, original)
    return methods, {method.__code__: original for _n, method, original in methods}


def _look_like(method: Any, original: Any) -> None:
    """``method`` shows the C method's name, qualified name, module and text (issue 27,
    cause 8): ``socket.socket.sendto.__qualname__`` is ``socket.sendto``, as in CPython."""

    method.__doc__ = original.__doc__
    method.__name__ = original.__name__
    method.__qualname__ = original.__qualname__
    method.__module__ = "_socket"
    text_signature = getattr(original, "__text_signature__", None)
    if text_signature:
        method.__text_signature__ = text_signature


def make_precheck_installer(
    audit: Callable[..., None],
    receive_methods: tuple[tuple[str, Callable[..., Any], Any], ...] = (),
) -> Callable[[Any], None]:
    """``install(sock)``, called by the hook for every new socket: puts pre-checks in front of
    the ``connect``, ``connect_ex``, ``bind``, ``sendto``, ``sendmsg`` and ``listen`` (and the
    ``receive_methods`` of :func:`make_receive_methods`) of the Python class
    that derives from ``_socket.socket`` directly in ``sock``'s class hierarchy (the stdlib
    ``socket.socket``, so its subclasses too: ``ssl.SSLSocket``), once per class.

    The name pre-checks raise ``pysandboxes.sockaddr`` before the C method, which resolves a
    host name *before* its own audit event (``getsockaddrarg``): a name no rule can allow is
    refused before its query leaves (SPEC §2.4). ``listen`` raises ``pysandboxes.listen``
    (CPython raises none; the kernel binds an unbound socket on every interface).

    The class is found from the socket itself, not through ``sys.modules`` (which the program
    can change while its first socket is made), and everything used here and in the methods
    is captured now: nothing is looked up in this module's namespace later (the methods'
    ``__globals__`` is that namespace, and the program can reach it). Not a boundary: the C
    methods called directly (``_socket.socket.connect``) skip the pre-checks, as does
    replacing these functions or their closure cells; then CPython's own events still judge
    every address, and only the one query of a name (or an unbound ``listen``) gets through.
    """

    base = _socket.socket
    type_ = type
    id_ = id
    mro_of = type.__dict__["__mro__"].__get__
    bases_of = type.__dict__["__bases__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    set_attribute = type.__setattr__
    set_, str_ = set, str
    # id -> class, held so that an id is never reused: socket classes looked at, and patched.
    seen: dict[int, type] = {}
    patched: dict[int, type] = {}
    c_connect = base.connect
    c_connect_ex = base.connect_ex
    c_bind = base.bind
    c_sendto = base.sendto
    c_listen = base.listen
    c_sendmsg: Any = getattr(base, "sendmsg", None)  # POSIX's (see _receive_wrappers)
    len_ = len

    # (*args): a wrong call gets the C method's own TypeError, not one naming this function
    # (issue 27, cause 8); the pre-check runs only for a call of the right shape.
    def connect(*args: Any) -> Any:
        if len_(args) == 2:
            audit("pysandboxes.sockaddr", args[0], args[1], "OUT")
        return c_connect(*args)

    def connect_ex(*args: Any) -> Any:
        if len_(args) == 2:
            audit("pysandboxes.sockaddr", args[0], args[1], "OUT")
        return c_connect_ex(*args)

    def bind(*args: Any) -> Any:
        if len_(args) == 2:
            audit("pysandboxes.sockaddr", args[0], args[1], "IN")
        return c_bind(*args)

    def sendto(*args: Any) -> Any:
        # sendto(data[, flags], address)
        if len_(args) in (3, 4):
            audit("pysandboxes.sockaddr", args[0], args[-1], "OUT")
        return c_sendto(*args)

    def listen(*args: Any) -> Any:
        if args:
            audit("pysandboxes.listen", args[0])
        return c_listen(*args)

    def sendmsg(*args: Any) -> Any:
        # sendmsg(buffers[, ancdata[, flags[, address]]])
        if len_(args) > 4 and args[4] is not None:
            audit("pysandboxes.sockaddr", args[0], args[4], "OUT")
        return c_sendmsg(*args)

    methods: tuple[tuple[str, Callable[..., Any], Any], ...] = (
        ("listen", listen, c_listen),
        ("connect", connect, c_connect),
        ("connect_ex", connect_ex, c_connect_ex),
        ("bind", bind, c_bind),
        ("sendto", sendto, c_sendto),
        ("sendmsg", sendmsg, c_sendmsg),
    )
    methods = tuple(row for row in methods if row[2] is not None)
    for _name, method, original in methods:
        _look_like(method, original)
    methods = (*methods, *receive_methods)

    def install(sock: Any) -> None:
        kind = type_(sock)
        if id_(kind) in seen:
            return
        seen[id_(kind)] = kind
        for cls in mro_of(kind):
            if cls is base or id_(cls) in patched:
                continue
            direct = False
            for parent in bases_of(cls):  # by identity: no program __eq__ runs
                if parent is base:
                    direct = True
            # A metaclass of the program's could hold data descriptors that type.__setattr__
            # would call (program code inside the hook): such classes get no pre-check.
            if not direct or type_(cls) is not type_:
                continue
            patched[id_(cls)] = cls
            # The class's own names, read as items: a lookup would call the __eq__ of a key
            # of the program's (a str subclass with the same hash) inside the hook.
            own = set_()
            for key in dict_of(cls):
                if type_(key) is not str_:
                    return  # not a class of the standard library: no pre-check
                own.add(key)
            for name, method, _original in methods:
                if name not in own:  # never over a method the class defines itself
                    set_attribute(cls, name, method)

    return install
