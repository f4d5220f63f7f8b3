"""Which enforcement each ``net=`` rule gets, per provider (issue 32: ``--explain`` says it).

Pure and platform-neutral: ``--explain`` prints these lines on any machine, and
``docs/network.md`` holds the same table. The mechanisms themselves live in
``providers/netns.py`` (nftables, pasta), ``providers/edge_proxy.py`` (host names at the edge),
``providers/landlock.py`` (TCP ports) and ``guard/network.py`` (the Python layer).
"""

from __future__ import annotations

from pysandboxes.policy.model import NetRule, Policy

#: The providers whose TCP under host-name rules passes the edge proxy.
EDGE_PROVIDERS = ("bwrap", "unshare", "qemu")
NAMESPACE = ("bwrap", "unshare", "qemu")


def _tcp_out(rule: NetRule) -> bool:
    return rule.proto in ("TCP", "*") and rule.direction in ("OUT", "*")


def edge_ports_named(policy: Policy) -> bool:
    """Whether a TCP ``OUT`` rule names a host: the edge proxy runs (namespace providers)."""

    return any(rule.is_name and _tcp_out(rule) for rule in policy.net)


def enforcement(rule: NetRule, provider: str, policy: Policy) -> str:
    """One phrase: who enforces ``rule`` under ``provider`` (with the Python layer's part)."""

    layer = bool(policy.py_sandbox.value)
    python = "the Python layer too" if layer else ""
    if provider in NAMESPACE:
        parts: list[str] = []
        if rule.direction in ("IN", "*"):
            parts.append("IN: nftables input chain + pasta forwards of the host's port")
        if _tcp_out(rule):
            if rule.is_name:
                parts.append(
                    "TCP OUT: the edge proxy (host name from CONNECT, Host or TLS server "
                    "name, resolved on the host at each connection; DENY by name wins)"
                )
            elif edge_ports_named(policy) and _covered_by_edge(rule, policy):
                parts.append(
                    "TCP OUT: the edge proxy by address on the ports of rules naming hosts, "
                    "the nftables output chain on the others"
                )
            else:
                parts.append("TCP OUT: nftables output chain (by address, DENY first)")
        if rule.proto in ("UDP", "*") and rule.direction in ("OUT", "*"):
            parts.append(
                "UDP OUT: nftables output chain"
                + (" (the name's addresses pinned at start)" if rule.is_name else "")
            )
        if python:
            parts.append(python)
        return "; ".join(parts)
    if provider == "landlock":
        if rule.proto == "UDP":
            return python or "nothing (Landlock filters TCP only; UDP needs the Python layer)"
        kernel = "Landlock: TCP by port only (any host on that port)"
        if rule.is_name and rule.action == "ALLOW":
            kernel += "; the host name is not judged by the kernel"
        if rule.is_name and _tcp_out(rule) and layer:
            kernel += (
                "; the edge proxy on the host's loopback judges the name for clients that "
                "honour the proxy variables"
            )
        return "; ".join(p for p in (kernel, python) if p)
    return python or "nothing (no kernel network filter under this provider)"


def _covered_by_edge(rule: NetRule, policy: Policy) -> bool:
    """Whether an address rule's TCP ports overlap the ports the edge proxy takes (those of
    the rules naming hosts): then the proxy judges it (by address)."""

    named = [r for r in policy.net if r.is_name and _tcp_out(r)]
    if rule.ports is None:
        return True
    for other in named:
        if other.ports is None:
            return True
        for lo, hi in rule.ports:
            for olo, ohi in other.ports:
                if lo <= ohi and olo <= hi:
                    return True
    return False


def explain_lines(policy: Policy, provider: str) -> list[str]:
    """``  net rule 'TEXT' (ORIGIN): ENFORCEMENT`` for each ``net=`` rule."""

    return [
        f"  net rule '{rule.text}' ({rule.origin}): {enforcement(rule, provider, policy)}"
        for rule in policy.net
    ]
