"""Properties of the decisions: order never matters, a DENY always wins, nothing crashes."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pysandboxes.errors import ConfigError
from pysandboxes.policy import parse_text
from pysandboxes.policy.decide import (
    api_decision,
    build_environment,
    import_allowed,
    net_decision,
    path_access,
)
from pysandboxes.policy.model import API_CATEGORIES

_DIR = Path(tempfile.mkdtemp(prefix="pysb-decide-"))
atexit.register(shutil.rmtree, _DIR, True)
for _sub in ("a", "a/b", "c"):
    (_DIR / _sub).mkdir(parents=True, exist_ok=True)

_hosts = st.sampled_from(
    [
        "*",
        "10.0.0.0/8",
        "10.1.2.3",
        "::ffff:10.0.0.0/104",
        "example.org",
        "192.168.0.0/16",
        "2001:db8::/32",
        "0.0.0.0",
    ]
)
_ports = st.sampled_from(["*", "80", "443", "1-1024", "80,443"])
_net = st.builds(
    lambda a, p, h, ports, d: f"net={a}|{p}|{h}|{ports}|{d}",
    st.sampled_from(["ALLOW", "DENY"]),
    st.sampled_from(["TCP", "UDP", "*"]),
    _hosts,
    _ports,
    st.sampled_from(["OUT", "IN", "*"]),
)
_api = st.builds(
    lambda a, t: f"python-api={a}:{t}",
    st.sampled_from(["ALLOW", "DENY"]),
    st.sampled_from([*API_CATEGORIES[:3], "*", "os.system", "subprocess.Popen"]),
)
_path = st.builds(
    lambda k, p: f"{k}={p}",
    st.sampled_from(["expose-ro", "expose-rw", "ignore"]),
    st.sampled_from(["./a", "./a/b", "./c", "*.pem", "b", "./a/*"]),
)
_env = st.sampled_from(
    ["env=A=1", "env=B=${B}", "env=P_*=${P_*}", "env=P_X=x", "unenv=P_S*", "env=*=${*}"]
)
_imports = st.sampled_from(["python-import=json", "python-import=*", "python-import=os,sys"])
_rules = st.lists(_net | _api | _path | _env | _imports, max_size=10)

_queries = [
    ("TCP", None, "10.1.2.3", 80, "OUT"),
    ("TCP", "example.org", "93.184.216.34", 443, "OUT"),
    ("UDP", None, "::ffff:192.168.1.1", 53, "OUT"),
    ("TCP", None, "2001:db8::1", 80, "IN"),
    ("TCP", None, "0.0.0.0", 8000, "IN"),
]
_api_queries = [("os.system", "process-exec"), ("os.kill", "process-control"), ("x.y", "native")]
_paths = [str(_DIR / p) for p in ("a/x", "a/b/y", "a/k.pem", "c", "c/b/z", "d")]
_host_env = {"A": "h", "B": "b", "P_X": "px", "P_S1": "s", "Q": "q"}


def _answers(lines: list[str]) -> object:
    policy = parse_text("\n".join(lines) + "\n", str(_DIR / "r"), environ={}, cwd=str(_DIR))
    net = [net_decision(policy, *q)[0] for q in _queries]
    api = [api_decision(policy, *q)[0] for q in _api_queries]
    paths = [path_access(policy, p) for p in _paths]
    imports = [import_allowed(policy, n) for n in ("json", "os", "socket")]
    try:
        env: object = build_environment(policy, _host_env)
    except ConfigError:
        env = "conflict"
    return net, api, paths, imports, env, policy


@settings(max_examples=200, deadline=None)
@given(lines=_rules, seed=st.randoms(use_true_random=False))
def test_order_never_changes_a_decision(lines: list[str], seed: object) -> None:
    try:
        first = _answers(lines)
    except ConfigError:
        return  # e.g. equally specific env patterns: refused whatever the order
    shuffled = list(lines)
    seed.shuffle(shuffled)  # type: ignore[attr-defined]
    second = _answers(shuffled)
    assert first[:5] == second[:5]
    policy = first[5]
    # A matching DENY always wins, and the rule returned is one of the DENY rules.
    for query in _queries:
        allowed, rule = net_decision(policy, *query)  # type: ignore[arg-type]
        if rule is not None and rule.action == "DENY":
            assert not allowed
        if allowed:
            assert rule is not None and rule.action == "ALLOW"


@settings(max_examples=200, deadline=None)
@given(
    lines=_rules,
    ip=st.text(max_size=20) | st.ip_addresses().map(str),
    host=st.none() | st.text(max_size=20),
    port=st.integers(0, 65535),
    path=st.text(max_size=30).map(lambda t: "/" + t.replace("\0", "")),
)
def test_decisions_never_crash(
    lines: list[str], ip: str, host: str | None, port: int, path: str
) -> None:
    try:
        policy = _answers(lines)[5]
    except ConfigError:
        return
    allowed, _rule = net_decision(policy, "TCP", host, ip, port, "OUT")  # type: ignore[arg-type]
    assert isinstance(allowed, bool)
    assert path_access(policy, path) in ("rw", "ro", "ignored", None)  # type: ignore[arg-type]
