"""Fixes of the red-team review's network findings (tests/redteam/review, ``net_*``), and the
sensitive calls it found missing from the registry: one test per fix, through an armed
interpreter. Traffic goes to loopback listeners of the test only; a refusal happens before any
packet leaves.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import loopback_host_name, require
from tests.unit.guard.harness import run_armed


def test_sethostname_is_a_privileges_call(tmp_path: Path) -> None:
    """``socket.sethostname`` raises its own audit event: refused without ``privileges``."""

    require(os.geteuid() == 0, "sethostname needs root (the allowed run really sets it)")
    code = """
import socket
name = socket.gethostname()
try:
    socket.sethostname(name)
    print("set")
except PermissionError as exc:
    print("refused", type(exc).__name__, exc.denial.target, exc.denial.detail)
"""
    refused = run_armed(code, "python-import=*\n", tmp_path)
    assert refused.lines == ["refused RuleApiPermissionError socket.sethostname privileges"], (
        refused.stdout + refused.stderr
    )
    allowed = run_armed(code, "python-import=*\npython-api=ALLOW:socket.sethostname\n", tmp_path)
    assert allowed.lines == ["set"], allowed.stdout + allowed.stderr


def test_scheduling_and_pidfd_signals_are_process_control(tmp_path: Path) -> None:
    """``os.setpriority``, ``os.sched_set*`` and ``signal.pidfd_send_signal`` act on another
    process like ``os.kill``: refused without ``process-control`` (here on the program itself,
    harmless values)."""

    code = """
import os, signal
P = os.PRIO_PROCESS
calls = [
    ("os.setpriority", lambda: os.setpriority(P, 0, os.getpriority(P, 0))),
    ("os.sched_setaffinity", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0))),
    ("os.sched_setscheduler", lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))),
    ("os.sched_setparam", lambda: os.sched_setparam(0, os.sched_param(0))),
    ("signal.pidfd_send_signal", lambda: signal.pidfd_send_signal(os.pidfd_open(os.getpid()), 0)),
]
for name, call in calls:
    try:
        call()
        print(name, "ran")
    except PermissionError as exc:
        print(name, "refused", exc.denial.target)
"""
    result = run_armed(code, "python-import=*\n", tmp_path)
    names = [
        "os.setpriority",
        "os.sched_setaffinity",
        "os.sched_setscheduler",
        "os.sched_setparam",
        "signal.pidfd_send_signal",
    ]
    assert result.lines == [f"{name} refused {name}" for name in names], (
        result.stdout + result.stderr
    )


# -- network -------------------------------------------------------------------------------

PROBE = """
import socket
def attempt(label, action):
    try:
        action()
        print(label, "ok")
    except OSError as exc:
        denial = getattr(exc, "denial", None)
        if denial is None:
            print(label, "error", type(exc).__name__)
        else:
            print(label, "refused", type(exc).__name__, denial.target, denial.rule)
def connect(host, port, family=socket.AF_INET):
    def action():
        s = socket.socket(family)
        s.settimeout(5)
        try:
            s.connect((host, port))
        finally:
            s.close()
    return action
"""


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 (connections are accepted by the kernel backlog)."""

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def _free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_host_and_port_objects_are_judged_as_cpython_reads_them(
    tmp_path: Path, listener: int
) -> None:
    """bytes hosts, str/tuple subclasses, int-subclass and bool ports are judged by value (the
    allowed port connects, another is refused); a bytearray host and an ``__index__`` port are
    refused (they cannot be judged without a race or program code in the hook)."""

    port, other = listener, _free_port()
    code = (
        PROBE
        + f"""
class Host(str):
    def __eq__(self, other):
        return False
    __hash__ = str.__hash__
class Port(int):
    pass
class Index:
    def __init__(self, n):
        self.n = n
    def __index__(self):
        return self.n
class Address(tuple):
    pass
attempt("bytes", connect(b"127.0.0.1", {port}))
attempt("bytes other", connect(b"127.0.0.1", {other}))
attempt("str subclass other", connect(Host("127.0.0.1"), {other}))
attempt("int subclass", connect("127.0.0.1", Port({port})))
attempt("int subclass other", connect("127.0.0.1", Port({other})))
attempt("bool", connect("127.0.0.1", True))
attempt("bytearray", connect(bytearray(b"127.0.0.1"), {port}))
attempt("index", connect("127.0.0.1", Index({port})))
def tuple_subclass():
    s = socket.socket()
    try:
        s.connect(Address(("127.0.0.1", {other})))
    finally:
        s.close()
attempt("tuple subclass other", tuple_subclass)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", (b"127.0.0.1", {other}))
    finally:
        s.close()
attempt("udp bytes", udp)
"""
    )
    result = run_armed(code, f"python-import=*\nnet=ALLOW|TCP|127.0.0.1|{port}|OUT\n", tmp_path)
    refused = "refused RuleConnectionRefusedError"
    assert result.lines == [
        "bytes ok",
        f"bytes other {refused} [127.0.0.1]:{other} None",
        f"str subclass other {refused} [127.0.0.1]:{other} None",
        "int subclass ok",
        f"int subclass other {refused} [127.0.0.1]:{other} None",
        f"bool {refused} [127.0.0.1]:1 None",
        f"bytearray {refused} [?]:{port} None",
        f"index {refused} [127.0.0.1]:* None",
        f"tuple subclass other {refused} [127.0.0.1]:{other} None",
        f"udp bytes {refused} [127.0.0.1]:{other} None",
    ], result.stdout + result.stderr


