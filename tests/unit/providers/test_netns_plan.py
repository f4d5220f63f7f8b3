"""The network plan of the namespace providers: forwards, pinned names, nftables ruleset.

Pure functions over rules; the ruleset is also loaded into a real nft in a fresh user+network
namespace (``nft -c`` checks it without applying it).
"""

from __future__ import annotations

import itertools
import subprocess

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import ARG, Policy
from pysandboxes.policy.netrules import parse_net
from pysandboxes.providers import edge_rules, netns
from tests.helpers import require_tool


def policy(*texts: str) -> Policy:
    return Policy(net=tuple(parse_net(text, ARG) for text in texts))


def fake_dns(table: dict[str, list[str]]) -> netns.Resolver:
    def resolve(name: str) -> list[str]:
        if name not in table:
            raise OSError(f"{name}: unknown host")
        return table[name]

    return resolve


def test_port_ranges() -> None:
    assert edge_rules.merge([(5, 9), (1, 3), (4, 4), (20, 30)]) == ((1, 9), (20, 30))
    assert netns.subtract(((1, 100),), ((10, 20), (50, 50))) == ((1, 9), (21, 49), (51, 100))
    assert netns.subtract(((53, 53),), ((53, 53),)) == ()
    assert netns.port_text(((80, 80), (1000, 2000))) == "80,1000-2000"


def test_ruleset_order_deny_first_default_drop() -> None:
    plan = netns.build_plan(
        policy("ALLOW|*|*|443|OUT", "DENY|*|10.0.0.0/8|*|OUT", "ALLOW|TCP|*|8080|IN")
    )
    text = plan.ruleset
    out = text[text.index("chain output") : text.index("chain input")]
    assert "policy drop" in out and "policy drop" in text[text.index("chain input") :]
    deny = out.index("10.0.0.0/8")
    assert deny < out.index("established") < out.index("th dport { 443 } accept")
    assert out.index("th dport 53 ip daddr != 169.254.0.53 goto refuse") < deny
    # What is refused going out: a TCP reset (a refused connect fails at once), else a drop.
    assert out.strip().splitlines()[-2].strip() == "goto refuse"
    refuse = text[text.index("chain refuse") : text.index("chain output")]
    assert "meta l4proto tcp reject with tcp reset" in refuse and "drop" in refuse
    # A rule for any host needs the resolver; it is the only DNS destination.
    assert f"ip daddr {netns.RESOLVER} udp dport 53 accept" in out


def test_no_wildcard_rule_no_resolver() -> None:
    plan = netns.build_plan(policy("ALLOW|TCP|192.0.2.7|443|OUT"))
    assert "udp dport 53 accept" not in plan.ruleset
    assert "ip daddr 192.0.2.7/32 meta l4proto tcp th dport { 443 } accept" in plan.ruleset


def test_loopback_forwards_and_their_limits() -> None:
    plan = netns.build_plan(
        policy(
            "ALLOW|TCP|127.0.0.1|5432,6000-6010|OUT",
            "DENY|TCP|127.0.0.0/8|6005|OUT",
            "ALLOW|UDP|localhost|53,5353|OUT",
            "ALLOW|*|*|8080|IN",
            "ALLOW|TCP|*|443|OUT",  # any host: not the host's own services
        ),
        fake_dns({"localhost": ["127.0.0.1"]}),
    )
    assert plan.tcp_to_host == ((5432, 5432), (6000, 6004), (6006, 6010))
    assert plan.udp_to_host == ((5353, 5353),)  # 53 stays with the given resolver
    assert any("port 53" in w for w in plan.warnings)
    # "*" for IN: the program may bind any address, so every host address is forwarded.
    assert plan.tcp_in == (("", ((8080, 8080),)),) and plan.udp_in == plan.tcp_in
    assert ("localhost", "127.0.0.1") in plan.pinned


def test_loopback_forwards_are_per_ip_version() -> None:
    """pasta's forward of a port listens on the sandbox's 127.0.0.1 and ::1 alike: a port a
    rule grants on one loopback only is dropped on the other before loopback is let through
    (a rule for ::1 granted 127.0.0.1 too; a DENY of ::1 refused 127.0.0.1)."""

    plan = netns.build_plan(policy("ALLOW|TCP|::1|7000|OUT", "ALLOW|TCP|127.0.0.1|7001|OUT"))
    assert plan.tcp_to_host == ((7000, 7001),)
    out = plan.ruleset[plan.ruleset.index("chain output") : plan.ruleset.index("chain input")]
    v4_drop = 'oifname "lo" ip daddr 127.0.0.0/8 meta l4proto tcp th dport { 7000 } goto refuse'
    v6_drop = 'oifname "lo" ip6 daddr ::1 meta l4proto tcp th dport { 7001 } goto refuse'
    assert v4_drop in out and v6_drop in out
    assert out.index(v4_drop) < out.index('oifname "lo" accept')
    denied = netns.build_plan(
        policy("ALLOW|TCP|127.0.0.1|7000|OUT", "ALLOW|TCP|::1|7000|OUT", "DENY|TCP|::1|7000|OUT")
    )
    assert denied.tcp_to_host == ((7000, 7000),)
    assert "ip6 daddr ::1 meta l4proto tcp th dport { 7000 } goto refuse" in denied.ruleset
    assert "ip daddr 127.0.0.0/8 meta l4proto tcp" not in denied.ruleset


