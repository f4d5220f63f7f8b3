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
listen is judged) holds that address and port alone (``own_server`` in
:func:`make_net_handlers`); :func:`pysandboxes.policy.decide.net_decision` takes the same
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
that same pre-check, when the socket listens (:func:`make_net_handlers`' ``defer_bind``): a bind
alone serves nothing (urllib3's IPv6 check binds ``::1`` port 0 and closes), so it needs no
``IN`` rule and is neither refused nor recorded.
"""

from __future__ import annotations

import _socket
import os

from pysandboxes.guard.denials import CONNECTION, PERMISSION, Reporter
from pysandboxes.guard.kit import Kit, make_busy
from pysandboxes.policy.model import Policy

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple
else:
    from pysandboxes.record import NamedTuple

if TYPE_CHECKING:
    from pysandboxes.policy.precedence import NetRow

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

#: :func:`make_net_handlers`' ``own_server`` answers.
NOT_OWN, OWN, OWN_ELSEWHERE = 0, 1, 2


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
    match = make_matcher(rows)
    ip_key = make_ip_key(kit)
    refuse = reporter.refuse
    record = reporter.record
    recording = reporter.recording
    type_ = kit.type
    get_ident = kit.get_ident
    str_exact = kit.str_exact
    bytes_exact = kit.bytes_exact
    decode = kit.decode
    enter, leave = make_busy(kit, busy)
    getaddrinfo = _socket.getaddrinfo
    family_of = _socket.socket.__dict__["family"].__get__
    getsockname = _socket.socket.getsockname
    type_of = _socket.socket.__dict__["type"].__get__
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    af_unix = getattr(_socket, "AF_UNIX", -1)  # absent on some Windows builds
    sock_stream, sock_dgram = _socket.SOCK_STREAM, _socket.SOCK_DGRAM
    sock_seqpacket = _socket.SOCK_SEQPACKET
    type_flags = getattr(_socket, "SOCK_NONBLOCK", 0) | getattr(_socket, "SOCK_CLOEXEC", 0)
    tcp_protos = (-1, 0, _socket.IPPROTO_TCP)
    # UDP-Lite (IPPROTO_UDPLITE) is an IP datagram socket like UDP: judged by the UDP rules
    # (issue 27, cause 9); the kernel providers' rulesets let none of its packets out.
    udp_protos = (-1, 0, _socket.IPPROTO_UDP, getattr(_socket, "IPPROTO_UDPLITE", 0))
    socket_py = os.path.join(os.path.dirname(os.__file__), "socket.py")
    str_eq = str.__eq__
    eight = (0,) * 8  # the frames looked at, at most (no range() lookup at run time)
    unix_types = (sock_stream, sock_dgram, sock_seqpacket)
    ai_numerichost = _socket.AI_NUMERICHOST
    str_, int_, tuple_, bytes_, bytearray_ = str, int, tuple, bytes, bytearray
    int_index = int.__index__  # the value of an int (subclass) object, no program code
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    frozenset_ = frozenset
    len_ = kit.len
    mro_of = type.__dict__["__mro__"].__get__
    names_rules = frozenset_(row[3] for row in rows if row[2] == "name")  # ALLOW or DENY
    deny_rows = tuple_((row[1], row[7], row[8]) for row in rows if row[0])
    pins: dict[Any, frozenset[str]] = {}  # ip key -> names it was resolved for
    # Address connections already allowed (family, socket type, host text, port, direction);
    # emptied whenever a pin changes (a pinned name may make a DENY name rule apply).
    allowed_before: set[tuple[int, int, str, int, str]] = set()
    # Hosts no query leaves for, and that no host-name rule names (those are resolved, pinned).
    literal_hosts: set[str] = (set(_LOCAL_NAMES) - names_rules) | {"<broadcast>"}
    mutable = object()  # exact_text's answer for a bytearray
    receive_methods, receive_codes = make_receive_methods(kit.audit)
    install_prechecks = make_precheck_installer(kit.audit, receive_methods)
    getframe = kit.getframe
    # Peers that sent a datagram to a local endpoint: (local ip key, local port, peer ip key,
    # peer port). A UDP socket bound under an IN grant may answer them (is_reply).
    received: set[tuple[Any, int, Any, int]] = set()
    # Sockets the program bound or listened on (id -> weak reference): a loopback connection
    # to one of them belongs to the IN grant that let it bind (own_server).
    bound_sockets: dict[int, Any] = {}
    # TCP binds to port 0 on loopback, judged at listen (defer_bind): id -> (weak ref, address)
    pending_binds: dict[int, tuple[Any, Any]] = {}
    import _weakref

    weak_ref = _weakref.ref
    id_, list_, type_error = id, list, TypeError
    getsockopt = _socket.socket.getsockopt
    sol_socket = _socket.SOL_SOCKET
    so_reuseport = getattr(_socket, "SO_REUSEPORT", 15)
    so_reuseaddr = _socket.SO_REUSEADDR
    so_acceptconn = getattr(_socket, "SO_ACCEPTCONN", 30)
    ipproto_ipv6 = _socket.IPPROTO_IPV6
    ipv6_v6only = getattr(_socket, "IPV6_V6ONLY", 26)
    learning = recording and not reporter.auditing
    connection_refused = ConnectionRefusedError
    import errno as _errno

    econnrefused = _errno.ECONNREFUSED
    not_own, own, own_elsewhere = NOT_OWN, OWN, OWN_ELSEWHERE
    # Everything the handlers use is captured here: the program can reach this module's
    # namespace (a pre-check's __globals__, sys.modules) and rebind what they would look up.
    any_ = any
    lookup_failed = (OSError, UnicodeError, ValueError)
    connection_error, permission_error = CONNECTION, PERMISSION
    local_names = _LOCAL_NAMES
    socket_type = _socket.socket

    def is_socket(obj: Any) -> bool:
        """By the exact type's MRO: ``isinstance`` would read a ``__class__`` property of the
        program's (an event the program raised itself with sys.audit carries any object)."""

        return any_(base is socket_type for base in mro_of(type_(obj)))

    os_error = OSError
    numeric_hosts: set[str] = set()  # host strings the pre-check found to be addresses

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

    def exact(obj: Any) -> Any:
        """An exact ``str``/``bytes`` with the data of a str or bytes (subclass) object, the
        ``mutable`` marker for a bytearray, else ``None``. Subclasses are found through the
        MRO by identity and copied with the C methods: no program code runs."""

        kind = type_(obj)
        if kind is str_ or kind is bytes_:
            return obj
        for base in mro_of(kind):
            if base is str_:
                return str_exact(obj)
            if base is bytes_:
                return bytes_exact(obj)
            if base is bytearray_:
                return mutable
        return None

    def is_tuple(obj: Any) -> bool:
        kind = type_(obj)
        if kind is tuple_:
            return True
        return any_(base is tuple_ for base in mro_of(kind))

    def host_text(obj: Any) -> str | None:
        """The ASCII text CPython resolves for a host object, or ``None`` (refused: a bytearray
        could change between CPython's copy and this judgment; a non-ASCII name would need the
        ``idna`` codec, Python code the program can replace)."""

        value = exact(obj)
        if type_(value) is bytes_:
            if not value.isascii():
                return None
            value = decode(value, "ascii")
        if type_(value) is not str_ or not value.isascii() or "\0" in value:
            return None
        return value  # type: ignore[no-any-return]

    def port_number(obj: Any) -> int | None:
        """The port CPython uses (its ``i`` format): an int, bool or int subclass by value;
        anything else (an ``__index__`` object) is ``None``: its method would have to run
        inside the hook, and could answer differently the second time."""

        kind = type_(obj)
        if kind is int_:
            return obj  # type: ignore[no-any-return]
        for base in mro_of(kind):
            if base is int_:
                return int_index(obj)
        return None

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

    def refuse_net(
        proto: str,
        host: str | None,
        shown: str,
        port: Any,
        direction: str,
        rule: str | None,
        origin: str | None,
        ip: str,
        reason: str | None = None,
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
        suggestion = None
        if reason is not None:
            message = f"{verb}{target} DENIED: {reason}"
        elif rule is not None:
            message = f"{verb}{target} DENIED by explicit rule '{rule}' from {origin}"
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
            "net",
            target,
            rule,
            origin,
            suggestion,
            direction,
            message,
            connection_error,
            None,
            fields,
        )

    def remember_bound(sock: Any) -> None:
        """Keep a weak reference to an IPv4/IPv6 socket the program binds or listens on: a
        loopback connection to it may belong to the IN grant (:func:`own_server`). A socket
        that takes no weak reference (``_socket.socket`` itself) is not remembered: its
        program needs an OUT rule to reach it."""

        if not is_socket(sock) or family_of(sock) not in (af_inet, af_inet6):
            return
        ident = id_(sock)
        known = bound_sockets.get(ident)
        if known is not None and known() is sock:
            return
        try:
            ref = weak_ref(sock)
        except type_error:
            return
        if len_(bound_sockets) >= 256:
            for stale, known_ref in list_(bound_sockets.items()):
                if known_ref() is None:
                    bound_sockets.pop(stale, None)
            if len_(bound_sockets) >= 256:
                return  # many live servers: the rest need OUT rules (conservative)
        bound_sockets[ident] = ref

    def holds_alone(sock: Any, proto: str) -> bool:
        """Whether ``sock`` holds its local address alone, so that what the kernel delivers to
        that address reaches this socket only: no ``SO_REUSEPORT`` (which shares a port with
        another socket of the same user), a TCP socket listening, a UDP socket without
        ``SO_REUSEADDR`` (which lets UDP sockets share an address)."""

        try:
            if getsockopt(sock, sol_socket, so_reuseport) != 0:
                return False
            if proto == "TCP":
                return getsockopt(sock, sol_socket, so_acceptconn) == 1  # type: ignore[no-any-return]
            return getsockopt(sock, sol_socket, so_reuseaddr) == 0  # type: ignore[no-any-return]
        except os_error:
            return False  # closed meanwhile

    def reaches(sock: Any, local: Any, target: Any) -> bool:
        """Whether a connection to loopback address ``target`` arrives at ``sock``, bound to
        ``local``: the same address, the wildcard of that family, or ``::`` without
        ``IPV6_V6ONLY`` (a dual-stack socket, which takes IPv4 too) for an IPv4 target."""

        if local == target:
            return True
        if local[1] != 0:
            return False
        if local[0] == target[0]:
            return True
        if local[0] != 6 or target[0] != 4:
            return False
        try:
            return getsockopt(sock, ipproto_ipv6, ipv6_v6only) == 0  # type: ignore[no-any-return]
        except os_error:
            return False

    def own_server(proto: str, key: Any, port: int) -> int:
        """For a connection (or datagram) to ``key``:``port`` that no OUT rule allows and no
        DENY refuses: ``OWN`` when ``key`` is a loopback address and a socket of the program,
        bound under an IN rule (enforce, audit; in learning the bind becomes that rule), holds
        that address and port alone; ``OWN_ELSEWHERE`` when such a socket holds the port on
        another loopback address only (``localhost`` stands for 127.0.0.1 and ::1: a client
        tries both); else ``NOT_OWN``."""

        if not bound_sockets or not is_loopback(key):
            return not_own
        verdict = not_own
        for ident, ref in list_(bound_sockets.items()):
            sock = ref()
            if sock is None:
                bound_sockets.pop(ident, None)
                continue
            if proto_of(sock) != proto:
                continue
            local = local_endpoint(sock)
            if local is None or local[1] != port or not is_loopback_or_wildcard(local[0]):
                continue
            if not holds_alone(sock, proto):
                continue
            if not learning:
                names = pins.get(local[0], ())
                granted = (
                    match(proto, names, local[0], port, "IN")[0]
                    or match(proto, names, local[0], 0, "IN")[0]
                )
                if not granted:
                    continue
            if reaches(sock, local[0], key):
                return own
            verdict = own_elsewhere
        return verdict

    def own_address(key: Any) -> bool:
        """Whether a reverse lookup of ``key`` belongs to an IN grant: a loopback address an
        IN rule lets the program bind (while learning: that a socket of the program is bound
        to), as ``http.server`` looks up the name of the address it bound (``getfqdn``)."""

        if not is_loopback(key):
            return False
        if not learning:
            return match("*", pins.get(key, ()), key, None, "IN")[0]  # type: ignore[no-any-return]
        for ref in list_(bound_sockets.values()):
            sock = ref()
            local = None if sock is None else local_endpoint(sock)
            if local is not None and local[0] == key:
                return True
        return False

    def is_loopback(key: Any) -> bool:
        if key[0] == 4:
            return key[1] >> 24 == 127  # type: ignore[no-any-return]
        return key[1] == 1  # type: ignore[no-any-return]

    def is_loopback_or_wildcard(key: Any) -> bool:
        return key[1] == 0 or is_loopback(key)

    def raise_refused(key: Any, port: int) -> None:
        """Refuse a connection to the other loopback address of the program's own port as the
        kernel refuses one to a port nothing listens on: ``ConnectionRefusedError``, no
        denial (it is the second address of ``localhost``, which clients try in turn)."""

        exc = connection_refused(
            econnrefused,
            "Connection refused (python-sb: the program's own server is not bound to "
            + text_ip(key)
            + ", and no net= rule allows this port there)",
        )
        try:
            raise exc
        finally:
            del exc  # no cycle through this frame (as Reporter.raise_it)

    def judge_address(proto: str, host: str | None, key: Any, port: Any, direction: str) -> bool:
        """Judge one address; return whether the answer may be cached (:data:`allowed_before`):
        not when it rests on a socket of the program that may close (the own-server grant)."""

        if direction == "OUT" and key[1] == 0:
            # Linux connects (and sends) to the unspecified address 0.0.0.0 / :: on loopback.
            key = (4, 0x7F000001) if key[0] == 4 else (6, 1)
        names = pins.get(key, ()) if host is None else (host,)
        allowed, rule, origin = match(proto, names, key, port, direction)
        if not allowed and rule is None and direction == "OUT" and port is not None:
            # No OUT rule, no DENY: a loopback connection to the program's own server belongs
            # to the IN grant that let it bind (SPEC 2.4, docs/network.md).
            verdict = own_server(proto, key, port)
            if verdict == own:
                return False  # allowed; nothing to learn or report (the bind is the rule)
            if verdict == own_elsewhere:
                if recording:
                    return False  # nothing listens there: the kernel answers (learn, audit)
                raise_refused(key, port)
        if allowed and not recording:
            return True
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
            return True
        refuse_net(proto, host, ip, port, direction, rule, origin, ip)
        return False

    def pin(name: str, keys: list[Any]) -> None:
        if name not in names_rules:
            return  # no rule names it: a pin would change no decision
        for key in keys:
            known = pins.get(key)
            if len_(pins) > 4096:
                pins.clear()
            pins[key] = frozenset_((name,)) if known is None else known | frozenset_((name,))
        allowed_before.clear()

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

    def defer_bind(sock: Any, address: Any) -> bool:
        """Whether a bind is judged when the socket listens instead of now: a TCP socket, a
        loopback address literal, port 0. Such a bind serves nothing until ``listen`` (urllib3
        binds ``::1`` port 0 to learn whether IPv6 works, then closes): no IN rule, no denial,
        nothing learned for it; its ``listen`` is judged as the bind (``on_listen``). Only
        ``listen`` called through ``socket.socket`` is seen, as for an unbound socket (the
        module docstring); the kernel providers judge the bind itself (docs/network.md)."""

        if not is_socket(sock) or proto_of(sock) != "TCP" or not is_tuple(address):
            return False
        if family_of(sock) not in (af_inet, af_inet6) or tuple_len(address) < 2:
            return False
        host_obj = tuple_item(address, 0)
        if type_(host_obj) is not str_ or port_number(tuple_item(address, 1)) != 0:
            return False
        key = ip_key(host_obj)
        loopback = key is not None and (key == (6, 1) or (key[0] == 4 and key[1] >> 24 == 127))
        if not loopback:
            return False  # not a loopback address literal
        try:
            ref = weak_ref(sock)
        except type_error:
            return False
        if len_(pending_binds) >= 256:
            for stale, (known, _address) in list_(pending_binds.items()):
                if known() is None:
                    pending_binds.pop(stale, None)
            if len_(pending_binds) >= 256:
                return False  # many live ones: judged now (never forgotten, never unjudged)
        pending_binds[id_(sock)] = (ref, (host_obj, 0))
        return True

    def received_from_kernel(result: Any) -> bool:
        """Whether the ``pysandboxes.received`` event being handled was raised by one of the
        receive methods (:func:`make_receive_methods`) right after its C method returned
        ``result``: the raising frame runs one of their codes, its ``fn`` is that code's C
        method and its ``result`` is this object."""

        state = enter()
        try:
            frame: Any = getframe(3)  # this function, the handler, the hook body, the caller
            genuine = receive_codes.get(frame.f_code)
            if genuine is None:
                return False
            found: Any = frame.f_locals
            return found.get("fn") is genuine and found.get("result") is result
        finally:
            leave(state)

    def endpoint(address: Any) -> tuple[Any, int] | None:
        """``(ip key, port)`` of an IPv4/IPv6 address tuple, else ``None``."""

        if not is_tuple(address) or tuple_len(address) < 2:
            return None
        host = host_text(tuple_item(address, 0))
        port = port_number(tuple_item(address, 1))
        if host is None or port is None:
            return None
        key = ip_key(host)
        if key is None:
            return None
        return key, port

    def local_endpoint(sock: Any) -> tuple[Any, int] | None:
        try:
            return endpoint(getsockname(sock))
        except os_error:
            return None

    def on_received(args: tuple[Any, ...]) -> None:
        """``pysandboxes.received`` (sock, result): a datagram received on a UDP socket; its
        sender is remembered for the socket's local endpoint when the event is genuine."""

        if len_(args) != 2 or not is_socket(args[0]) or proto_of(args[0]) != "UDP":
            return
        sock, result = args
        if not is_tuple(result) or tuple_len(result) < 2:
            return
        peer = endpoint(tuple_item(result, tuple_len(result) - 1))
        if peer is None:
            return
        local = local_endpoint(sock)
        if local is None:
            return
        entry = (local[0], local[1], peer[0], peer[1])
        if entry in received or not received_from_kernel(result):
            return  # known already (nothing to check), or not a genuine reception
        if len_(received) > 4096:
            received.clear()
        received.add(entry)

    def is_reply(sock: Any, address: Any) -> bool:
        """Whether sending to ``address`` from ``sock`` answers a peer: a UDP socket whose
        local endpoint an IN rule grants, to an address that sent it a datagram, and that no
        DENY rule refuses (DENY wins over every grant, as in the kernel ruleset, where DENY
        comes before the replies of accepted flows)."""

        if not received or not is_socket(sock) or proto_of(sock) != "UDP":
            return False
        peer = endpoint(address)
        local = local_endpoint(sock)
        if peer is None or local is None:
            return False
        if (local[0], local[1], peer[0], peer[1]) not in received:
            return False
        if not match("UDP", pins.get(local[0], ()), local[0], local[1], "IN")[0]:
            return False
        allowed, rule, _origin = match("UDP", pins.get(peer[0], ()), peer[0], peer[1], "OUT")
        return allowed or rule is None

    def allowed_already(sock: Any, address: Any) -> bool:
        """The fast path of :func:`judge_inet`: an OUT to this exact address already allowed."""

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

    def lookup_text(obj: Any) -> str | None:
        """The text of a host given to a lookup function (str, bytes or a subclass)."""

        value = exact(obj)
        if type_(value) is bytes_:
            return decode(value, "ascii", "surrogateescape")  # type: ignore[no-any-return]
        if type_(value) is str_:
            return value  # type: ignore[no-any-return]
        return None

    def is_numeric(host: str, family: int) -> bool:
        """An address CPython resolves without a query (a literal, or an ``inet_aton`` form)."""

        if ip_key(host) is not None:
            return True
        return host.isascii() and lookup(host, family, ai_numerichost) is not None

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
        name = host.lower().removesuffix(".")
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

    handlers: dict[str, Callable[[tuple[Any, ...]], None]] = {
        "socket.connect": on_connect,
        "pysandboxes.sockaddr": on_sockaddr,
        "pysandboxes.listen": on_listen,
        "socket.bind": on_bind,
        "socket.sendto": on_sendmsg,
        "socket.sendmsg": on_sendmsg,
        "socket.__new__": on_new,
        "pysandboxes.received": on_received,
        "socket.getaddrinfo": on_getaddrinfo,
        "socket.gethostbyname": on_gethostbyname,
        "socket.gethostbyaddr": on_reverse,
        "socket.getnameinfo": on_reverse,
    }
    return NetHandlers(handlers=handlers, ip_key=ip_key)


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
