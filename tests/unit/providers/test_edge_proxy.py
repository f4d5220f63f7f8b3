"""The edge proxy's pure parts (issue 32): what a connection names, and how it is judged."""

from __future__ import annotations

import contextlib
import ssl
import struct

from pysandboxes.guard.network import build_rules
from pysandboxes.policy.model import ARG, Policy
from pysandboxes.policy.netrules import parse_net
from pysandboxes.providers import edge_proxy as ep


def client_hello(name: str | None) -> bytes:
    """A real ClientHello from the ssl module (memory BIOs, no network)."""

    context = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=name)
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def test_server_name_of_a_real_client_hello() -> None:
    hello = client_hello("API.Example.com")
    assert ep.tls_server_name(hello) == "api.example.com"
    assert ep.tls_server_name(hello[:20]) is False  # not whole yet
    assert ep.tls_server_name(b"GET / HTTP/1.1\r\n") is False


def test_a_hello_naming_no_server() -> None:
    context = ssl.create_default_context()
    context.check_hostname = False
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing)
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    assert ep.tls_server_name(outgoing.read()) is None
    garbage = b"\x16\x03\x01" + struct.pack("!H", 4) + b"\x01\x00\x00\x00"
    assert ep.tls_server_name(garbage) is None


def test_authorities_and_heads() -> None:
    assert ep.split_authority("Example.com:8443", 443) == ("example.com", 8443)
    assert ep.split_authority("example.com", 80) == ("example.com", 80)
    assert ep.split_authority("[2001:db8::1]:443", 80) == ("2001:db8::1", 443)
    lines, rest = ep.split_head(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\nbody") or ([], b"")
    assert ep.header(lines, "host") == "a.test" and rest == b"body"
    assert ep.split_head(b"GET / HTTP/1.1\r\nHost: a") is None


def judge(*rules: str, dns: dict[str, list[str]] | None = None) -> ep.Judge:
    policy = Policy(net=tuple(parse_net(rule, ARG) for rule in rules))
    table = dns or {}
    return ep.Judge(build_rules(policy), resolve=lambda name: table[name])


def test_judging_names_and_addresses() -> None:
    j = judge(
        "ALLOW|TCP|api.example.com|443|OUT",
        "ALLOW|TCP|*|8443|OUT",
        "DENY|TCP|evil.example|*|OUT",
        "DENY|TCP|10.0.0.0/8|*|OUT",
        dns={
            "api.example.com": ["192.0.2.7"],
            "inner.example": ["10.1.1.1"],
            "lo.example": ["127.0.0.1"],
        },
    )
    assert j.name("api.example.com", 443).address == "192.0.2.7"
    refused = j.name("other.example", 443)  # never resolved (no table entry)
    assert refused.address is None and refused.rule is None
    deny = j.name("evil.example", 8443)
    assert deny.address is None and deny.rule == "net=DENY|TCP|evil.example|*|OUT"
    inner = j.name("inner.example", 8443)  # allowed by '*', but its address is denied
    assert inner.address is None and inner.rule == "net=DENY|TCP|10.0.0.0/8|*|OUT"
    loop = j.name("lo.example", 8443)  # '*' never reaches the host's loopback
    assert loop.address is None and "loopback" in (loop.reason or "")
    assert j.address("192.0.2.7", 443).address is None  # the name's address alone: not granted
    message = ep.refusal_message("other.example", 443, refused)
    assert message.startswith("Connection to [other.example]:443 DENIED: no net= rule allows it;")
    assert "retrying another way is refused too" in message


def test_secret_hosts_are_compared_as_rules_compare_names() -> None:
    """A ``secret=`` host matches what a connection names in any case and with a final dot, as
    ``net=`` matching does (the TLS server name, ``CONNECT`` and ``Host`` alike): otherwise
    the proxy would pass the placeholder on to the very host the secret is for."""

    import socket

    assert ep.tls_server_name(client_hello("Granted.Test.")) == "granted.test"
    assert ep.split_authority("GRANTED.test.:8443", 443) == ("granted.test", 8443)
    assert ep.host_key("Granted.TEST.") == "granted.test"  # the rules' own form (netrules)
    secret = {"name": "T", "hosts": ["Granted.Test."], "header": "Authorization"}
    secret |= {"placeholder": "pysb-secret-T-x", "value": "real"}
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        proxy = ep.Proxy(listener, judge("ALLOW|TCP|granted.test|443|OUT"), secrets=[secret])
        proxy.server_context = object()  # as with tls= (a certificate): terminate TLS here
        for named in ("granted.test", "GRANTED.Test", "granted.test."):
            assert proxy.terminates(named), named
        assert not proxy.terminates("refused.test")
        head = proxy._substitute(
            "Granted.TEST", ["GET / HTTP/1.1", "authorization: pysb-secret-T-x"]
        )
        assert b"authorization: real\r\n" in head