def test_deny_for_any_host_covers_the_loopback_forwards() -> None:
    plan = netns.build_plan(
        policy("ALLOW|TCP|127.0.0.1|7000,7001|OUT", "DENY|TCP|*|7000|OUT", "DENY|*|*|7001|IN")
    )
    assert plan.tcp_to_host == ((7001, 7001),)


def test_pinned_names_and_unresolvable_rules() -> None:
    plan = netns.build_plan(
        policy("ALLOW|TCP|api.example|443|OUT", "ALLOW|TCP|gone.example|443|OUT"),
        fake_dns({"api.example": ["192.0.2.10", "2001:db8::10"]}),
    )
    assert plan.pinned == (("api.example", "192.0.2.10"), ("api.example", "2001:db8::10"))
    assert "ip daddr 192.0.2.10/32" in plan.ruleset
    assert "ip6 daddr 2001:db8::10/128" in plan.ruleset
    assert any("gone.example does not resolve" in w for w in plan.warnings)
    with pytest.raises(ConfigError, match="DENY rule must be enforceable"):
        netns.build_plan(policy("DENY|*|gone.example|*|OUT"), fake_dns({}))


def test_unbounded_loopback_and_in_rules_are_refused() -> None:
    with pytest.raises(ConfigError, match="name the ports"):
        netns.build_plan(policy("ALLOW|TCP|127.0.0.1|*|OUT"))
    with pytest.raises(ConfigError, match="name the ports"):
        netns.build_plan(policy("ALLOW|TCP|*|*|IN"))


def test_in_host_is_the_bind_address() -> None:
    """SPEC §2.4: for IN, HOST is the local address the program binds. The wildcard bind is
    forwarded from every host address of its family, a loopback bind from the host's
    loopback, an address of the host from that address; the input chain matches the packet's
    destination (the bound address), never its source."""

    local = {"192.0.2.2"}.__contains__
    plan = netns.build_plan(
        policy(
            "ALLOW|TCP|0.0.0.0/32|8000|IN",
            "ALLOW|TCP|127.0.0.1|8001|IN",
            "ALLOW|UDP|::/128|5000|IN",
            "ALLOW|TCP|192.0.2.2|8002|IN",
            "ALLOW|TCP|198.51.100.7|8003|IN",  # not an address of this host
        ),
        is_local=local,
    )
    assert plan.tcp_in == (
        ("0.0.0.0", ((8000, 8000),)),
        ("127.0.0.1", ((8001, 8001),)),
        ("192.0.2.2", ((8002, 8002),)),
    )
    assert plan.udp_in == (("::", ((5000, 5000),)),)
    inbound = plan.ruleset[plan.ruleset.index("chain input") :]
    assert "saddr" not in inbound
    assert "meta nfproto ipv4 meta l4proto tcp th dport { 8000 } accept" in inbound
    assert "meta nfproto ipv6 meta l4proto udp th dport { 5000 } accept" in inbound
    assert "ip daddr 192.0.2.2/32 meta l4proto tcp th dport { 8002 } accept" in inbound
    assert "ip daddr 198.51.100.7/32" in inbound  # binding it is allowed, if it existed
    assert any("198.51.100.7/32" in w and "nothing is forwarded to it" in w for w in plan.warnings)
    assert plan.ipv6  # an IPv6 wildcard is forwarded
    argv = netns.pasta_argv(plan, 1, "/p")
    tcp = [argv[i + 1] for i, word in enumerate(argv) if word == "-t"]
    assert tcp == ["0.0.0.0/8000", "127.0.0.1/8001", "192.0.2.2/8002"]
    assert [argv[i + 1] for i, word in enumerate(argv) if word == "-u"] == ["::/5000"]