def _loopback_forms() -> list[str]:
    names = ["127.1", "2130706433", "0x7f.0.0.01", "0177.0.0.1", "0.0.0.0", "", "localhost"]
    hosts_name = loopback_host_name()
    if hosts_name:
        names.append(hosts_name)
    return names


def test_names_and_numeric_forms_meet_the_address_rules(tmp_path: Path, listener: int) -> None:
    """A DENY of 127.0.0.0/8 wins over ``ALLOW *`` for every spelling of a loopback address
    and for names that resolve to it (SPEC §2.4's intranet example); without the DENY they
    connect (the control); with no rule at all, ``localhost`` is refused too."""

    port = listener
    forms = _loopback_forms()
    code = PROBE + "".join(
        f"attempt('form{index}', connect({name!r}, {port}))\n" for index, name in enumerate(forms)
    )
    deny = "net=DENY|*|127.0.0.0/8|*|OUT"
    denied = run_armed(code, f"python-import=*\nnet=ALLOW|TCP|*|*|OUT\n{deny}\n", tmp_path)
    allowed = run_armed(code, "python-import=*\nnet=ALLOW|TCP|*|*|OUT\n", tmp_path)
    nothing = run_armed(code, "python-import=*\n", tmp_path)
    assert allowed.lines == [f"form{index} ok" for index in range(len(forms))], (
        allowed.stdout + allowed.stderr
    )
    assert denied.lines == [
        f"form{index} refused RuleConnectionRefusedError [127.0.0.1]:{port} {deny}"
        for index in range(len(forms))
    ], denied.stdout + denied.stderr
    assert (
        nothing.lines[6] == f"form6 refused RuleConnectionRefusedError [127.0.0.1]:{port} None"
    ), nothing.stdout + nothing.stderr


def test_names_in_bind_and_sendto_are_resolved_and_judged(tmp_path: Path) -> None:
    code = (
        PROBE
        + """
def bind():
    s = socket.socket()
    try:
        s.bind(("localhost", 0))
    finally:
        s.close()
def sendto():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", ("127.1", 9))
    finally:
        s.close()
attempt("bind", bind)
attempt("sendto", sendto)
"""
    )
    result = run_armed(code, "python-import=*\nnet=ALLOW|UDP|127.0.0.2|*|OUT\n", tmp_path)
    assert result.lines == [
        "bind refused RuleConnectionRefusedError [127.0.0.1]:0 None",
        "sendto refused RuleConnectionRefusedError [127.0.0.1]:9 None",
    ], result.stdout + result.stderr


def test_unspecified_ipv6_address_is_judged_as_loopback(tmp_path: Path) -> None:
    require(socket.has_ipv6 and os.path.exists("/proc/net/if_inet6"), "IPv6 is disabled")
    code = PROBE + "attempt('::', connect('::', 9, socket.AF_INET6))\n"
    deny = "net=DENY|*|::1/128|*|OUT"
    result = run_armed(code, f"python-import=*\nnet=ALLOW|*|*|*|OUT\n{deny}\n", tmp_path)
    assert result.lines == [f":: refused RuleConnectionRefusedError [::1]:9 {deny}"], (
        result.stdout + result.stderr
    )


