"""Network, the program's own sockets (SPEC §2.4, docs/network.md): what the guard remembers
of the sockets a program binds and receives on, for the grants that belong to ``IN``.

- **Own server**: a loopback connection that no OUT rule allows and no DENY refuses is allowed
  when a socket the program bound under an IN rule holds that address and port alone
  (:func:`make_own_servers`).
- **Deferred bind**: a TCP bind to port 0 on a loopback address is judged when the socket
  listens (:func:`make_deferred_binds`).
- **UDP replies**: a UDP socket granted ``IN`` may answer the peers it received from
  (:func:`make_udp_replies`).

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
    from pysandboxes.guard.net_address import NetValues

    Match = Callable[..., tuple[bool, str | None, str | None]]
else:
    from pysandboxes.record import NamedTuple

#: :func:`make_own_servers`' ``own_server`` answers.
NOT_OWN, OWN, OWN_ELSEWHERE = 0, 1, 2


class OwnServers(NamedTuple):
    """:func:`make_own_servers`' functions."""

    #: ``remember_bound(sock)``: keep a socket the program binds or listens on.
    remember_bound: Callable[[Any], None]
    #: ``own_server(proto, ip_key, port)``: ``NOT_OWN``, ``OWN`` or ``OWN_ELSEWHERE``.
    own_server: Callable[[str, Any, int], int]
    #: ``own_address(ip_key)``: whether a reverse lookup of it belongs to an IN grant.
    own_address: Callable[[Any], bool]


def make_endpoints(
    values: NetValues, ip_key: Callable[[str], Any]
) -> tuple[Callable[[Any], tuple[Any, int] | None], Callable[[Any], tuple[Any, int] | None]]:
    """``endpoint(address)`` and ``local_endpoint(sock)``: ``(ip key, port)`` of an IPv4/IPv6
    address tuple, and of a socket's own address; ``None`` when there is none."""

    is_tuple, host_text, port_number = values.is_tuple, values.host_text, values.port_number
    getsockname = _socket.socket.getsockname
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    os_error = OSError

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

    return endpoint, local_endpoint


def make_sharing_checks() -> tuple[Callable[[Any, str], bool], Callable[[Any, Any, Any], bool]]:
    """``holds_alone(sock, proto)`` and ``reaches(sock, local, target)``: how the kernel
    shares a local address between sockets, read from the socket's options."""

    getsockopt = _socket.socket.getsockopt
    sol_socket = _socket.SOL_SOCKET
    so_reuseport = getattr(_socket, "SO_REUSEPORT", 15)
    so_reuseaddr = _socket.SO_REUSEADDR
    so_acceptconn = getattr(_socket, "SO_ACCEPTCONN", 30)
    ipproto_ipv6 = _socket.IPPROTO_IPV6
    ipv6_v6only = getattr(_socket, "IPV6_V6ONLY", 26)
    os_error = OSError

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

    return holds_alone, reaches


def make_own_servers(
    *,
    kit: Kit,
    values: NetValues,
    ip_key: Callable[[str], Any],
    match: Match,
    pins: dict[Any, frozenset[str]],
    learning: bool,
) -> OwnServers:
    """The own-server grant: the sockets the program bound or listened on (id -> weak
    reference), and whether a loopback connection or reverse lookup belongs to the IN grant
    that let one of them bind. ``learning``: the bind itself becomes the IN rule."""

    is_socket, proto_of = values.is_socket, values.proto_of
    _endpoint, local_endpoint = make_endpoints(values, ip_key)
    holds_alone, reaches = make_sharing_checks()
    family_of = _socket.socket.__dict__["family"].__get__
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    import _weakref

    weak_ref = _weakref.ref
    id_, list_, type_error, len_ = id, list, TypeError, kit.len
    not_own, own, own_elsewhere = NOT_OWN, OWN, OWN_ELSEWHERE
    bound_sockets: dict[int, Any] = {}

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

    return OwnServers(remember_bound=remember_bound, own_server=own_server, own_address=own_address)


def make_deferred_binds(
    *,
    kit: Kit,
    values: NetValues,
    ip_key: Callable[[str], Any],
    pending_binds: dict[int, tuple[Any, Any]],
) -> Callable[[Any, Any], bool]:
    """``defer_bind(sock, address)``: whether a bind is judged when the socket listens
    instead of now; the deferred ones are kept in ``pending_binds`` (id -> (weak reference,
    address)), which the ``listen`` handler takes them from."""

    is_socket, proto_of, is_tuple = values.is_socket, values.proto_of, values.is_tuple
    port_number = values.port_number
    family_of = _socket.socket.__dict__["family"].__get__
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    type_, str_, len_ = kit.type, str, kit.len
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    import _weakref

    weak_ref = _weakref.ref
    id_, list_, type_error = id, list, TypeError

    def defer_bind(sock: Any, address: Any) -> bool:
        """Whether a bind is judged when the socket listens instead of now: a TCP socket, a
        loopback address literal, port 0. Such a bind serves nothing until ``listen`` (urllib3
        binds ``::1`` port 0 to learn whether IPv6 works, then closes): no IN rule, no denial,
        nothing learned for it; its ``listen`` is judged as the bind (``on_listen``). Only
        ``listen`` called through ``socket.socket`` is seen, as for an unbound socket (the
        module docstring of ``guard/network.py``); the kernel providers judge the bind itself
        (docs/network.md)."""

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

    return defer_bind


class UdpReplies(NamedTuple):
    """:func:`make_udp_replies`' functions."""

    #: The ``pysandboxes.received`` handler.
    on_received: Callable[[tuple[Any, ...]], None]
    #: ``is_reply(sock, address)``: whether sending there answers a peer under the IN grant.
    is_reply: Callable[[Any, Any], bool]


def make_udp_replies(
    *,
    kit: Kit,
    busy_marks: tuple[Callable[[], Busy], Callable[[Busy], None]],
    values: NetValues,
    ip_key: Callable[[str], Any],
    match: Match,
    pins: dict[Any, frozenset[str]],
    receive_codes: dict[Any, Any],
) -> UdpReplies:
    """The UDP replies of the IN grant: the peers that sent a datagram to a local endpoint,
    learned from ``pysandboxes.received`` (raised by
    :func:`pysandboxes.guard.network.make_receive_methods`, whose ``{code: C method}`` is
    ``receive_codes``), and whether a send answers one of them."""

    enter, leave = busy_marks
    getframe = kit.getframe
    len_ = kit.len
    is_socket, proto_of, is_tuple = values.is_socket, values.proto_of, values.is_tuple
    endpoint, local_endpoint = make_endpoints(values, ip_key)
    tuple_len = tuple.__len__
    tuple_item = tuple.__getitem__
    # Peers that sent a datagram to a local endpoint: (local ip key, local port, peer ip key,
    # peer port). A UDP socket bound under an IN grant may answer them (is_reply).
    received: set[tuple[Any, int, Any, int]] = set()

    def received_from_kernel(result: Any) -> bool:
        """Whether the ``pysandboxes.received`` event being handled was raised by one of the
        receive methods (``make_receive_methods``) right after its C method returned
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

    return UdpReplies(on_received=on_received, is_reply=is_reply)
