"""SPEC §2.4, §2.5: the precedence rules in pysandboxes.policy.decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysandboxes.errors import ConfigError
from pysandboxes.policy.decide import (
    api_decision,
    build_environment,
    import_allowed,
    net_decision,
    path_access,
)
from pysandboxes.policy.model import EnvRule, Origin, Policy
from tests.unit.policy.util import load

# -- net ------------------------------------------------------------------------------------------


def test_deny_in_user_profile_beats_allow_in_main_file(tmp_path: Path) -> None:
    profile = tmp_path / "home" / ".config" / "py-sandboxes"
    profile.mkdir(parents=True)
    (profile / "user-py-sandboxes.profile").write_text(
        "net=DENY|*|10.0.0.0/8|*|OUT\nnet=DENY|*|172.16.0.0/12|*|OUT\n"
        "net=DENY|*|192.168.0.0/16|*|OUT\n"
    )
    # the ALLOW comes first in load order: order must not matter
    text = 'net=ALLOW|*|*|*|OUT\ninclude "~/.config/py-sandboxes/user-py-sandboxes.profile"\n'
    policy = load(tmp_path, text)
    allowed, rule = net_decision(policy, "TCP", None, "10.255.255.1", 80, "OUT")
    assert not allowed and rule is not None
    assert rule.text == "net=DENY|*|10.0.0.0/8|*|OUT"
    assert str(rule.origin) == "home/.config/py-sandboxes/user-py-sandboxes.profile(1)"
    allowed, rule = net_decision(policy, "TCP", "example.org", "203.0.113.9", 443, "OUT")
    assert allowed and rule is not None and rule.text == "net=ALLOW|*|*|*|OUT"


def test_net_matching(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "net=ALLOW|TCP|api.example.com|443|OUT\nnet=ALLOW|UDP|*|53|OUT\n"
        "net=ALLOW|TCP|0.0.0.0/32|8000|IN\nnet=ALLOW|TCP|2001:db8::/32|80-90|*\n"
        "net=DENY|*|2001:db8::5|*|*\n",
    )
    assert net_decision(policy, "TCP", "API.example.com.", "1.2.3.4", 443, "OUT")[0]
    assert not net_decision(policy, "TCP", "api.example.com", "1.2.3.4", 80, "OUT")[0]
    assert not net_decision(policy, "UDP", "api.example.com", "1.2.3.4", 443, "OUT")[0]
    assert not net_decision(policy, "TCP", "api.example.com", "1.2.3.4", 443, "IN")[0]
    assert not net_decision(policy, "TCP", "other.example.com", "1.2.3.4", 443, "OUT")[0]
    assert net_decision(policy, "udp", None, "9.9.9.9", 53, "out")[0]
    assert not net_decision(policy, "TCP", None, "9.9.9.9", 53, "OUT")[0]
    assert net_decision(policy, "TCP", None, "0.0.0.0", 8000, "IN")[0]
    assert not net_decision(policy, "TCP", None, "127.0.0.1", 8000, "IN")[0]
    assert net_decision(policy, "TCP", None, "2001:db8:1::1", 85, "IN")[0]
    allowed, rule = net_decision(policy, "TCP", None, "2001:DB8::5", 85, "OUT")
    assert not allowed and rule is not None and rule.action == "DENY"
    assert net_decision(policy, "TCP", None, "10.0.0.1", 1, "OUT") == (False, None)


def test_ipv4_mapped_ipv6_is_judged_as_ipv4(tmp_path: Path) -> None:
    policy = load(tmp_path, "net=ALLOW|*|*|*|OUT\nnet=DENY|*|10.0.0.0/8|*|OUT\n")
    assert not net_decision(policy, "TCP", None, "::ffff:10.1.2.3", 80, "OUT")[0]
    assert net_decision(policy, "TCP", None, "::ffff:11.1.2.3", 80, "OUT")[0]
    policy = load(tmp_path, "net=ALLOW|TCP|::ffff:192.0.2.1|80|OUT\n")
    assert net_decision(policy, "TCP", None, "192.0.2.1", 80, "OUT")[0]


def test_unresolved_and_bad_addresses(tmp_path: Path) -> None:
    policy = load(
        tmp_path, "net=ALLOW|TCP|api.example.com|443|OUT\nnet=ALLOW|TCP|192.0.2.0/24|443|OUT\n"
    )
    # before resolution only name rules can match
    assert net_decision(policy, "TCP", "api.example.com", "", 443, "OUT")[0]
    assert not net_decision(policy, "TCP", "other.org", "", 443, "OUT")[0]
    # an address that does not parse is refused, even under ALLOW *
    star = load(tmp_path, "net=ALLOW|*|*|*|*\n")
    assert net_decision(star, "TCP", None, "not-an-ip", 443, "OUT") == (False, None)
    assert net_decision(star, "TCP", None, "fe80::1%eth0", 443, "OUT")[0]


def test_no_net_rule_allows_nothing() -> None:
    assert net_decision(Policy(), "TCP", None, "127.0.0.1", 80, "OUT") == (False, None)


# -- python-api -----------------------------------------------------------------------------------


def test_function_rule_beats_category_rule(tmp_path: Path) -> None:
    profile = tmp_path / "home" / "user.profile"
    profile.write_text("python-api=DENY:process-exec\n")
    policy = load(tmp_path, 'include "~/user.profile"\npython-api=ALLOW:os.system\n')
    allowed, rule = api_decision(policy, "os.system", "process-exec")
    assert allowed and rule is not None and rule.text == "python-api=ALLOW:os.system"
    allowed, rule = api_decision(policy, "os.execv", "process-exec")
    assert not allowed and rule is not None and str(rule.origin) == "home/user.profile(1)"


def test_category_beats_star_and_deny_wins_ties(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "python-api=ALLOW:*\npython-api=DENY:native\npython-api=ALLOW:native\n"
        "python-api=ALLOW:threads\npython-api=DENY:ctypes.CDLL\npython-api=ALLOW:ctypes.CDLL\n",
    )
    assert api_decision(policy, "pickle.loads", "deserialization")[0]  # via *
    allowed, rule = api_decision(policy, "mmap.mmap", "native")
    assert not allowed and rule is not None and rule.action == "DENY"
    assert api_decision(policy, "threading.Thread.start", "threads")[0]
    allowed, rule = api_decision(policy, "ctypes.CDLL", "native")
    assert not allowed and rule is not None and rule.target == "ctypes.CDLL"
    deny_star = load(tmp_path, "python-api=DENY:*\npython-api=ALLOW:threads\n")
    assert api_decision(deny_star, "threading.Thread.start", "threads")[0]
    assert not api_decision(deny_star, "os.fork", "process-exec")[0]


def test_no_api_rule_denies_by_default() -> None:
    assert api_decision(Policy(), "os.system", "process-exec") == (False, None)


# -- imports --------------------------------------------------------------------------------------


def test_import_allowed(tmp_path: Path) -> None:
    policy = load(tmp_path, "python-import=json, csv\n")
    assert import_allowed(policy, "json") and import_allowed(policy, "csv")
    assert not import_allowed(policy, "socket")
    assert import_allowed(load(tmp_path, "python-import=*\n"), "socket")
    assert not import_allowed(Policy(), "json")


# -- paths ----------------------------------------------------------------------------------------


def test_longest_prefix_decides_and_ignore_beats_exposure(tmp_path: Path) -> None:
    for sub in ("proj/src", "proj/out", "proj/secrets"):
        (tmp_path / sub).mkdir(parents=True)
    policy = load(
        tmp_path,
        "expose-ro=./proj\nexpose-rw=./proj/out\nexpose-rw=./proj\nexpose-ro=./proj/src\n"
        "ignore=.env\nignore=*.pem\nignore=./proj/secrets\nignore=/nowhere/**/deep\n",
    )
    p = str(tmp_path / "proj")
    assert path_access(policy, f"{p}/src/a.py") == "ro"
    assert path_access(policy, f"{p}/src") == "ro"
    assert path_access(policy, f"{p}/out/x") == "rw"
    assert path_access(policy, f"{p}/other") == "rw"  # ro and rw on ./proj: rw
    assert path_access(policy, p + "/") == "rw"
    assert path_access(policy, f"{p}x") is None  # a prefix of the name is not a parent
    assert path_access(policy, f"{p}/.env") == "ignored"
    assert path_access(policy, f"{p}/src/.env") == "ignored"
    assert path_access(policy, f"{p}/src/.env/inner") == "ignored"
    assert path_access(policy, f"{p}/.envrc") == "rw"
    assert path_access(policy, f"{p}/out/key.pem") == "ignored"
    assert path_access(policy, f"{p}/secrets") == "ignored"
    assert path_access(policy, f"{p}/secrets/a/b") == "ignored"
    assert path_access(policy, "/nowhere/a/b/deep/x") == "ignored"
    assert path_access(policy, "/etc/passwd") is None
    # cached answers stay the same
    assert path_access(policy, f"{p}/out/key.pem") == "ignored"


def test_ignore_glob_stays_in_one_component(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    policy = load(tmp_path, "expose-ro=/\nignore=./d/*.key\nignore=[!a]?.txt\n")
    d = str(tmp_path / "d")
    assert path_access(policy, f"{d}/x.key") == "ignored"
    assert path_access(policy, f"{d}/sub/x.key") == "ro"
    assert path_access(policy, "/q/bc.txt") == "ignored"
    assert path_access(policy, "/q/ac.txt") == "ro"
    assert path_access(policy, "/") == "ro"
    odd = load(tmp_path, "expose-ro=/\nignore=[]x]\nignore=a[b\nignore=[^q]\n")
    assert [path_access(odd, p) for p in ("/]", "/x", "/a[b", "/^", "/y")] == [
        "ignored",
        "ignored",
        "ignored",
        "ignored",
        "ro",
    ]


# -- environment ----------------------------------------------------------------------------------


def test_environment_exact_beats_pattern_and_unenv_beats_all(tmp_path: Path) -> None:
    policy = load(
        tmp_path,
        "env=LANG=C.UTF-8\nenv=TOKEN=${TOKEN}\nenv=MODE=${MODE:-prod}\nenv=PAT_*=${PAT_*}\n"
        "env=PAT_FIXED=fixed\nenv=PAT_SECRET=${PAT_SECRET}\nunenv=PAT_SECRET\nenv=GONE=${GONE}\n"
        "env=EMPTY=${GONE}x\n",
    )
    host = {
        "TOKEN": "t",
        "PAT_A": "a",
        "PAT_FIXED": "host",
        "PAT_SECRET": "s",
        "HOME": "/root",
        "LANG": "fr_FR",
    }
    assert build_environment(policy, host) == {
        "LANG": "C.UTF-8",
        "TOKEN": "t",
        "MODE": "prod",
        "PAT_A": "a",
        "PAT_FIXED": "fixed",
        "EMPTY": "x",
    }


def test_more_fixed_characters_wins(tmp_path: Path) -> None:
    policy = load(tmp_path, "env=A_*=short\nenv=A_LONG_*=long\nenv=*=${*}\n")
    env = build_environment(policy, {"A_X": "1", "A_LONG_Y": "2", "OTHER": "3"})
    assert env == {"A_X": "short", "A_LONG_Y": "long", "OTHER": "3"}


def test_equal_specificity_tie_is_refused(tmp_path: Path) -> None:
    # The loader refuses the tie it can see...
    with pytest.raises(ConfigError):
        load(tmp_path, "env=A_*=x\nenv=*_B=y\n")
    # ...and build_environment refuses one it meets (a policy built by hand).
    origin = Origin(str(tmp_path / ".py-sandboxes"), 1)
    policy = Policy(env=(EnvRule("A_*", "x", origin), EnvRule("*_B", "y", origin)))
    assert build_environment(policy, {"A_C": "1"}) == {"A_C": "x"}
    with pytest.raises(ConfigError) as info:
        build_environment(policy, {"A_B": "1"})
    assert len(info.value.problems) == 2
    assert "equally specific patterns give A_B different values" in str(info.value)


def test_unenv_pattern(tmp_path: Path) -> None:
    policy = load(tmp_path, "env=*=${*}\nunenv=AWS_*, *TOKEN*\n")
    env = build_environment(policy, {"AWS_KEY": "k", "GH_TOKEN_X": "t", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}


def test_nothing_granted_nothing_passed() -> None:
    assert build_environment(Policy(), {"PATH": "/bin", "HOME": "/root"}) == {}


def test_private_decider_gives_the_same_answers(tmp_path: Path) -> None:
    from pysandboxes.policy.decide import _CACHE, compile_policy

    (tmp_path / "d").mkdir()
    policy = load(
        tmp_path,
        "net=ALLOW|TCP|*|443|OUT\npython-api=ALLOW:threads\npython-import=json\n"
        "expose-ro=./d\nenv=A=${A:-1}\n",
    )
    decider = compile_policy(policy)
    assert id(policy) not in _CACHE  # not shared through the module cache
    assert decider.net("TCP", None, "1.2.3.4", 443, "OUT") == net_decision(
        policy, "TCP", None, "1.2.3.4", 443, "OUT"
    )
    assert decider.api("threading.Thread.start", "threads")[0]
    assert decider.import_allowed("json") and not decider.import_allowed("os")
    assert decider.path(str(tmp_path / "d" / "f")) == "ro"
    assert decider.environment({}) == build_environment(policy, {}) == {"A": "1"}


def test_bad_template_in_a_hand_built_policy_is_a_config_error() -> None:
    policy = Policy(env=(EnvRule("A", "$oops", Origin("/p/r", 2)),))
    with pytest.raises(
        ConfigError, match=r"^/p/r\(2\): env=A=\$oops: '\$o\.\.\.' is not a variable"
    ):
        build_environment(policy, {})
