"""``--explain``'s line per ``net=`` rule: which enforcement it gets under each provider."""

from __future__ import annotations

from pysandboxes.policy.model import ARG, Policy
from pysandboxes.policy.netrules import parse_net
from pysandboxes.providers import net_enforcement as ne


def policy(*texts: str) -> Policy:
    return Policy(net=tuple(parse_net(text, ARG) for text in texts))


def test_names_go_to_the_edge_proxy_under_namespace_providers() -> None:
    p = policy("ALLOW|TCP|example.com|443|OUT", "ALLOW|UDP|10.0.0.1|53|OUT")
    name, udp = p.net
    for provider in ("bwrap", "unshare", "qemu"):
        assert "TCP OUT: the edge proxy (host name" in ne.enforcement(name, provider, p)
        assert ne.enforcement(udp, provider, p).startswith("UDP OUT: nftables output chain")


def test_address_rule_sharing_a_named_port_is_judged_by_the_proxy_there() -> None:
    p = policy("ALLOW|TCP|example.com|443|OUT", "DENY|TCP|10.0.0.0/8|*|OUT")
    assert "the edge proxy by address" in ne.enforcement(p.net[1], "bwrap", p)
    alone = policy("DENY|TCP|10.0.0.0/8|*|OUT")
    assert "nftables output chain (by address" in ne.enforcement(alone.net[0], "bwrap", alone)


def test_landlock_filters_ports_only() -> None:
    p = policy("ALLOW|TCP|example.com|443|OUT")
    text = ne.enforcement(p.net[0], "landlock", p)
    assert "TCP by port only" in text and "not judged by the kernel" in text
    assert ne.explain_lines(p, "landlock")[0].startswith(
        "  net rule 'net=ALLOW|TCP|example.com|443|OUT' (<arg>): "
    )
