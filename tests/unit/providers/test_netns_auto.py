"""IN rules of every port, and of more ports than pasta can hold (issue 27, cause 10).

``net=ALLOW|*|*|*|*`` (everything granted) was refused under bwrap and unshare ("name the
ports"), and an IN range wider than pasta's open-file limit made pasta fail with "Too many
open files" after the sandbox was set up (one host socket per forwarded port). Under bwrap and
unshare (``every_port_ok``) the first now forwards nothing from the host, said at start (the
sandbox binds and serves itself; pasta 2023's ``auto`` forwards nothing here), and the second
is refused before anything runs, naming the rule. qemu makes one forward per port itself: the
first stays an error there.
"""

from __future__ import annotations

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy.model import ARG, Policy
from pysandboxes.policy.netrules import parse_net
from pysandboxes.providers import netns


def policy(*texts: str) -> Policy:
    return Policy(net=tuple(parse_net(text, ARG) for text in texts))


def test_every_port_from_every_address_is_said_not_forwarded() -> None:
    plan = netns.build_plan(policy("ALLOW|*|*|*|*"), every_port_ok=True)
    assert plan.tcp_in == () and plan.udp_in == ()
    assert any("pasta forwards none of them from the host" in w for w in plan.warnings)
    assert "policy drop" in plan.ruleset  # the input chain still filters
    with pytest.raises(ConfigError, match="name the ports"):
        netns.build_plan(policy("ALLOW|*|*|*|*"))  # qemu: one forward per port
    # A named port beside it is still forwarded.
    both = netns.build_plan(policy("ALLOW|*|*|*|*", "ALLOW|TCP|*|8000|IN"), every_port_ok=True)
    assert both.tcp_in == (("", ((8000, 8000),)),)


def test_more_ports_than_pasta_can_hold_are_refused_before_the_run() -> None:
    with pytest.raises(ConfigError, match="more than pasta can hold open"):
        netns.build_plan(policy("ALLOW|TCP|*|1000-60000|IN"), every_port_ok=True)
    narrow = netns.build_plan(policy("ALLOW|TCP|*|8000-8010|IN"), every_port_ok=True)
    assert narrow.tcp_in == (("", ((8000, 8010),)),)


def test_every_port_of_one_address_still_names_the_ports() -> None:
    with pytest.raises(ConfigError, match="name the ports"):
        netns.build_plan(policy("ALLOW|TCP|127.0.0.1|*|IN"), every_port_ok=True)
