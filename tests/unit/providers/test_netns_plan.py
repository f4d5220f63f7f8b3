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
from pysandboxes.providers import netns
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
    assert netns.merge([(5, 9), (1, 3), (4, 4), (20, 30)]) == ((1, 9), (20, 30))
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
    assert out.index("th dport 53 ip daddr != 169.254.0.53 drop") < deny
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
    assert plan.tcp_in == ((8080, 8080),) and plan.udp_in == ((8080, 8080),)
    assert ("localhost", "127.0.0.1") in plan.pinned


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


def test_in_rule_for_another_peer_warns() -> None:
    plan = netns.build_plan(policy("ALLOW|TCP|192.0.2.5|80|IN"))
    assert plan.tcp_in == ()
    assert any("host's loopback only" in w for w in plan.warnings)


def test_pasta_command() -> None:
    plan = netns.build_plan(policy("ALLOW|TCP|127.0.0.1|5432|OUT", "ALLOW|TCP|*|8000|IN"))
    argv = netns.pasta_argv(plan, 1234, "/run/x.pid")
    pairs = dict(itertools.pairwise(argv))
    assert pairs["-T"] == "5432" and pairs["-U"] == "none"
    assert pairs["-t"] == "127.0.0.1/8000" and pairs["-u"] == "none"
    assert "--no-map-gw" in argv and pairs["--dns-forward"] == netns.RESOLVER
    assert argv[-1] == "1234"
    assert "--ipv4-only" in argv  # no rule needs IPv6
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