def test_in_forwards_minus_deny_and_wider_binds() -> None:
    local = {"192.0.2.2"}.__contains__
    plan = netns.build_plan(
        policy(
            "ALLOW|TCP|*|8000-8010|IN",
            "ALLOW|TCP|127.0.0.1|8005,9000|IN",
            "ALLOW|TCP|192.0.2.2|9000-9001|IN",
            "DENY|TCP|0.0.0.0/0|8003|IN",  # the IPv4 wildcard bind of 8003
            "DENY|TCP|192.0.2.2|9001|IN",
        ),
        is_local=local,
    )
    assert plan.tcp_in == (
        ("", ((8000, 8002), (8004, 8010))),
        ("127.0.0.1", ((9000, 9000),)),  # 8005 comes through "" already
        ("192.0.2.2", ((9000, 9000),)),
    )
    with pytest.raises(ConfigError, match="name the ports"):
        netns.build_plan(policy("ALLOW|TCP|0.0.0.0/32|*|IN"))
    # Port 0 (a bind to any free port) is never forwarded: pasta would bind a random port.
    zero = netns.build_plan(policy("ALLOW|TCP|127.0.0.1|0-2|IN", "ALLOW|UDP|127.0.0.1|0|OUT"))
    assert zero.tcp_in == (("127.0.0.1", ((1, 2),)),) and zero.udp_to_host == ()
    # An IN rule no host address reaches needs no port list: nothing is forwarded.
    quiet = netns.build_plan(policy("ALLOW|TCP|10.0.0.0/8|*|IN"), is_local=local)
    assert quiet.tcp_in == () and any("nothing is forwarded to it" in w for w in quiet.warnings)


def test_wildcard_out_announces_the_host_loopback_limit() -> None:
    from pysandboxes.providers import limits

    def network_notices(rules: Policy) -> list[str]:
        return [
            n.text for n in limits.namespace_notices(rules, "bwrap") if n.key.startswith("net.")
        ]

    (note,) = network_notices(policy("ALLOW|*|*|*|OUT", "ALLOW|TCP|*|443|OUT"))
    assert "'*' host does not reach this host's own services on its loopback" in note
    assert "'net=ALLOW|*|*|*|OUT' (<arg>)" in note
    assert limits.said_at_start("net.any-host-not-host-loopback", True)
    assert limits.said_at_start("net.any-host-not-host-loopback", False)
    assert network_notices(policy("ALLOW|TCP|127.0.0.1|5432|OUT", "ALLOW|TCP|*|80|IN")) == []


def test_pasta_command() -> None:
    plan = netns.build_plan(policy("ALLOW|TCP|127.0.0.1|5432|OUT", "ALLOW|TCP|*|8000|IN"))
    argv = netns.pasta_argv(plan, 1234, "/run/x.pid")
    pairs = dict(itertools.pairwise(argv))
    assert pairs["-T"] == "5432" and pairs["-U"] == "none"
    assert pairs["-t"] == "8000" and pairs["-u"] == "none"  # "*": every host address
    assert "--no-map-gw" in argv and pairs["--dns-forward"] == netns.RESOLVER
    assert argv[-1] == "1234"
    v4 = netns.build_plan(policy("ALLOW|TCP|127.0.0.1|5432|OUT", "ALLOW|TCP|0.0.0.0/32|80|IN"))
    assert "--ipv4-only" in netns.pasta_argv(v4, 1, "/p")  # no rule needs IPv6
    wide = netns.build_plan(policy("ALLOW|TCP|*|443|OUT"))
    assert "--ipv4-only" not in netns.pasta_argv(wide, 1, "/p")
    v6 = netns.build_plan(policy("ALLOW|TCP|2001:db8::1|443|OUT"))
    assert "--ipv4-only" not in netns.pasta_argv(v6, 1, "/p")


def test_ruleset_is_valid_nftables() -> None:
    require_tool("nft", "nftables")
    require_tool("unshare", "util-linux")
    plan = netns.build_plan(
        policy(
            "ALLOW|*|*|443|OUT",
            "DENY|*|10.0.0.0/8|*|*",
            "ALLOW|UDP|2001:db8::/32|1000-2000,3000|OUT",
            "ALLOW|TCP|127.0.0.1|5432|OUT",
            "ALLOW|TCP|*|8080|IN",
            "ALLOW|TCP|0.0.0.0/32|8000|IN",
            "ALLOW|UDP|::/128|5000|IN",
            "DENY|TCP|192.0.2.0/24|8001|IN",
        )
    )
    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--net", "nft", "-c", "-f", "-"],
        input=plan.ruleset,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr + plan.ruleset