def test_lookups_of_bytes_and_subclass_names(tmp_path: Path) -> None:
    """``gethostbyname``/``_ex``/``gethostbyaddr`` of bytes and ``getaddrinfo`` of a str
    subclass are judged as names (refused before any query without a rule, answered with
    one); a bytearray is refused; a numeric form in ``gethostbyaddr`` meets the address
    rules."""

    name = loopback_host_name()
    require(name, "no host name for 127.0.0.1 in /etc/hosts besides localhost")
    code = (
        PROBE
        + f"""
class Name(str):
    pass
name = {name!r}
attempt("byname", lambda: print(socket.gethostbyname(name.encode())))
attempt("byname_ex", lambda: print(socket.gethostbyname_ex(name.encode())[2]))
attempt("byaddr", lambda: socket.gethostbyaddr(name.encode()))
attempt("getaddrinfo", lambda: print(socket.getaddrinfo(Name(name), 80)[0][4][0]))
attempt("bytearray", lambda: socket.gethostbyname(bytearray(name.encode())))
attempt("byaddr numeric", lambda: socket.gethostbyaddr("127.1"))
"""
    )
    none = run_armed(code, "python-import=*\nnet=ALLOW|*|127.0.0.2|*|OUT\n", tmp_path)
    refused = "refused RuleConnectionRefusedError"
    assert none.lines == [
        f"byname {refused} [{name}]:* None",
        f"byname_ex {refused} [{name}]:* None",
        f"byaddr {refused} [{name}]:* None",
        f"getaddrinfo {refused} [{name}]:80 None",
        f"bytearray {refused} [?]:* None",
        f"byaddr numeric {refused} [127.0.0.1]:* None",
    ], none.stdout + none.stderr
    granted = run_armed(code, f"python-import=*\nnet=ALLOW|*|{name}|*|OUT\n", tmp_path)
    assert granted.lines[:4] == [
        "127.0.0.1",
        "byname ok",
        "['127.0.0.1']",
        "byname_ex ok",
    ], granted.stdout + granted.stderr


def test_only_tcp_udp_and_unix_sockets_are_created(tmp_path: Path) -> None:
    """SOCK_PACKET (10) in AF_INET gives a packet socket, an ICMP datagram socket pings: both
    refused with raw sockets; the flag bits do not hide a type; Unix seqpacket is allowed."""

    code = (
        PROBE
        + """
def make(*args):
    return lambda: socket.socket(*args).close()
flags = socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC
attempt("stream_flags", make(socket.AF_INET, socket.SOCK_STREAM | flags))
attempt("udp", make(socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_UDP))
attempt("unix_seqpacket", make(socket.AF_UNIX, socket.SOCK_SEQPACKET))
attempt("packet", make(socket.AF_INET, 10 | flags))
attempt("icmp", make(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))
attempt("inet_seqpacket", make(socket.AF_INET, socket.SOCK_SEQPACKET))
attempt("raw_flags", make(socket.AF_INET, socket.SOCK_RAW | flags, socket.IPPROTO_ICMP))
attempt("netlink", make(socket.AF_NETLINK, socket.SOCK_DGRAM))
"""
    )
    result = run_armed(code, "python-import=*\n", tmp_path)
    outcomes = [" ".join(line.split(" ")[:2]) for line in result.lines]
    assert outcomes[:3] == ["stream_flags ok", "udp ok", "unix_seqpacket ok"], result.stdout
    assert [line.split(" refused ")[-1].split(" ")[0] for line in result.lines[3:]] == [
        "RuleConnectionRefusedError"
    ] * 5, result.stdout + result.stderr


def test_unix_path_is_judged_up_to_its_first_nul(tmp_path: Path) -> None:
    """The kernel stops at the first NUL of an AF_UNIX path: so does the guard (a suffix that
    climbs back into the exposed directory does not make an unexposed socket allowed)."""

    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    servers = []
    for place in (project, outside):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(place / "sock"))
        server.listen(8)
        servers.append(server)
    code = (
        PROBE
        + """
def unix(path):
    def action():
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
        finally:
            s.close()
    return action
attempt("exposed", unix("sock\\0/../../outside/sock"))
attempt("unexposed", unix("../outside/sock\\0/../../project/x"))
attempt("unexposed bytes", unix(b"../outside/sock\\0/../../project/x"))
"""
    )
    try:
        result = run_armed(code, "python-import=*\nexpose-rw=.\n", project)
    finally:
        for server in servers:
            server.close()
    assert [line.split(" ")[:3] for line in result.lines] == [
        ["exposed", "ok"],
        ["unexposed", "refused", "RulePermissionError"],
        ["unexposed", "bytes", "refused"],
    ], result.stdout + result.stderr


