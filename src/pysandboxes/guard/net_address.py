"""Network, the address judging (SPEC §2.4): what a socket event's arguments say, read as
CPython reads them, and one IP address judged against the ``net=`` rules.

The factories of :func:`pysandboxes.guard.network.make_net_handlers`, split out of it (issue 24
item 6). Each takes what its closures use as arguments and captures it when the guard is
armed: the program can reach this module's namespace (``sys.modules``, a handler's
``__globals__``) and rebind any name in it, so no closure here looks a name up at run time
(``tests/unit/guard/test_run_time_state.py``).
"""

from __future__ import annotations

import _socket

from pysandboxes.guard.denials import CONNECTION
from pysandboxes.guard.net_sockets import OWN, OWN_ELSEWHERE

TYPE_CHECKING = False  # typing costs milliseconds of every start-up (pysandboxes/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple

    from pysandboxes.guard.denials import Reporter
    from pysandboxes.guard.kit import Kit

    #: ``refuse_net(proto, host, shown, port, direction, rule, origin, ip, reason=None)``
    RefuseNet = Callable[..., None]
    #: ``judge_address(proto, host, ip_key, port, direction) -> cacheable``
    JudgeAddress = Callable[[str, str | None, Any, Any, str], bool]
else:
    from pysandboxes.record import NamedTuple


class NetValues(NamedTuple):
    """The readers of socket-event arguments (:func:`make_net_values`)."""

    #: ``is_socket(obj)``: an ``_socket.socket`` (subclass) object, by the exact type's MRO.
    is_socket: Callable[[Any], bool]
    #: ``exact(obj)``: an exact ``str``/``bytes`` copy, :attr:`mutable` for a bytearray, or None.
    exact: Callable[[Any], Any]
    #: The marker :attr:`exact` answers for a bytearray.
    mutable: object
    is_tuple: Callable[[Any], bool]
    #: ``host_text(obj)``: the ASCII host CPython resolves, or None (refused).
    host_text: Callable[[Any], str | None]
    #: ``port_number(obj)``: the port CPython uses, or None (an ``__index__`` object).
    port_number: Callable[[Any], int | None]
    #: ``text_ip(ip_key)``: the address as text.
    text_ip: Callable[[Any], str]
    #: ``proto_of(sock)``: ``"TCP"``, ``"UDP"`` or ``"*"``.
    proto_of: Callable[[Any], str]


def make_net_values(kit: Kit) -> NetValues:
    """The readers of what a socket event carries: hosts as ``str``, ``bytes`` or their
    subclasses (copied with the C methods), ports as an ``int``, ``bool`` or int subclass by
    value, tuples by the exact type's MRO -- no code of the program runs while reading."""

    type_ = kit.type
    str_exact = kit.str_exact
    bytes_exact = kit.bytes_exact
    decode = kit.decode
    mro_of = type.__dict__["__mro__"].__get__
    str_, int_, tuple_, bytes_, bytearray_ = str, int, tuple, bytes, bytearray
    int_index = int.__index__  # the value of an int (subclass) object, no program code
    any_ = any
    socket_type = _socket.socket
    type_of = _socket.socket.__dict__["type"].__get__
    sock_stream, sock_dgram = _socket.SOCK_STREAM, _socket.SOCK_DGRAM
    af_inet, af_inet6 = _socket.AF_INET, _socket.AF_INET6
    inet_ntop = _socket.inet_ntop
    to_bytes = int.to_bytes
    mutable = object()  # exact's answer for a bytearray

    def is_socket(obj: Any) -> bool:
        """By the exact type's MRO: ``isinstance`` would read a ``__class__`` property of the
        program's (an event the program raised itself with sys.audit carries any object)."""

        return any_(base is socket_type for base in mro_of(type_(obj)))

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

    return NetValues(
        is_socket=is_socket,
        exact=exact,
        mutable=mutable,
        is_tuple=is_tuple,
        host_text=host_text,
        port_number=port_number,
        text_ip=text_ip,
        proto_of=proto_of,
    )


def make_refuse_net(reporter: Reporter) -> RefuseNet:
    """``refuse_net(proto, host, shown, port, direction, rule, origin, ip, reason=None)``: the
    denial of a connection or bind, with its ``net=`` fields and the rule that would allow it
    (none when a DENY rule refused, or when ``reason`` says why nothing can)."""

    refuse = reporter.refuse
    int_ = int
    connection_error = CONNECTION

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

    return refuse_net


def make_address_judge(
    *,
    match: Callable[..., tuple[bool, str | None, str | None]],
    pins: dict[Any, frozenset[str]],
    own_server: Callable[[str, Any, int], int],
    reporter: Reporter,
    text_ip: Callable[[Any], str],
    refuse_net: RefuseNet,
) -> JudgeAddress:
    """``judge_address(proto, host, ip_key, port, direction) -> cacheable``: one address judged
    (recorded while learning or auditing, refused otherwise). ``host`` is the name the
    address was resolved for, or ``None`` (then the names it is pinned to in ``pins``).
    ``own_server``: :func:`pysandboxes.guard.net_sockets.make_own_servers`' (its answers
    ``OWN`` and ``OWN_ELSEWHERE`` are captured now)."""

    recording = reporter.recording
    record = reporter.record
    own, own_elsewhere = OWN, OWN_ELSEWHERE
    connection_refused = ConnectionRefusedError
    import errno as _errno

    econnrefused = _errno.ECONNREFUSED

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
            del exc  # no cycle through this frame (as Reporter.refuse raises)

    def judge_address(proto: str, host: str | None, key: Any, port: Any, direction: str) -> bool:
        """Judge one address; return whether the answer may be cached (``allowed_before``):
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

    return judge_address