def test_a_port_the_program_binds_on_loopback_is_not_forwarded_to_the_host() -> None:
    """pasta listens on the sandbox's 127.0.0.1 and ::1 for each ``-T``/``-U`` forward: a port
    an IN rule lets the program bind there stays the program's (issue 11 point 10); a loopback
    connection to it goes to the program's own server. Port 0 forwards nothing."""

    plan = netns.build_plan(
        policy(
            "ALLOW|TCP|127.0.0.1|5432,8000,8001|OUT",
            "ALLOW|TCP|127.0.0.1|8000|IN",
            "ALLOW|TCP|0.0.0.0/32|8001|IN",
            "ALLOW|TCP|192.0.2.9|5432|IN",  # another address: pasta's loopback socket is apart
            "ALLOW|UDP|127.0.0.1|9000,9001|OUT",
            "ALLOW|UDP|*|9001|IN",
            "ALLOW|TCP|127.0.0.1|0|IN",
        ),
        is_local=lambda address: False,
    )
    assert plan.tcp_to_host == ((5432, 5432),)
    assert plan.udp_to_host == ((9000, 9000),)
    said = [w for w in plan.warnings if "own server" in w]
    assert len(said) == 2 and "8000,8001" in said[0] and "9001" in said[1]
    argv = netns.pasta_argv(plan, 1, "/pid")
    assert argv[argv.index("-T") + 1] == "5432" and argv[argv.index("-U") + 1] == "9000"
    # Nothing for port 0 in either direction, and no OUT rule: no forward at all.
    alone = netns.build_plan(policy("ALLOW|TCP|127.0.0.1|0|IN"))
    assert alone.tcp_to_host == () and alone.tcp_in == () and alone.warnings == ()


def test_a_deny_of_loopback_on_own_ports_is_announced_without_the_python_layer() -> None:
    """The sandbox's loopback is free in the ruleset (pasta's splice of the host's connections
    to the program's servers goes that way): a DENY of loopback on ports the program may bind
    there is the Python layer's to enforce, and said at start when it is off."""

    from pysandboxes.policy.model import Setting

    texts = ("ALLOW|TCP|127.0.0.1|0,8000|IN", "DENY|TCP|127.0.0.1|8000,9000|OUT")
    rules = tuple(parse_net(text, ARG) for text in texts)
    off = netns.build_plan(Policy(net=rules, py_sandbox=Setting(False)))
    said = [w for w in off.warnings if "nothing refuses them" in w]
    assert len(said) == 1 and "port(s) 8000" in said[0], off.warnings
    on = netns.build_plan(Policy(net=rules, py_sandbox=Setting(True)))
    assert not any("refuses them" in w for w in on.warnings)
    # A DENY of every port, beside a port-0 server: the ephemeral range is the program's.
    everything = (parse_net("DENY|TCP|*|*|OUT", ARG), parse_net("ALLOW|TCP|*|0|IN", ARG))
    plan = netns.build_plan(Policy(net=everything, py_sandbox=Setting(False)))
    assert any("nothing refuses them" in w for w in plan.warnings), plan.warnings


def test_rules_naming_hosts_get_the_edge_proxy_and_its_redirect() -> None:
    """issue 32: a TCP OUT rule naming a host starts the edge proxy; the sandbox's TCP on the
    named rules' ports is redirected to it (per-family nat tables), loopback and DNS are not;
    the port avoids every port a rule names."""

    require_tool("nft", "nftables")
    require_tool("unshare", "util-linux")
    dns = fake_dns({"api.example.com": ["192.0.2.7"], "evil.example": ["192.0.2.66"]})
    plan = netns.build_plan(
        policy(
            "ALLOW|TCP|api.example.com|443,3128|OUT",
            "DENY|TCP|evil.example|*|OUT",
            "ALLOW|TCP|10.1.2.3|5432|OUT",
        ),
        resolve=dns,
    )
    assert plan.edge_port == 3129  # 3128 is a rule's port
    assert "table ip pysb_edge" in plan.ruleset and "table ip6 pysb_edge" in plan.ruleset
    assert 'meta l4proto tcp redirect to :3129 comment "python-sb edge proxy"' in plan.ruleset
    assert "ip daddr 127.0.0.1 tcp dport 3129 accept" in plan.ruleset
    only_named = netns.build_plan(policy("ALLOW|TCP|api.example.com|443|OUT"), resolve=dns)
    assert "tcp dport { 443 } redirect to :3128" in only_named.ruleset
    assert netns.build_plan(policy("ALLOW|TCP|10.1.2.3|443|OUT")).edge_port is None
    assert (
        netns.build_plan(policy("ALLOW|UDP|api.example.com|53|OUT"), resolve=dns).edge_port is None
    )
    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--net", "nft", "-c", "-f", "-"],
        input=plan.ruleset,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr + plan.ruleset
    assert edge_rules.proxy_env(3128)["HTTPS_PROXY"] == "http://127.0.0.1:3128"
    guard = edge_rules.edge_guard_rule(policy("ALLOW|TCP|api.example.com|443|OUT"))
    assert guard is not None and guard.text == "net=ALLOW|TCP|127.0.0.1|3128|OUT"