def test_star_name_in_connect_is_refused_where_a_deny_applies(
    tmp_path: Path, listener: int
) -> None:
    """CPython resolves a name in ``connect`` before the audit event: the guard cannot pin the
    address used. A name allowed only by ``*`` is refused there when a DENY rule could apply;
    ``create_connection`` (resolve, then connect to the address) is judged exactly and works;
    without a DENY rule, or with a host-name rule, the name connects."""

    name = loopback_host_name()
    require(name, "no host name for 127.0.0.1 in /etc/hosts besides localhost")
    port = listener
    code = (
        PROBE
        + f"""
attempt("connect", connect({name!r}, {port}))
attempt("create_connection", lambda: socket.create_connection(({name!r}, {port}), 5).close())
attempt("localhost", connect("localhost", {port}))
"""
    )
    deny = "python-import=*\nnet=ALLOW|TCP|*|*|OUT\nnet=DENY|*|10.0.0.0/8|*|OUT\n"
    refused = run_armed(code, deny, tmp_path)
    assert refused.lines == [
        f"connect refused RuleConnectionRefusedError [{name}]:{port} None",
        "create_connection ok",
        "localhost ok",
    ], refused.stdout + refused.stderr
    for rules in (
        "python-import=*\nnet=ALLOW|TCP|*|*|OUT\n",
        deny + f"net=ALLOW|TCP|{name}|*|OUT\n",
    ):
        allowed = run_armed(code, rules, tmp_path)
        assert allowed.lines == ["connect ok", "create_connection ok", "localhost ok"], (
            rules + allowed.stdout + allowed.stderr
        )


def test_localhost_name_rules_apply_to_its_addresses(tmp_path: Path, listener: int) -> None:
    """``localhost`` needs no query, but a host-name rule naming it is still resolved and
    pinned: ``ALLOW localhost`` lets ``create_connection('localhost')`` in, ``DENY localhost``
    keeps it out (it used to be skipped both ways)."""

    port = listener
    code = PROBE + (
        f"attempt('cc', lambda: socket.create_connection(('localhost', {port}), 5).close())\n"
        f"attempt('direct', connect('localhost', {port}))\n"
    )
    allowed = run_armed(code, "python-import=*\nnet=ALLOW|TCP|localhost|*|OUT\n", tmp_path)
    assert allowed.lines == ["cc ok", "direct ok"], allowed.stdout + allowed.stderr
    deny = "net=DENY|*|localhost|*|OUT"
    denied = run_armed(code, f"python-import=*\nnet=ALLOW|TCP|*|*|OUT\n{deny}\n", tmp_path)
    assert denied.lines == [
        f"cc refused RuleConnectionRefusedError [127.0.0.1]:{port} {deny}",
        f"direct refused RuleConnectionRefusedError [127.0.0.1]:{port} {deny}",
    ], denied.stdout + denied.stderr


def test_server_lookup_is_judged_by_in_rules(tmp_path: Path) -> None:
    """The ``socket.getaddrinfo`` event has no flags: a lookup for a server (asyncio's
    ``create_server`` resolves with AI_PASSIVE) is allowed by an IN rule for that name."""

    name = loopback_host_name()
    require(name, "no host name for 127.0.0.1 in /etc/hosts besides localhost")
    code = f"""
import asyncio
async def main():
    server = await asyncio.get_running_loop().create_server(asyncio.Protocol, {name!r}, 0)
    print("listening", server.sockets[0].getsockname()[0])
    server.close()
    await server.wait_closed()
try:
    asyncio.run(main())
except OSError as exc:  # asyncio re-raises a bind refusal as its own OSError, from it
    import pysandboxes
    print("refused", [denial.target for denial in pysandboxes.sandbox_denials(exc)])
"""
    allowed = run_armed(
        code, f"python-import=*\npython-api=ALLOW:threads\nnet=ALLOW|TCP|{name}|*|IN\n", tmp_path
    )
    assert allowed.lines == ["listening 127.0.0.1"], allowed.stdout + allowed.stderr
    rules = f"python-import=*\npython-api=ALLOW:threads\nnet=ALLOW|TCP|{name}|*|OUT\n"
    refused = run_armed(code, rules, tmp_path)
    assert refused.lines == ["refused ['[127.0.0.1]:0']"], refused.stdout + refused.stderr
